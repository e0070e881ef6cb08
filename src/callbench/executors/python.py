"""The ``python`` executor: real implementation functions bound to tools."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from callbench.errors import ToolError
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.frozen import freeze

ToolFunction = Callable[..., Any]
StateFactory = Callable[[Case, Path], Any]


class PythonExecutor(Executor):
    """Calls ``bindings[name](**arguments)``, or ``bindings[name](state, **arguments)`` with a state factory.

    The state (a workspace, a database...) is created fresh for every case by ``state_factory``.
    A ``ToolError`` becomes a tool error returned to the model; any other exception is also
    returned to the model (with its type) and recorded: an executor failure never crashes a run.
    """

    name = "python"

    def __init__(self, bindings: Mapping[str, ToolFunction], state_factory: StateFactory | None = None) -> None:
        self.bindings = dict(bindings)
        self.state_factory = state_factory

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        state = self.state_factory(case, workdir) if self.state_factory else None
        return PythonSession(self.bindings, state)


class PythonSession(ExecutorSession):
    def __init__(self, bindings: dict[str, ToolFunction], state: Any) -> None:
        self.bindings = bindings
        self.state = state

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        function = self.bindings.get(name)
        if function is None:
            return ToolOutcome.failure(f"Tool {name!r} has no implementation bound in this executor")
        try:
            result = function(self.state, **arguments) if self.state is not None else function(**arguments)
        except ToolError as exc:
            return ToolOutcome.failure(str(exc))
        except TypeError as exc:
            if _is_signature_error(exc):
                return ToolOutcome.failure(f"Invalid arguments for {name}: {exc}")
            return ToolOutcome.failure(f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=3))
        except Exception as exc:  # noqa: BLE001 - an implementation bug is a recorded tool error
            return ToolOutcome.failure(f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=3))
        return ToolOutcome(ok=True, result=result)

    def snapshot(self) -> dict[str, Any] | None:
        # Frozen here as well: a state object's snapshot() may hand out live references.
        snap = getattr(self.state, "snapshot", None)
        return freeze(snap()) if callable(snap) else None

    def close(self) -> None:
        close = getattr(self.state, "close", None)
        if callable(close):
            close()


def _is_signature_error(exc: TypeError) -> bool:
    tb = exc.__traceback__
    # A TypeError raised while binding arguments has no frame inside the called function.
    depth = 0
    while tb is not None:
        depth += 1
        tb = tb.tb_next
    return depth <= 1 and "argument" in str(exc)
