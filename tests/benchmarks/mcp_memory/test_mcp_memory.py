"""The mcp-memory suite (issue 28, item 7): a stateful third-party server, reproducible.

The shipped cassettes replay with no server process and no Node.js at all, giving the verdicts stored
beside them; a live run on the pinned npm package (installed by ``.ci/background.d/30-npm-mcp.sh``,
or by the fixture when missing) gives those same verdicts at ``--concurrency 1`` and ``8`` and under
two ``--shuffle`` seeds, and records the very cassette that is shipped. The state check reads the
graph the server keeps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from npm_servers import memory_server
from pack_self_test import INVARIANTS, SelfTest, self_test

import callbench
from callbench.benchmarks.mcp_memory.executor import (
    MemoryMcpExecutor,
    MemoryMcpSession,
    graph_state,
    seed_state,
)
from callbench.benchmarks.mcp_memory.server import PACKAGE, VERSION, find_server
from callbench.benchmarks.mcp_memory.suite import CASSETTES, bundled_tools, load_registry
from callbench.benchmarks.mcp_memory.verdicts import RECORDED_AGENTS, read_verdicts, verdict_table
from callbench.errors import ConfigError
from callbench.executors.cassette import Cassette
from callbench.mcp.client import McpConnection
from callbench.suites.resolve import load_suite

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
CASES = 25
STATE_CHANGING = 16


@pytest.fixture(scope="module")
def live() -> Path:
    """The pinned memory server, installed in the test cache when it is not there yet."""
    return memory_server(VERSION)


@pytest.fixture(scope="module")
def stored() -> dict[str, dict[str, dict[str, str]]]:
    return read_verdicts(CASSETTES)


@pytest.fixture(scope="module")
def checked(live: Path, tmp_path_factory: pytest.TempPathFactory) -> SelfTest:
    """``callbench check mcp-memory``, its runs kept: the live noisy:1 and refuse runs judged below are
    the self-test's own (same options: every tier, no cache, the default concurrency), not two more
    live runs of 25 cases with a server or two started per case (tests/helpers/pack_self_test.py)."""
    return self_test("mcp-memory", tmp_path_factory.mktemp("check-mcp-memory"))


def run(model: str, out: Path, **options: object) -> callbench.RunResult:
    return callbench.run("mcp-memory", model, "all", out_dir=out, progress="quiet", cache=False, **options)


def without_node(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No node, npm or npx on PATH, and no npm prefix holding the package."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CALLBENCH_NPM_PREFIX", str(tmp_path / "no-prefix"))


# --- offline: the shipped cassettes --------------------------------------------------------------


def test_the_shipped_cassettes_replay_with_no_server_and_no_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stored: dict[str, dict[str, dict[str, str]]]
) -> None:
    without_node(monkeypatch, tmp_path)
    with pytest.raises(ConfigError, match="needs Node.js"):
        find_server()  # nothing here could start the server
    for agent, folder in RECORDED_AGENTS.items():
        result = run(agent, tmp_path / folder, replay=CASSETTES / folder)
        assert result.summary["n_completed"] == CASES and result.summary["n_error"] == 0, agent
        assert verdict_table(result.records) == stored[agent], agent
        header = json.loads((tmp_path / folder / "run.json").read_text())
        assert header["options"]["cassette"]["mode"] == "replay"
        [source] = header["tool_sources"]
        assert (source["package"], source["package_version"]) == (PACKAGE, VERSION)
        if agent == "oracle":
            for tier in (*TIERS, "state-match"):
                assert result.summary["tiers"][tier]["accuracy"] == 1.0, tier
            changing = [r for r in result.records if r.verdicts["state-match"].metrics["gold_changes_state"]]
            assert len(changing) == STATE_CHANGING  # the recorded states: every such case changes the graph


def test_the_stored_verdicts_tell_the_agents_apart(stored: dict[str, dict[str, dict[str, str]]]) -> None:
    oracle, noisy = stored["oracle"], stored["noisy:1"]
    assert len(oracle) == len(noisy) == CASES
    assert all(v == "pass" for row in oracle.values() for v in row.values())
    failed = [key for key, row in noisy.items() if row["task-completion-execution"] != "pass"]
    assert 10 <= len(failed) < CASES  # noisy:1 makes one mistake in most cases, none in a few


# --- live: the pinned server -------------------------------------------------------------------------


def test_a_live_run_gives_the_recorded_verdicts_at_any_concurrency_and_in_any_order(
    tmp_path: Path, live: Path, stored: dict[str, dict[str, dict[str, str]]]
) -> None:
    order = [case.id for case in load_suite("mcp-memory").cases]
    # Eight at once in one order, recorded; one at a time in another order.
    recorded = run("oracle", tmp_path / "c8", concurrency=8, shuffle=3, record=tmp_path / "cassette")
    single = run("oracle", tmp_path / "c1", concurrency=1, shuffle=11)
    ran = [r.key.split(":", 1)[1] for r in single.records]
    assert sorted(ran) == sorted(order) and ran != order  # shuffled
    for result in (recorded, single):
        assert result.summary["n_error"] == 0
        assert verdict_table(result.records) == stored["oracle"]
    # The recording is the shipped cassette, tape for tape: the live server answers as it did.
    shipped = Cassette.for_replay(CASSETTES / "oracle").hash
    fresh = json.loads((tmp_path / "c8" / "run.json").read_text())["options"]["cassette"]["hash"]
    assert fresh == shipped, (
        "the live server no longer answers as recorded: python scripts/record_mcp_memory.py"
    )
    header = json.loads((tmp_path / "c1" / "run.json").read_text())
    [isolation] = header["options"]["tool_isolation"]
    assert (isolation["isolation"], isolation["by"]) == ("case", "suite")
    assert isolation["reset"]["command"].startswith("cp -- ")
    [source] = header["tool_sources"]
    assert (source["package"], source["package_version"], source["package_via"]) == (PACKAGE, VERSION, "node")


def test_the_pack_passes_its_self_test(checked: SelfTest) -> None:
    """``callbench check mcp-memory`` (the built-in packs' self-test, tests/cli/test_check_command.py)."""
    assert checked.code == 0, checked.lines
    found = checked.lines
    assert list(found) == list(INVARIANTS) and all(line.startswith("PASS") for line in found.values()), found


def test_the_noisy_agent_live_gives_its_recorded_verdicts(
    checked: SelfTest, stored: dict[str, dict[str, dict[str, str]]]
) -> None:
    result = checked.runs["noisy:1"]
    assert result.summary["n_completed"] == CASES and result.summary["n_error"] == 0
    assert verdict_table(result.records) == stored["noisy:1"]


def test_refuse_scores_zero(checked: SelfTest) -> None:
    result = checked.runs["refuse"]
    assert result.summary["n_error"] == 0
    for tier in TIERS:
        assert result.summary["tiers"][tier]["passed"] == 0, tier
    # Never calling leaves the seed graph: right for the read-only cases only.
    assert result.summary["tiers"]["state-match"]["passed"] == CASES - STATE_CHANGING


def test_the_baseline_runs_without_error_records(tmp_path: Path, live: Path) -> None:
    result = run("baseline", tmp_path / "baseline")
    assert result.summary["n_completed"] == CASES and result.summary["n_error"] == 0
    assert result.summary["tiers"]["task-completion-execution"]["accuracy"] < 1.0


def test_bundled_listing_equals_the_pinned_servers(live: Path) -> None:
    node, script = find_server()
    assert script.is_relative_to(live)

    async def listed() -> tuple[tuple[str | None, str | None, str | None], list]:
        spec = f"stdio:MEMORY_FILE_PATH={live}/unused.jsonl {node} {script}"
        async with McpConnection(spec) as connection:
            return connection.server_info(), await connection.list_tools()

    info, tools = asyncio.run(listed())
    assert info[:2] == ("memory-server", "0.6.3")

    def fields(t):  # noqa: ANN001, ANN202
        return (t.title, t.description, t.input_schema, t.output_schema, t.annotations)

    assert {t.name: fields(t) for t in tools} == {t.name: fields(t) for t in bundled_tools()}


def test_the_state_is_the_graph_the_server_keeps(tmp_path: Path, live: Path) -> None:
    executor = MemoryMcpExecutor()
    session = executor.start(None, tmp_path / "case", None)  # type: ignore[arg-type]
    assert isinstance(session, MemoryMcpSession)
    assert session.snapshot() == seed_state()  # before any call: what the server will start from

    async def play() -> tuple[object, object, object]:
        try:
            created = await session.call(
                "create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}
            )
            noted = await session.call(
                "add_observations", {"observations": [{"entityName": "Ada", "contents": ["b", "a"]}]}
            )
            graph = await session.call("read_graph", {})
            state = session.snapshot()
            return created, noted, (graph, state)
        finally:
            await session.aclose()
            await executor.aclose()

    created, noted, (graph, state) = asyncio.run(play())
    assert created.ok and created.result == {
        "entities": [{"name": "Ada", "entityType": "person", "observations": []}]
    }
    assert noted.ok
    # The snapshot is what the server itself answers for its whole graph.
    lines = [json.dumps({"type": "entity", **e}) for e in graph.result["entities"]]
    lines += [json.dumps({"type": "relation", **r}) for r in graph.result["relations"]]
    assert state == graph_state("\n".join(lines))
    assert state["entity:Ada"] == {"type": "person", "observations": ["a", "b"]}
    assert {k: v for k, v in state.items() if k != "entity:Ada"} == seed_state()
    assert session.snapshot() is None  # the case is over: its server and its graph are gone


def test_the_registry_is_strict_and_keeps_the_output_schemas() -> None:
    registry, notes = load_registry()
    assert len(registry) == 9 and len(notes) == 9
    assert all(c.parameters["additionalProperties"] is False for c in registry)
    assert {c.name for c in registry if c.read_only} == {"read_graph", "search_nodes", "open_nodes"}
    assert registry.get("search_nodes").result_schema["properties"].keys() == {"entities", "relations"}


# --- what a live run needs, said in one line ---------------------------------------------------------


def test_missing_node_or_package_is_one_line_before_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_node(monkeypatch, tmp_path)
    with pytest.raises(ConfigError) as no_node:
        run("oracle", tmp_path / "a")
    assert str(no_node.value).startswith("suite 'mcp-memory' needs Node.js (20 or later) with 'node' on PATH")
    assert not (tmp_path / "a" / "records.jsonl").exists()

    fake_node = tmp_path / "bin" / "node"
    fake_node.parent.mkdir()
    fake_node.write_text("#!/bin/sh\nexit 1\n")
    fake_node.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake_node.parent))
    prefix = tmp_path / "no-prefix"
    for options in ({}, {"record": tmp_path / "rec"}):  # a live run, and a recording
        with pytest.raises(ConfigError) as no_package:
            run("oracle", tmp_path / "b", **options)
        assert str(no_package.value) == (
            f"suite 'mcp-memory' needs the npm package '{PACKAGE}@{VERSION}': "
            f"npm install --prefix {prefix} {PACKAGE}@{VERSION}"
        )
    other = prefix / "node_modules" / PACKAGE
    (other / "dist").mkdir(parents=True)
    (other / "package.json").write_text(json.dumps({"name": PACKAGE, "version": "2025.1.1"}))
    (other / "dist" / "index.js").write_text("")
    with pytest.raises(
        ConfigError, match=rf"is pinned to {PACKAGE}@{VERSION} but .* holds 2025\.1\.1: npm install"
    ):
        run("oracle", tmp_path / "c")
