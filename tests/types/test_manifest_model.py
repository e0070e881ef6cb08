"""The manifest of what a run measured (issue 28, item 3): stable hashes, differences, old headers,
and the package a server command starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from callbench.mcp.client import McpServerSpec, McpTool
from callbench.mcp.provenance import PackageRef, command_package
from callbench.suites.resolve import load_suite
from callbench.tools.manifest import mcp_manifest, registry_manifest
from callbench.types.hashing import sha256_of
from callbench.types.manifest import ToolSourceManifest, diff_manifests, mcp_tool_payload, tool_hashes
from callbench.types.records import ResumeEvent, RunHeader

SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["q"],
}
HASH_SCRIPT = """
import json, sys
from callbench.types.manifest import mcp_tool_payload, tool_hashes
schema = json.loads(sys.argv[1])
payload = mcp_tool_payload("search", "Search", schema, annotations={"readOnlyHint": True})
print(json.dumps(tool_hashes([payload])))
"""


def test_tool_hashes_are_canonical_and_the_same_in_another_process() -> None:
    reordered = {
        "required": ["q"],
        "properties": {"n": {"type": "integer"}, "q": {"type": "string"}},
        "type": "object",
    }
    here = tool_hashes([mcp_tool_payload("search", "Search", SCHEMA, annotations={"readOnlyHint": True})])
    assert here == tool_hashes(
        [mcp_tool_payload("search", "Search", reordered, annotations={"readOnlyHint": True})]
    )
    for seed in ("1", "4242"):  # another interpreter, another hash seed, the schema's keys in another order
        done = subprocess.run(
            [sys.executable, "-c", HASH_SCRIPT, json.dumps(reordered)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        hashes, listing = json.loads(done.stdout)
        assert (hashes, listing) == (here[0], here[1])
    assert len(here[1]) == 64 and here[0]["search"] != here[1]


def test_every_listed_field_counts_and_the_listing_hash_sees_the_order() -> None:
    base = mcp_tool_payload("search", "Search", SCHEMA)
    variants = [
        mcp_tool_payload("search", "Search the web", SCHEMA),
        mcp_tool_payload("search", "Search", {**SCHEMA, "required": []}),
        mcp_tool_payload("search", "Search", SCHEMA, title="Search"),
        mcp_tool_payload("search", "Search", SCHEMA, output_schema={"type": "object"}),
        mcp_tool_payload("search", "Search", SCHEMA, annotations={"destructiveHint": True}),
    ]
    hashes = {tool_hashes([p])[0]["search"] for p in [base, *variants]}
    assert len(hashes) == 1 + len(variants)
    other = mcp_tool_payload("fetch", "Fetch", SCHEMA)
    one, two = tool_hashes([base, other]), tool_hashes([other, base])
    assert one[0] == two[0] and one[1] != two[1]


def test_a_registry_entry_reuses_the_registry_and_contract_hashes() -> None:
    suite = load_suite("starter")
    entry = registry_manifest(
        suite.name, suite.source, suite.registry, package="callbench", package_version="1"
    )
    assert entry.kind == "suite" and entry.listing_hash == suite.registry.hash
    assert list(entry.tools) == sorted(suite.registry.names())
    assert all(entry.tools[c.name] == sha256_of(c.hash_payload()) for c in suite.registry)
    assert entry.package_label() == "callbench==1 (plugin)"


def _entry(version: str | None, tools: dict[str, str], **fields: object) -> ToolSourceManifest:
    return ToolSourceManifest(
        kind="mcp",
        source="stdio:server",
        suites=["s"],
        server_name="srv",
        server_version=version,
        protocol_version="2025-06-18",
        tools=tools,
        listing_hash=sha256_of(list(tools.items())),
        **fields,  # type: ignore[arg-type]
    )


def test_the_difference_names_the_server_and_each_tool_added_removed_or_changed() -> None:
    a = _entry("1.0.0", {"echo": "e1", "lookup": "l1", "gone": "g1"})
    b = _entry(
        "2.0.0", {"echo": "e1", "lookup": "l2", "new": "n1"}, package="srv-pkg", package_version="2.0.0"
    )
    diff = diff_manifests([a], [b])
    assert diff.differs and not diff.only_a and not diff.only_b
    [source] = diff.sources
    assert source.changed == ["lookup"] and source.added == ["new"] and source.removed == ["gone"]
    assert ("server version", "1.0.0", "2.0.0") in source.fields
    assert ("package", None, "srv-pkg") in source.fields
    assert source.summary() == (
        "suite 's': server version 1.0.0 -> 2.0.0; package unknown -> srv-pkg; "
        "package version unknown -> 2.0.0; tools changed: lookup; tools added: new; tools removed: gone"
    )
    lines = diff.lines()
    assert (
        lines[0] == "suite 's':" and "  tools changed: lookup" in lines and lines[-1].startswith("  listing ")
    )


def test_same_tools_in_another_order_and_unknown_versions() -> None:
    a = _entry(None, {"x": "1", "y": "2"})
    b = _entry(None, {"y": "2", "x": "1"})
    assert [s.items() for s in diff_manifests([a], [b]).sources] == [["the same tools in another order"]]
    assert not diff_manifests([a], [a.model_copy()]).differs
    assert diff_manifests([a], [_entry("1.0", a.tools)]).sources[0].items() == [
        "server version unknown -> 1.0"
    ]


def test_the_command_a_server_was_started_with_is_not_compared_and_suites_are_matched_by_name() -> None:
    a = _entry("1", {"x": "1"})
    moved = a.model_copy(update={"source": "stdio:/elsewhere/server"})
    assert not diff_manifests([a], [moved]).differs
    other = a.model_copy(update={"suites": ["t"]})
    diff = diff_manifests([a], [other])
    assert diff.only_a == ["s"] and diff.only_b == ["t"] and not diff.sources
    assert diff.lines("A", "B") == ["only in A: suites s", "only in B: suites t"]


def test_an_old_run_json_without_a_manifest_still_loads() -> None:
    fixture = Path(__file__).parents[1] / "harness" / "fixtures" / "run_schema1" / "run.json"
    header = RunHeader.model_validate_json(fixture.read_text())
    assert header.tool_sources == [] and all(r.tool_sources is None for r in header.resumes)
    assert (
        "tool_sources" not in ResumeEvent(at="now", callbench_version="1").model_dump()
    )  # none: not written


def test_an_mcp_entry_from_a_listing() -> None:
    tools = [
        McpTool(name="echo", description="Echo", input_schema=SCHEMA, annotations={"readOnlyHint": True})
    ]
    spec = McpServerSpec.parse("stdio:npx -y @acme/echo-server@1.2.3 --flag")
    entry = mcp_manifest(spec, ("echo-server", "1.2.3", "2025-06-18"), tools, suites=["x"])
    assert entry.server_label() == "echo-server@1.2.3" and entry.suites == ["x"]
    assert entry.package_label() == "@acme/echo-server==1.2.3 (npx)"
    assert entry.one_line().startswith(
        "echo-server@1.2.3, protocol 2025-06-18, package @acme/echo-server==1.2.3"
    )
    http = mcp_manifest(McpServerSpec.parse("http://127.0.0.1:9/mcp"), (None, None, None), tools)
    assert http.package is None and http.one_line().startswith(
        "unknown@unknown, protocol unknown, package unknown"
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            ["npx", "-y", "@modelcontextprotocol/server-memory@2025.8.4"],
            ("@modelcontextprotocol/server-memory", "2025.8.4", "npx"),
        ),
        (
            ["npx", "-y", "@modelcontextprotocol/server-memory"],
            ("@modelcontextprotocol/server-memory", None, "npx"),
        ),
        (["npx", "--package", "srv@1.0.0", "srv-cmd"], ("srv", "1.0.0", "npx")),
        (["uvx", "mcp-server-git==2025.1.14", "--repository", "."], ("mcp-server-git", "2025.1.14", "uvx")),
        (["uvx", "--from", "mcp-server-git@1.0", "mcp-server-git"], ("mcp-server-git", "1.0", "uvx")),
        (["uv", "tool", "run", "mcp-server-fetch"], ("mcp-server-fetch", None, "uvx")),
        (
            ["pipx", "run", "--spec", "mcp-server-git==1.2", "mcp-server-git"],
            ("mcp-server-git", "1.2", "pipx"),
        ),
        (["npx", "./local-folder"], None),
        (["node", "server.js"], None),
        ([sys.executable, str(Path(__file__)), "serve"], None),  # a script: its package is not known
        (["definitely-not-a-command-here"], None),
    ],
)
def test_the_package_a_command_starts(
    command: list[str], expected: tuple[str, str | None, str] | None
) -> None:
    found = command_package(command)
    assert (None if found is None else (found.name, found.version, found.via)) == expected


def test_python_m_and_console_scripts_of_this_python_name_their_distribution() -> None:
    from importlib import metadata

    version = metadata.version("pytest")
    assert command_package([sys.executable, "-m", "pytest"]) == PackageRef("pytest", version, "python -m")
    script = Path(sys.executable).parent / "pytest"
    if script.exists():
        assert command_package([str(script)]) == PackageRef("pytest", version, "console script")
    assert command_package([sys.executable, "-m", "no_such_module_here"]) is None


def test_node_running_a_file_of_an_installed_npm_package_names_that_package(tmp_path: Path) -> None:
    scoped = tmp_path / "node_modules" / "@acme" / "srv"
    (scoped / "dist").mkdir(parents=True)
    (scoped / "package.json").write_text(json.dumps({"name": "@acme/srv", "version": "2026.1.2"}))
    plain = tmp_path / "node_modules" / "tool"
    plain.mkdir()
    (plain / "package.json").write_text(json.dumps({"name": "tool", "version": "1.0.0"}))
    impostor = tmp_path / "node_modules" / "other"
    impostor.mkdir()
    (impostor / "package.json").write_text(json.dumps({"name": "not-other", "version": "9"}))
    node = ["node", "--no-warnings"]
    found = command_package([*node, str(scoped / "dist" / "index.js")])
    assert found == PackageRef("@acme/srv", "2026.1.2", "node")
    assert command_package(["node", str(plain / "cli.js")]) == PackageRef("tool", "1.0.0", "node")
    assert command_package(["node", str(impostor / "cli.js")]) is None  # its package.json names another
    assert command_package(["node", str(tmp_path / "node_modules" / "gone" / "x.js")]) is None
