"""The ``dag`` executor: answers calls of a generated DAG task (see ``docs/dag-tasks.md``).

The case's ``executor_config`` carries the task and the episode options::

    {"task": {...DagTask...}, "mode": "silent" | "explicit", "restate": false,
     "detailed_errors": false, "exec_seed": 0}

Every call's ``ToolOutcome.annotations`` records its node kind (``core``/``conn``/``dis``) and its
failure class (``None`` for a correct call), so scorers and reports can count them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from callbench.benchmarks.funcbenchgen.runtime import DagRuntime, RuntimeConfig
from callbench.benchmarks.funcbenchgen.tasks import DagTask
from callbench.plugin import Executor, ExecutorSession, SuiteError, ToolOutcome

if TYPE_CHECKING:
    from callbench.plugin import Case, Suite


def task_of(case: Case) -> DagTask:
    """The generated task stored in ``case.executor_config['task']``."""
    raw = case.executor_config.get("task")
    if raw is None:
        raise SuiteError(f"case {case.id}: executor_config has no 'task' (not a DAG case?)")
    if isinstance(raw, DagTask):
        return raw
    try:
        return DagTask.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SuiteError(f"case {case.id}: executor_config.task.{where}: {first['msg']}") from None


def runtime_config(case: Case) -> RuntimeConfig:
    """Episode options from ``case.executor_config`` (defaults: silent, no restatement)."""
    cfg = case.executor_config
    mode = cfg.get("mode", "silent")
    if mode not in ("silent", "explicit"):
        raise SuiteError(f"case {case.id}: executor_config.mode must be 'silent' or 'explicit', not {mode!r}")
    return RuntimeConfig(
        mode=mode,
        restate=bool(cfg.get("restate", False)),
        detailed_errors=bool(cfg.get("detailed_errors", False)),
    )


def new_runtime(case: Case) -> DagRuntime:
    """A fresh runtime for ``case`` (the executor's and the scorer's replay use the same one)."""
    return DagRuntime(task_of(case), runtime_config(case), seed=int(case.executor_config.get("exec_seed", 0)))


class DagSession(ExecutorSession):
    """One episode: a :class:`DagRuntime` behind the executor interface."""

    sees_invalid_calls = True
    """Unknown functions and wrong argument counts get the official error text and failure class."""

    def __init__(self, runtime: DagRuntime) -> None:
        self.runtime = runtime

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        res = self.runtime.call(name, arguments)
        node = self.runtime.nodes.get(name)
        result = None
        if res.value is not None and node is not None:
            # Structured copy of what the text says, so ``$ref: "<step>.value"`` can follow it.
            result = {"variable": node.output, "value": res.value}
        return ToolOutcome(
            ok=res.ok,
            result=result,
            error=None if res.ok else res.failure,
            content=res.content,
            annotations=res.annotations(),
        )

    def snapshot(self) -> dict[str, Any] | None:
        return {"known_types": sorted(self.runtime.known), "shown": dict(self.runtime.revealed)}


class DagExecutor(Executor):
    """Executor for cases built by the ``dag`` suite (or ``callbench generate dag``)."""

    name = "dag"

    def __init__(self, *_: Any, **__: Any) -> None:
        # The catalog may build executors with or without the suite; nothing is needed here.
        pass

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        return DagSession(new_runtime(case))
