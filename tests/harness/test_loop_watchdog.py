"""A case that blocks callbench's event loop pays for it alone (issue 33, item 1).

One case's tool blocks the loop (``time.sleep``) for longer than every case's time limit. Without the
watchdog, every other case in flight at ``--concurrency 8`` would see its limit pass during the stall
and be scored a ``timeout`` it never caused, so the verdicts would depend on the concurrency. With it,
the blocking case alone is charged (``trace.loop_stall_s``, QC flag ``blocked_event_loop``), the
others' clocks are credited, and the verdicts are the same at ``--concurrency 1`` and ``8``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

import callbench
from callbench.catalog import catalog
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.harness.watchdog import LoopWatchdog

BLOCK_S, LIMIT_S = 1.6, 1.1
ECHO = {
    "name": "echo",
    "description": "Echo a text back.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
}


class BlockingSession(ExecutorSession):
    """``echo`` answers at once, except for the text ``block``: then it blocks the loop first."""

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if arguments.get("text") == "block":
            time.sleep(BLOCK_S)  # on the event loop, on purpose
        await asyncio.sleep(0.05)  # every case is still in flight when the blocking one starts
        return ToolOutcome(ok=True, result={"echo": arguments.get("text")})


class BlockingExecutor(Executor):
    name = "blocking-echo"

    def start(self, case: Any, workdir: Path, suite: Any) -> ExecutorSession:
        return BlockingSession()


@pytest.fixture(autouse=True)
def _executor() -> None:
    catalog().executors.register("blocking-echo", BlockingExecutor, replace=True)


def blocking_suite(root: Path) -> Path:
    folder = root / "blocking"
    (folder / "tools").mkdir(parents=True)
    (folder / "suite.yaml").write_text("name: blocking\nexecutor: blocking-echo\n")
    (folder / "tools" / "echo.json").write_text(json.dumps(ECHO))
    with (folder / "cases.jsonl").open("w") as handle:
        for i in range(8):
            text = "block" if i == 3 else f"hi {i}"
            row = {
                "id": f"c{i}",
                "category": "echo",
                "instruction": f"Echo {text}.",
                "expected": [{"tool": "echo", "arguments": {"text": text}}],
                "timeout_s": LIMIT_S,
            }
            handle.write(json.dumps(row) + "\n")
    return folder


def outcome(result: Any) -> dict[str, tuple[str, bool, float | None]]:
    """Per case: why the episode stopped, whether the completion tier passed, the stall it caused."""
    return {
        r.case_id: (
            r.trace.stop_reason,
            r.verdicts["task-completion-execution"].passed,
            r.trace.loop_stall_s,
        )
        for r in result.records
    }


def test_the_blocking_case_alone_pays_for_the_stall_at_any_concurrency(tmp_path: Path) -> None:
    suite = blocking_suite(tmp_path)
    runs = {
        n: callbench.run(str(suite), "oracle", out_dir=tmp_path / f"c{n}", concurrency=n, progress="quiet")
        for n in (1, 8)
    }
    serial, parallel = outcome(runs[1]), outcome(runs[8])
    assert [reason for reason, _passed, _stall in serial.values()].count("timeout") == 1
    assert serial["c3"][0] == "timeout" and serial["c3"][2] is not None and serial["c3"][2] >= BLOCK_S - 0.1
    # the same verdicts, and only the blocking case charged, whatever the concurrency
    assert {k: v[:2] for k, v in parallel.items()} == {k: v[:2] for k, v in serial.items()}
    assert [k for k, v in parallel.items() if v[2]] == ["c3"]
    for result in runs.values():
        flags = [
            (f["key"], f["flag"]) for f in result.summary["qc_flags"] if f["flag"] == "blocked_event_loop"
        ]
        assert flags == [("blocking:c3", "blocked_event_loop")]


def test_without_credit_the_other_cases_would_time_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: with the credit switched off, the stall costs the others their limit."""
    monkeypatch.setattr(LoopWatchdog, "_stall_ended", lambda self, culprit, seconds: None)
    suite = blocking_suite(tmp_path)
    result = callbench.run(str(suite), "oracle", out_dir=tmp_path / "c8", concurrency=8, progress="quiet")
    timed_out = sorted(k for k, v in outcome(result).items() if v[0] == "timeout")
    assert len(timed_out) > 1 and "c3" in timed_out
