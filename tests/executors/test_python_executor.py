"""The async executor contract with real (blocking) Python tools: parallel cases, time limits that
fire, and the line between a tool's expected failure (ToolError) and a bug in the tool (ToolBug)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import callbench
from callbench.catalog import catalog
from callbench.errors import ToolBug, ToolError
from callbench.executors.base import ToolOutcome
from callbench.executors.python import PythonExecutor
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract

OBJ = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}


def _slow(key: str) -> dict[str, Any]:
    time.sleep(1.0)  # blocking work, as a real tool's I/O or computation would be
    return {"key": key}


def _lookup(key: str) -> dict[str, Any]:
    table = {"known": 1}
    if key == "missing":
        raise ToolError(f"no entry named {key!r}")
    return {"value": table[key]}  # KeyError for anything else: a bug in this tool


def _suite(name: str, tool: str, cases: list[tuple[str, str]], timeout_s: float = 30.0) -> Suite:
    registry = ToolRegistry([ToolContract(name=tool, parameters=OBJ)])
    built = [
        Case(
            id=case_id,
            instruction=f"{tool} {key}",
            timeout_s=timeout_s,
            expected=[{"tool": tool, "arguments": {"key": key}}],
        )
        for case_id, key in cases
    ]
    return Suite(
        name=name, cases=built, registry=registry, executor=PythonExecutor({"slow": _slow, "lookup": _lookup})
    )


def _register(suite: Suite) -> None:
    catalog().suites.register(suite.name, lambda spec, options: suite, replace=True)


def test_blocking_tools_of_concurrent_cases_run_in_parallel(tmp_path: Path) -> None:
    suite = _suite("blocking4", "slow", [(f"c{i}", f"k{i}") for i in range(4)])
    _register(suite)
    result = callbench.run(
        "blocking4", model="oracle", out_dir=tmp_path / "r", progress="quiet", concurrency=4
    )
    records = result.records
    assert all(r.verdicts["real-tool-execution"].passed for r in records)
    # Wall time of the cases themselves (start-up and imports excluded): four 1 s tools one after
    # another on the event loop took 4 s; in worker threads they overlap (about 1 s on an idle machine).
    wall = max(r.started_at + r.duration_ms / 1000 for r in records) - min(r.started_at for r in records)
    assert wall < 2.0, f"4 cases x 1 s blocking tool took {wall:.2f} s at concurrency 4"


def test_case_time_limit_fires_on_a_blocking_tool(tmp_path: Path) -> None:
    suite = _suite("blocking-timeout", "slow", [("c0", "k0")], timeout_s=0.3)
    _register(suite)
    result = callbench.run("blocking-timeout", model="oracle", out_dir=tmp_path / "r", progress="quiet")
    (record,) = result.records
    # The case's own wall time (loading the suite and writing the run folder are not the case's).
    elapsed = record.duration_ms / 1000
    assert record.status == "completed" and record.trace.stop_reason == "timeout"
    assert record.trace.final_state is None  # the tool was still running: the state is not knowable
    assert elapsed < 0.95, f"the 0.3 s case limit fired only after {elapsed:.2f} s"


def test_tool_error_is_a_scored_failed_execution(tmp_path: Path) -> None:
    suite = _suite("tool-error", "lookup", [("missing", "missing")])
    _register(suite)
    (record,) = callbench.run("tool-error", model="oracle", out_dir=tmp_path / "r", progress="quiet").records
    assert record.status == "completed"
    assert "execution_failed" in record.verdicts["real-tool-execution"].codes
    assert record.trace.calls[0].error == "no entry named 'missing'"


def test_a_bug_in_a_tool_is_an_error_record_and_resume_reruns_it(tmp_path: Path) -> None:
    suite = _suite("tool-bug", "lookup", [("good", "known"), ("buggy", "other")])
    _register(suite)
    out = tmp_path / "r"
    result = callbench.run("tool-bug", model="oracle", out_dir=out, progress="quiet")
    by_id = {r.case_id: r for r in result.records}
    assert by_id["good"].status == "completed"
    bug = by_id["buggy"]
    assert bug.status == "error" and bug.error is not None and bug.verdicts == {}
    assert bug.error.type == "tool_bug:KeyError" and "lookup" in bug.error.message
    assert bug.error.traceback and "KeyError" in bug.error.traceback
    summary = result.summary
    assert summary["n_error"] == 1 and summary["tiers"]["real-tool-execution"]["n"] == 1
    assert any(f["flag"] == "tool_implementation_error" and f["key"] == bug.key for f in summary["qc_flags"])
    # Fix the tool, resume: only the error record runs again, and now passes.
    suite.executor = PythonExecutor({"lookup": lambda key: {"value": 2}})
    result = callbench.run("tool-bug", model="oracle", out_dir=out, progress="quiet", resume=True)
    lines = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [line["case_id"] for line in lines] == ["good", "buggy", "buggy"] or sorted(
        line["case_id"] for line in lines
    ) == ["buggy", "buggy", "good"]
    assert {r.case_id: r.status for r in result.records} == {"good": "completed", "buggy": "completed"}


# -- where a call runs: worker thread, event loop (inline), or awaited (async def) -----------------------
def _thread_name(key: str) -> dict[str, Any]:
    return {"thread": threading.current_thread().name}


async def _async_lookup(key: str) -> dict[str, Any]:
    await asyncio.sleep(0.5)  # cooperative waiting: other cases run meanwhile
    if key == "missing":
        raise ToolError(f"no entry named {key!r}")
    return {"value": {"known": 1}[key]}


def _run_calls(executor: PythonExecutor, calls: list[tuple[str, str]]) -> list[ToolOutcome]:
    session = executor.start(Case(id="x", instruction="x"), Path("."), None)  # type: ignore[arg-type]

    async def play() -> list[ToolOutcome]:
        return [await session.call(name, {"key": key}) for name, key in calls]

    return asyncio.run(play())


def test_inline_tools_run_on_the_event_loop_and_others_in_worker_threads() -> None:
    executor = PythonExecutor({"here": _thread_name, "away": _thread_name}, inline=["here"])
    here, away = _run_calls(executor, [("here", "k"), ("away", "k")])
    assert here.result == {"thread": threading.main_thread().name}
    assert away.result["thread"].startswith("callbench-tool")


def test_inline_must_name_bound_tools() -> None:
    with pytest.raises(ValueError, match="no binding: ghost"):
        PythonExecutor({"here": _thread_name}, inline=["ghost"])


def test_async_tools_are_awaited_and_their_failures_sorted_the_same_way() -> None:
    executor = PythonExecutor({"lookup": _async_lookup})
    ok, failed = _run_calls(executor, [("lookup", "known"), ("lookup", "missing")])
    assert ok.ok and ok.result == {"value": 1}
    assert not failed.ok and failed.error == "no entry named 'missing'"
    with pytest.raises(ToolBug) as bug:
        _run_calls(executor, [("lookup", "other")])
    assert "KeyError" in bug.value.traceback


def test_async_tools_of_concurrent_cases_overlap(tmp_path: Path) -> None:
    suite = _suite("async4", "lookup", [(f"c{i}", "known") for i in range(4)])
    suite.executor = PythonExecutor({"lookup": _async_lookup})
    _register(suite)
    records = callbench.run(
        "async4", model="oracle", out_dir=tmp_path / "r", progress="quiet", concurrency=4
    ).records
    assert all(r.verdicts["real-tool-execution"].passed for r in records)
    wall = max(r.started_at + r.duration_ms / 1000 for r in records) - min(r.started_at for r in records)
    assert wall < 1.5, f"4 cases x 0.5 s async tool took {wall:.2f} s at concurrency 4"
