"""Cases in phases (``Case.phase``): a case of a later phase starts only once every case of the earlier
phases the run plays has finished, at any concurrency and under ``--shuffle``; the session being opened
learns its run folder and trial (``case_play``) and may set the conversation up (``opening``), and a
set-up failure there is an error record of its own type."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import callbench
from callbench.plugin import (
    Case,
    Executor,
    ExecutorSession,
    Message,
    Suite,
    ToolOutcome,
    UserError,
    case_play,
)


class LoggingSession(ExecutorSession):
    def __init__(self, executor: LoggingExecutor, case: Case) -> None:
        self.executor, self.case = executor, case
        play = case_play()
        assert play is not None
        executor.plays.append((case.id, play.trial, play.run_dir))

    async def opening(self, messages: list[Message]) -> list[Message] | None:
        self.executor.events.append(("start", self.case.id))
        if self.case.metadata.get("fail_setup"):
            raise UserError("the prerequisite was not played")
        await asyncio.sleep(0.02 if self.case.phase == 0 else 0.0)  # phase 0 is slow: others may pass it
        return [Message.system("set up by the session"), *messages]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(ok=True, result={})

    def close(self) -> None:
        self.executor.events.append(("end", self.case.id))


class LoggingExecutor(Executor):
    name = "logging"

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.plays: list[tuple[str, int, Path | None]] = []

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        return LoggingSession(self, case)


def phased_suite(executor: Executor, fail: str | None = None) -> Suite:
    # Listed out of phase order: the run orders them (suite order within a phase).
    spec = [("b0", 1), ("a0", 0), ("c0", 2), ("a1", 0), ("b1", 1), ("a2", 0), ("a3", 0), ("b2", 1), ("a4", 0)]
    cases = [
        Case(id=name, instruction=f"case {name}", phase=phase, metadata={"fail_setup": name == fail})
        for name, phase in spec
    ]
    return Suite(name="phased", cases=cases, executor=executor, scorers=[], default_k=None)


def check_order(events: list[tuple[str, str]]) -> None:
    phase = {"a": 0, "b": 1, "c": 2}
    for index, (kind, name) in enumerate(events):
        if kind != "start":
            continue
        ended = {n for k, n in events[:index] if k == "end"}
        earlier = {n for _, n in events if phase[n[0]] < phase[name[0]]}
        assert earlier <= ended, f"{name} started before {sorted(earlier - ended)} ended"


@pytest.mark.parametrize("concurrency", [1, 4])
def test_later_phases_start_after_earlier_ones_end(tmp_path: Path, concurrency: int) -> None:
    executor = LoggingExecutor()
    result = callbench.run(
        phased_suite(executor),
        "baseline",
        out_dir=tmp_path / "run",
        progress="quiet",
        concurrency=concurrency,
        cache=False,
    )
    check_order(executor.events)
    assert len([e for e in executor.events if e[0] == "start"]) == 9
    assert {run_dir for _, _, run_dir in executor.plays} == {result.run_dir}
    assert all(record.status == "completed" for record in result.records)


def test_shuffle_keeps_phases_and_trials_are_told(tmp_path: Path) -> None:
    executor = LoggingExecutor()
    callbench.run(
        phased_suite(executor),
        "baseline",
        out_dir=tmp_path / "run",
        progress="quiet",
        concurrency=4,
        shuffle=7,
        trials=2,
        cache=False,
    )
    check_order(executor.events)
    assert sorted({trial for _, trial, _ in executor.plays}) == [1, 2]


def test_a_setup_failure_in_opening_is_an_error_record(tmp_path: Path) -> None:
    result = callbench.run(
        phased_suite(LoggingExecutor(), fail="b1"),
        "baseline",
        out_dir=tmp_path / "run",
        progress="quiet",
        concurrency=2,
        cache=False,
    )
    failed = {r.case_id: r for r in result.records if r.status == "error"}
    assert list(failed) == ["b1"]
    assert failed["b1"].error is not None
    assert failed["b1"].error.type == "case_setup"
    assert "prerequisite was not played" in failed["b1"].error.message


def test_the_default_phase_leaves_case_hashes_unchanged() -> None:
    plain = Case(id="x", instruction="hi")
    assert "phase" not in plain.hash_payload()
    assert Case(id="x", instruction="hi", phase=2).hash_payload()["phase"] == 2
