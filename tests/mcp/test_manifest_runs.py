"""Manifests of real runs (issue 28, item 3): what ``run.json`` records of a live server, what
``show`` prints, ``compare`` and ``manifest diff`` on two versions of one server, a resume against a
server that changed, and ``mcp-git``'s package."""

from __future__ import annotations

import json
import shutil
import sys
from importlib import metadata
from pathlib import Path

import pytest

import callbench
from callbench.cli.main import main
from callbench.harness.runfolder import read_header, read_run
from callbench.report.overview import config_rows, config_warnings
from callbench.types.manifest import ToolSourcesChanged

HERE = Path(__file__).parent
LOOSE = f"mcp:stdio:{sys.executable} {HERE / 'client_servers.py'} loose"


def versioned(version: str) -> str:
    return f"mcp:stdio:{sys.executable} {HERE / 'versioned_server.py'} {version}"


def echo_suite(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "echo.yaml"
    case = {
        "id": "echo_hi",
        "instruction": "Say hi.",
        "expected": [{"tool": "echo", "arguments": {"message": "hi"}}],
    }
    path.write_text(json.dumps({"name": "echo-mcp", "cases": [case]}))
    return path


def run_on(tools: str, root: Path, out: str) -> Path:
    callbench.run(str(echo_suite(root)), "oracle", tools=tools, out_dir=root / out, progress="quiet")
    return root / out


def test_a_run_on_a_live_server_records_and_shows_its_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = run_on(LOOSE, tmp_path, "run")
    [source] = read_header(run_dir).tool_sources
    assert (
        source.kind == "mcp" and source.suites == ["echo-mcp"] and source.source == LOOSE.removeprefix("mcp:")
    )
    assert (source.server_name, source.server_version) == ("loose", None)  # the server names no version
    assert source.protocol_version  # negotiated in the handshake
    assert source.package is None  # a script, not a package: unknown, never guessed
    assert list(source.tools) == ["echo", "plot", "fail", "die"] and len(source.listing_hash) == 64
    assert main(["show", str(run_dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "tool source of echo-mcp: loose@unknown, protocol " in out
    assert f"package unknown, 4 tools, listing {source.listing_hash[:12]}" in out
    assert main(["show", str(run_dir), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["tool_sources"][0]["tools"] == source.tools


def test_compare_and_manifest_diff_flag_two_versions_of_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = run_on(versioned("1.0.0"), tmp_path, "v1"), run_on(versioned("2.0.0"), tmp_path, "v2")
    again = run_on(versioned("1.0.0"), tmp_path, "v1-again")
    capsys.readouterr()
    assert main(["compare", str(one), str(two), str(again)]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "measured different tools" in line]
    assert len(warnings) == 2  # v1 vs v2 and v2 vs v1-again; v1 and v1-again measured the same tools
    assert f"callbench: warning: {one} and {two} measured different tools: suite 'echo-mcp': " in err
    assert "server version 1.0.0 -> 2.0.0; tools changed: lookup" in warnings[0]
    assert "echo" not in warnings[0].split("tools changed:")[1].split("(")[0]

    assert main(["manifest", "diff", str(one), str(two)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:5] == [
        f"--- {one}",
        f"+++ {two}",
        "suite 'echo-mcp':",
        "  server version 1.0.0 -> 2.0.0",
        "  tools changed: lookup",
    ]
    assert lines[5].startswith("  listing ") and len(lines) == 6
    assert main(["manifest", "diff", str(one), str(again)]) == 0
    assert capsys.readouterr().out.startswith("same manifest: 1 tool source(s), 2 tools")

    rows = config_rows([read_run(one), read_run(two)])  # the report's "What was run"
    assert rows[0]["fields"]["tool sources"].startswith("versioned@1.0.0, protocol ")
    assert any("tool sources differ" in w and "tools changed: lookup" in w for w in config_warnings(rows))


def test_a_resume_against_a_server_that_changed_warns_and_keeps_both_manifests(tmp_path: Path) -> None:
    version_file = tmp_path / "version.txt"
    version_file.write_text("1.0.0")
    tools = versioned(f"@{version_file}")
    run_dir = run_on(tools, tmp_path, "run")
    callbench.run(
        str(echo_suite(tmp_path)), "oracle", tools=tools, out_dir=run_dir, resume=True, progress="quiet"
    )
    assert read_header(run_dir).resumes[-1].tool_sources is None  # the same server: nothing to keep
    version_file.write_text("1.1.0")  # same command, same schemas, another server version
    with pytest.warns(ToolSourcesChanged, match=r"server version 1\.0\.0 -> 1\.1\.0"):
        callbench.run(
            str(echo_suite(tmp_path)), "oracle", tools=tools, out_dir=run_dir, resume=True, progress="quiet"
        )
    header = read_header(run_dir)
    assert header.tool_sources[0].server_version == "1.0.0"  # how the run started
    resumed = header.resumes[-1].tool_sources
    assert resumed is not None and resumed[0].server_version == "1.1.0"


@pytest.mark.skipif(shutil.which("git") is None, reason="the mcp-git suite needs the git program")
def test_an_mcp_git_run_records_the_installed_server_package(tmp_path: Path) -> None:
    pytest.importorskip("mcp_server_git")
    callbench.run("mcp-git", "oracle", limit=1, out_dir=tmp_path / "run", progress="quiet")
    [source] = read_header(tmp_path / "run").tool_sources
    assert source.kind == "mcp" and source.suites == ["mcp-git"]
    assert (source.package, source.package_version) == ("mcp-server-git", metadata.version("mcp-server-git"))
    assert source.package_via == "python -m" and source.server_name and source.protocol_version
    assert len(source.tools) == 12 and "git_status" in source.tools


def test_a_builtin_suite_records_its_registry(tmp_path: Path) -> None:
    callbench.run("starter", "oracle", limit=1, out_dir=tmp_path / "run", progress="quiet")
    header = read_header(tmp_path / "run")
    [source] = header.tool_sources
    assert source.kind == "suite" and source.suites == ["starter"] and source.package == "callbench"
    assert source.listing_hash == header.suites[0].registry_hash
