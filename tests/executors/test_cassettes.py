"""Cassettes (issue 28, item 2): ``--record DIR`` keeps every exchange with a suite's MCP server, one
tape per case; ``--replay DIR`` answers from it with no server at all, giving the same records as the
live run (timing aside); misses follow ``--replay-miss``; bad cassettes are one line; a server that
dies during a recording leaves an error record and loses nothing recorded before it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import callbench
from callbench.errors import UserError
from callbench.executors.cassette import CASES_DIR, INDEX_FILE, JOURNAL_FILE, MISS_TEXT
from callbench.mcp.client import McpConnection

SERVERS = Path(__file__).parents[1] / "mcp" / "client_servers.py"
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
TIMING = re.compile(rb'"(started_at|duration_ms|latency_ms)":(-?[0-9.eE+-]+|null)')
"""Timing fields: the only bytes of a record line allowed to differ (as in test_records_unchanged)."""


def server(mode: str) -> str:
    return f"mcp:stdio:{sys.executable} {SERVERS} {mode}"


def echo_suite(root: Path, name: str = "echo-mcp", extra: list[dict[str, Any]] | None = None) -> str:
    root.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "id": "echo_twice",
            "instruction": "Say hi twice.",
            "expected": [{"tool": "echo", "arguments": {"message": "hi", "times": 2}}],
        },
        {
            "id": "echo_again",  # the same call twice: replayed in order by its occurrence number
            "instruction": "Say hi twice, twice.",
            "expected": [
                {"tool": "echo", "arguments": {"message": "hi", "times": 2}},
                {"tool": "echo", "arguments": {"message": "hi", "times": 2}},
            ],
        },
        {
            "id": "plot_origin",
            "instruction": "Plot the origin.",
            "expected": [{"tool": "plot", "arguments": {"point": {"x": 0, "y": 0}}}],
        },
        {
            "id": "refused",
            "instruction": "Ask for a refusal.",
            "expected": [{"tool": "fail", "arguments": {"reason": "test"}}],
        },
        *(extra or []),
    ]
    path = root / f"{name}.yaml"
    path.write_text(json.dumps({"name": name, "cases": rows}))
    return str(path)


def zeroed_lines(run_dir: Path) -> dict[str, bytes]:
    """``key#trial`` -> the record line with its timing values zeroed."""
    out = {}
    for raw in (run_dir / "records.jsonl").read_bytes().splitlines():
        record = json.loads(raw)
        out[f"{record['key']}#{record['trial']}"] = TIMING.sub(lambda m: b'"' + m[1] + b'":0', raw)
    return dict(sorted(out.items()))


def cassette_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "run.json").read_text())["options"]["cassette"]


def outcomes(result: Any) -> dict[str, Any]:
    return {
        r.case_id: (r.error.type if r.error else tuple(r.verdicts[t].passed for t in TIERS))
        for r in result.records
    }


@dataclass(frozen=True)
class Recording:
    """The echo suite recorded live: its suite file, the cassette, and the live run that made it."""

    suite: str
    tape: Path
    result: Any
    """The live run's :class:`callbench.harness.engine.RunResult`."""

    @property
    def live(self) -> Path:
        """The live run's folder."""
        return Path(self.result.run_dir)

    def tape_copy(self, folder: Path) -> Path:
        """A copy of the cassette, for a test that changes it (the shared one is read-only)."""
        return Path(shutil.copytree(self.tape, folder))


def record_echo(root: Path, case_ids: list[str] | None = None) -> Recording:
    suite = echo_suite(root)
    options: dict[str, Any] = {"case_ids": case_ids} if case_ids else {}
    tape = root / "tape"
    live = callbench.run(
        suite, "oracle", tools=server("loose"), out_dir=root / "live", record=tape, **options
    )
    return Recording(suite, tape, live)


# Each recording starts live servers (one per case): the tests that only replay a recording, or change
# a copy of it, share one made once for the module.
@pytest.fixture(scope="module")
def echo_recorded(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """Every case of the echo suite, recorded."""
    return record_echo(tmp_path_factory.mktemp("echo-all"))


@pytest.fixture(scope="module")
def echo_twice_recorded(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """The ``echo_twice`` case alone, recorded."""
    return record_echo(tmp_path_factory.mktemp("echo-twice"), case_ids=["echo_twice"])


def test_a_recorded_run_replays_with_no_server_and_the_same_record_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_recorded: Recording
) -> None:
    suite, tape = echo_recorded.suite, echo_recorded.tape
    live = echo_recorded.result
    assert live.summary["n_error"] == 0
    index = json.loads((tape / INDEX_FILE).read_text())
    assert set(index["cases"]) == {
        f"echo-mcp:{c}#1" for c in ("echo_twice", "echo_again", "plot_origin", "refused")
    }
    for digest in index["cases"].values():  # content-addressed: the name is the content's hash
        assert hashlib.sha256((tape / CASES_DIR / f"{digest}.json").read_bytes()).hexdigest() == digest
    again = json.loads((tape / CASES_DIR / f"{index['cases']['echo-mcp:echo_again#1']}.json").read_text())
    assert [(c["seq"], c["occurrence"]) for c in again["calls"]] == [(0, 0), (1, 1)]
    assert (
        "elapsed_ms" not in json.dumps(again)
        and len(index["timing"]["echo-mcp:echo_again#1"]["elapsed_ms"]) == 2
    )
    assert not (tape / JOURNAL_FILE).exists()  # absorbed by the index when the run ended
    recorded_hash = cassette_of(echo_recorded.live)["hash"]
    assert recorded_hash and cassette_of(echo_recorded.live)["mode"] == "record"

    attempts: list[str] = []

    async def refuse(self: McpConnection) -> McpConnection:
        attempts.append(self.spec.text)
        raise AssertionError("a server was started")

    monkeypatch.setattr(McpConnection, "__aenter__", refuse)
    for name in ("replay", "replay-again"):
        replay = callbench.run(suite, "oracle", tools=server("loose"), out_dir=tmp_path / name, replay=tape)
        assert outcomes(replay) == outcomes(live)
        assert zeroed_lines(tmp_path / name) == zeroed_lines(echo_recorded.live)
        assert cassette_of(tmp_path / name) == {
            "mode": "replay",
            "folder": str(tape.resolve()),
            "miss": "strict",
            "hash": recorded_hash,
        }
    assert attempts == []
    header = json.loads((tmp_path / "replay" / "run.json").read_text())
    live_header = json.loads((echo_recorded.live / "run.json").read_text())
    assert header["tool_sources"] == live_header["tool_sources"]  # the recorded manifest


def test_misses_follow_the_declared_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_twice_recorded: Recording
) -> None:
    suite = echo_twice_recorded.suite
    tape = echo_twice_recorded.tape_copy(tmp_path / "tape")  # replay_miss="live" below adds to it
    tape_hash = cassette_of(echo_twice_recorded.live)["hash"]
    attempts: list[str] = []
    monkeypatch.setattr(McpConnection, "__aenter__", _refusing(attempts))

    def replay(name: str, **options: Any) -> Any:
        return callbench.run(
            suite, "oracle", tools=server("loose"), out_dir=tmp_path / name, replay=tape, **options
        )

    strict = replay("strict")
    assert outcomes(strict) == {
        "echo_twice": (True, True, True),
        "echo_again": "cassette_miss",
        "plot_origin": "cassette_miss",
        "refused": "cassette_miss",
    }
    missed = next(r for r in strict.records if r.case_id == "plot_origin")
    assert missed.error is not None and "holds no answer to plot" in missed.error.message
    assert strict.summary["n_error"] == 3  # infrastructure: out of accuracy, re-run by --resume

    visible = replay("visible", replay_miss="model-visible")
    plot = next(r for r in visible.records if r.case_id == "plot_origin")
    assert plot.status == "completed" and plot.trace.calls[0].execution == "error"
    assert plot.trace.calls[0].annotations["cassette_miss"] == "model-visible"
    assert plot.trace.calls[0].error == MISS_TEXT.format(tool="plot")
    assert not plot.verdicts["real-tool-execution"].passed  # what the model saw, scored as such
    assert attempts == []
    assert cassette_of(tmp_path / "visible")["hash"] == tape_hash  # a replay reads only

    monkeypatch.undo()  # live: the server answers the misses, which join the cassette
    live = replay("live", replay_miss="live")
    assert all(v == (True, True, True) for k, v in outcomes(live).items() if k != "refused")
    plotted = next(r for r in live.records if r.case_id == "plot_origin")
    assert plotted.trace.calls[0].annotations == {"cassette_miss": "live"}
    grown = cassette_of(tmp_path / "live")
    assert grown["hash"] == tape_hash and grown["hash_at_end"] != tape_hash
    monkeypatch.setattr(McpConnection, "__aenter__", _refusing(attempts))
    full = replay("full")
    assert full.summary["n_error"] == 0 and attempts == []


def _refusing(attempts: list[str]) -> Any:
    async def refuse(self: McpConnection) -> McpConnection:
        attempts.append(self.spec.text)
        raise AssertionError("a server was started")

    return refuse


FAULT_ROWS = [
    {"id": "echo_first", "expected": [{"tool": "echo", "arguments": {"message": "one"}}]},
    {"id": "crash", "expected": [{"tool": "die"}]},
    {"id": "echo_after_crash", "expected": [{"tool": "echo", "arguments": {"message": "two"}}]},
    {"id": "slow_cut", "timeout_s": 1, "expected": [{"tool": "slow"}]},
]


def test_a_server_that_dies_or_hangs_while_recording_makes_error_records_and_keeps_the_rest(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "faults.yaml"
    path.write_text(
        json.dumps({"name": "faults", "cases": [{"instruction": "Call it.", **r} for r in FAULT_ROWS]})
    )
    tape = tmp_path / "tape"
    live = callbench.run(
        str(path), "oracle", tools=server("faulty"), out_dir=tmp_path / "live", record=tape, concurrency=1
    )
    expected = {
        "echo_first": (True, True, True),
        "crash": "tool_server_lost",
        "echo_after_crash": (True, True, True),
        "slow_cut": "tool_server_timeout",
    }
    assert outcomes(live) == expected
    index = json.loads((tape / INDEX_FILE).read_text())
    assert len(index["cases"]) == 4  # the faulted cases too: their calls and what went wrong
    monkeypatch.setattr(McpConnection, "__aenter__", _refusing([]))
    replay = callbench.run(
        str(path), "oracle", tools=server("faulty"), out_dir=tmp_path / "replay", replay=tape
    )
    assert outcomes(replay) == expected  # replayed faults are error records again, never scored


def test_a_killed_recording_loses_only_the_case_in_flight(tmp_path: Path) -> None:
    rows = [
        {"id": "echo_first", "expected": [{"tool": "echo", "arguments": {"message": "one"}}]},
        {"id": "slow", "timeout_s": 30, "expected": [{"tool": "slow"}]},
    ]
    path = tmp_path / "killed.yaml"
    path.write_text(json.dumps({"name": "killed", "cases": [{"instruction": "Call it.", **r} for r in rows]}))
    tape = tmp_path / "tape"
    command = [sys.executable, "-m", "callbench.cli.main", "run", "--suite", str(path), "--model", "oracle"]
    command += [
        "--tools",
        server("faulty"),
        "--record",
        str(tape),
        "--concurrency",
        "1",
        "--progress",
        "quiet",
    ]
    command += ["--out", str(tmp_path / "run")]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    journal = tape / JOURNAL_FILE
    deadline = time.monotonic() + 60
    while not (journal.exists() and journal.read_bytes().count(b"\n") >= 1):
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the first case was never journalled"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # mid-way through the slow call
    process.wait()
    from callbench.executors.cassette import Cassette

    kept = Cassette.for_replay(tape)
    assert list(kept.cases) == ["killed:echo_first#1"]
    replay = callbench.run(
        str(path),
        "oracle",
        tools=server("faulty"),
        out_dir=tmp_path / "replay",
        replay=tape,
        case_ids=["echo_first"],
    )
    assert outcomes(replay) == {"echo_first": (True, True, True)}


def test_bad_cassettes_are_one_line_before_anything_runs(
    tmp_path: Path, echo_twice_recorded: Recording
) -> None:
    suite, tape = echo_twice_recorded.suite, echo_twice_recorded.tape
    with pytest.raises(UserError, match="no such cassette folder"):
        callbench.run(
            suite, "oracle", tools=server("loose"), out_dir=tmp_path / "a", replay=tmp_path / "nowhere"
        )
    other = echo_suite(tmp_path / "other", name="other-mcp")
    with pytest.raises(UserError, match="holds no recording of suite 'other-mcp'"):
        callbench.run(other, "oracle", tools=server("loose"), out_dir=tmp_path / "b", replay=tape)
    changed = echo_suite(
        tmp_path / "changed",
        extra=[
            {"id": "new", "instruction": "x", "expected": [{"tool": "echo", "arguments": {"message": "x"}}]}
        ],
    )
    with pytest.raises(UserError, match="recorded for another suite of suite 'echo-mcp'"):
        callbench.run(changed, "oracle", tools=server("loose"), out_dir=tmp_path / "c", replay=tape)
    assert not any((tmp_path / name).exists() for name in "abc")  # no run folder was made


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured
    return lines[0]


def test_bad_cassettes_on_the_command_line_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], echo_twice_recorded: Recording
) -> None:
    from callbench.cli.main import main

    suite, tape = echo_twice_recorded.suite, echo_twice_recorded.tape
    base = ["run", "--suite", suite, "--model", "oracle", "--tools", server("loose"), "--progress", "quiet"]

    assert main([*base, "--replay", str(tmp_path / "nowhere"), "--out", str(tmp_path / "a")]) == 2
    assert (
        _error_line(capsys) == f"callbench: error: --replay {tmp_path / 'nowhere'}: no such cassette folder"
    )

    corrupt = Path(shutil.copytree(tape, tmp_path / "corrupt"))
    victim = next((corrupt / CASES_DIR).iterdir())
    victim.write_bytes(victim.read_bytes()[:-10])  # truncated
    assert main([*base, "--replay", str(corrupt), "--out", str(tmp_path / "b")]) == 2
    line = _error_line(capsys)
    assert f"tape {CASES_DIR}/{victim.name} is corrupt or truncated" in line, line

    bad_index = Path(shutil.copytree(tape, tmp_path / "bad-index"))
    (bad_index / INDEX_FILE).write_text('{"format": "callbench-cassette/1", "cases": ')
    assert main([*base, "--replay", str(bad_index), "--out", str(tmp_path / "c")]) == 2
    assert f"{INDEX_FILE} is corrupt or truncated" in _error_line(capsys)

    other = echo_suite(tmp_path / "other", name="other-mcp")
    other_base = [
        "run",
        "--suite",
        other,
        "--model",
        "oracle",
        "--tools",
        server("loose"),
        "--progress",
        "quiet",
    ]
    assert main([*other_base, "--replay", str(tape), "--out", str(tmp_path / "d")]) == 2
    assert "holds no recording of suite 'other-mcp' (it holds: echo-mcp)" in _error_line(capsys)

    assert (
        main([*base, "--replay", str(tape), "--replay-miss", "sometimes", "--out", str(tmp_path / "e")]) == 2
    )
    assert (
        _error_line(capsys)
        == "callbench: error: --replay-miss must be one of strict, live, model-visible (got 'sometimes')"
    )
    assert (
        main([*base, "--replay", str(tape), "--record", str(tmp_path / "t2"), "--out", str(tmp_path / "f")])
        == 2
    )
    assert "give one" in _error_line(capsys)
    synthetic = tmp_path / "synthetic"  # its calls get synthetic answers: no server, no tool code to tape
    (synthetic / "tools").mkdir(parents=True)
    (synthetic / "suite.yaml").write_text("name: synthetic\n")
    (synthetic / "tools" / "echo.json").write_text(
        json.dumps(
            {"name": "echo", "description": "Echo", "parameters": {"type": "object", "properties": {}}}
        )
    )
    (synthetic / "cases.jsonl").write_text(
        json.dumps({"id": "c", "instruction": "Echo.", "expected": []}) + "\n"
    )
    assert (
        main(["run", "--suite", str(synthetic), "--model", "oracle", "--record", str(tmp_path / "t3")]) == 2
    )
    assert "no suite of this run calls an MCP tool server" in _error_line(capsys)
    assert not any((tmp_path / name).exists() for name in "abcdef")


def test_resume_keeps_the_replay_and_refuses_a_changed_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_recorded: Recording
) -> None:
    from callbench.harness.prepare import resume_config

    suite = echo_recorded.suite
    tape = echo_recorded.tape_copy(tmp_path / "tape")  # changed below, under the run
    monkeypatch.setattr(McpConnection, "__aenter__", _refusing([]))
    run_dir = tmp_path / "replay"
    callbench.run(
        suite, "oracle", tools=server("loose"), out_dir=run_dir, replay=tape, case_ids=["echo_twice"]
    )
    config = resume_config(run_dir, case_ids=())
    assert config.replay == tape and config.replay_miss == "strict"
    with pytest.raises(UserError, match="cannot resume: --replay"):
        callbench.run(
            suite, "oracle", tools=server("loose"), out_dir=run_dir, resume=True, replay=tmp_path / "other"
        )
    resumed = callbench.run(suite, "oracle", tools=server("loose"), out_dir=run_dir, resume=True, replay=tape)
    assert resumed.summary["n_records"] == 4 and resumed.summary["n_error"] == 0
    victim = tape / INDEX_FILE  # the cassette changes under the run: a resume says so
    index = json.loads(victim.read_text())
    index["cases"].pop("echo-mcp:refused#1")
    victim.write_text(json.dumps(index))
    with pytest.raises(UserError, match="the cassette .* changed since the run"):
        callbench.run(suite, "oracle", tools=server("loose"), out_dir=run_dir, resume=True, replay=tape)


@pytest.mark.skipif(shutil.which("git") is None, reason="the mcp-git suite needs the git program")
def test_mcp_git_recorded_live_replays_offline_with_the_same_verdicts_and_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real mcp-server-git: recorded once, replayed with no server (its state check reads the
    recorded state history: the replayed calls never touched the case's repository)."""
    pytest.importorskip("mcp_server_git")
    tape = tmp_path / "tape"
    live = callbench.run("mcp-git", "oracle", "all", out_dir=tmp_path / "live", record=tape, concurrency=4)
    assert live.summary["n_error"] == 0
    tapes = [json.loads(p.read_text()) for p in (tape / CASES_DIR).iterdir()]
    assert {t["isolation"] for t in tapes} == {"run"}  # mcp-git isolates cases through their repositories
    changing = next(t for t in tapes if t["key"] == "mcp-git:commit_staged" and t["trial"] == 1)
    assert len(changing["states"]) == len(changing["calls"]) + 1  # before the calls, then after each
    assert all("/tmp/" not in json.dumps(t) for t in tapes)  # the case's folder is {workdir}
    monkeypatch.setattr(McpConnection, "__aenter__", _refusing([]))

    def no_repository(folder: Path) -> Path:
        raise AssertionError("a replay built a repository no server will read")

    monkeypatch.setattr("callbench.benchmarks.mcp_git.executor.make_repository", no_repository)
    replay = callbench.run(
        "mcp-git", "oracle", "all", out_dir=tmp_path / "replay", replay=tape, concurrency=4
    )
    assert {r.key: r.verdicts for r in replay.records} == {r.key: r.verdicts for r in live.records}
    assert zeroed_lines(tmp_path / "replay") == zeroed_lines(tmp_path / "live")
    assert replay.summary["tiers"]["state-match"]["accuracy"] == 1.0


def test_the_command_line_records_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from callbench.cli.main import main

    suite = echo_suite(tmp_path)
    tape = tmp_path / "tape"
    base = ["run", "--suite", suite, "--model", "oracle", "--tools", server("loose"), "--progress", "quiet"]
    base += ["--case", "echo_twice", "--case", "echo_again"]
    assert main([*base, "--record", str(tape), "--out", str(tmp_path / "live")]) == 0
    recorded = cassette_of(tmp_path / "live")["hash"]
    shown = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert f"MCP calls recorded into the cassette {tape.resolve()} (hash {recorded[:12]})" in shown
    monkeypatch.setattr(McpConnection, "__aenter__", _refusing([]))
    assert main([*base, "--replay", str(tape), "--out", str(tmp_path / "replay")]) == 0
    assert f"MCP calls answered from the cassette {tape.resolve()}" in " ".join(
        capsys.readouterr().out.split()
    )
    assert zeroed_lines(tmp_path / "replay") == zeroed_lines(tmp_path / "live")
