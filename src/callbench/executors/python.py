"""The ``python`` executor: real implementation functions bound to tools.

Implementations are ordinary (blocking) functions. Each call runs in a worker thread, so a slow tool
never stalls the other cases on the event loop and the case time limit always fires; the calls of
one case still run one at a time, in order. A call the limit cut off keeps running in its thread
until it returns; its result is discarded and the session reports no final state for that case.

Two kinds of implementation skip the thread (whose hand-off costs about 0.2 ms per call on a small
machine): an ``async def`` implementation is awaited on the event loop, and a tool named in
``inline`` (declared by the suite: in-memory work bounded to microseconds, no IO) is called there
directly. A tool declared inline that blocks stalls every case and defeats the time limit, so declare
only what cannot block.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import traceback
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from callbench.errors import ToolBug, ToolError, ToolServerFault
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.frozen import freeze

ToolFunction = Callable[..., Any]
StateFactory = Callable[[Case, Path], Any]

TOOL_THREADS = 32
"""Worker threads shared by every python session of the process (tool calls in flight at once)."""
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def tool_pool() -> ThreadPoolExecutor:
    """The process-wide pool tool implementations run in (created on first use)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=TOOL_THREADS, thread_name_prefix="callbench-tool")
        return _POOL


class PythonExecutor(Executor):
    """Calls ``bindings[name](**arguments)``, or ``bindings[name](state, **arguments)`` with a state factory.

    The state (a workspace, a database...) is created fresh for every case by ``state_factory``. A
    ``ToolError`` (or arguments the function's signature rejects) is an expected failure returned to
    the model; any other exception is a :class:`ToolBug`: the case becomes an error record.
    ``inline`` names the tools that run on the event loop instead of a worker thread (see the module
    docstring: only in-memory work that cannot block).
    """

    name = "python"

    def __init__(
        self,
        bindings: Mapping[str, ToolFunction],
        state_factory: StateFactory | None = None,
        inline: Collection[str] = (),
    ) -> None:
        self.bindings = dict(bindings)
        self.state_factory = state_factory
        unknown = sorted(set(inline) - set(self.bindings))
        if unknown:
            raise ValueError(f"inline names tools with no binding: {', '.join(unknown)}")
        self.inline = frozenset(inline)

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        state = self.state_factory(case, workdir) if self.state_factory else None
        return PythonSession(self.bindings, state, self.inline)


class PythonSession(ExecutorSession):
    """One case's state and its bound implementations."""

    def __init__(
        self, bindings: dict[str, ToolFunction], state: Any, inline: frozenset[str] = frozenset()
    ) -> None:
        self.bindings = bindings
        self.state = state
        self.inline = inline
        self.running = 0
        """Calls still running in a worker thread (one the case time limit cut off)."""
        self._lock = threading.Lock()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        function = self.bindings.get(name)
        if function is None:
            return ToolOutcome.failure(f"Tool {name!r} has no implementation bound in this executor")
        if inspect.iscoroutinefunction(function):
            return await self._ainvoke(function, name, arguments)
        if name in self.inline:
            return self._invoke(function, name, arguments)
        with self._lock:
            self.running += 1
        # In the caller's context: what it set for the call (a cassette's HTTP tape) reaches the tool.
        job = tool_pool().submit(contextvars.copy_context().run, self._invoke, function, name, arguments)
        # Counted on the thread's own future: a call the time limit cancelled may still be running.
        job.add_done_callback(self._done)
        return await asyncio.wrap_future(job)

    def _done(self, _: Any) -> None:
        with self._lock:
            self.running -= 1

    def _invoke(self, function: ToolFunction, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        try:
            result = function(self.state, **arguments) if self.state is not None else function(**arguments)
        except Exception as exc:  # noqa: BLE001 - sorted into a failure or a tool bug
            return _failure(name, exc)
        return ToolOutcome(ok=True, result=result)

    async def _ainvoke(self, function: ToolFunction, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        try:
            if self.state is not None:
                result = await function(self.state, **arguments)
            else:
                result = await function(**arguments)
        except Exception as exc:  # noqa: BLE001 - sorted into a failure or a tool bug
            return _failure(name, exc)
        return ToolOutcome(ok=True, result=result)

    def snapshot(self) -> dict[str, Any] | None:
        # A call cut off by the time limit may still be changing the state: no snapshot then.
        if self.running:
            return None
        snap = getattr(self.state, "snapshot", None)
        return (
            freeze(snap()) if callable(snap) else None
        )  # frozen: a state's snapshot() may hand out live references

    def close(self) -> None:
        close = getattr(self.state, "close", None)
        if callable(close) and not self.running:
            close()


def _failure(name: str, exc: Exception) -> ToolOutcome:
    """A ``ToolError`` or a rejected signature is the model's failed call; a ``ToolServerFault`` (an
    HTTP service that gave no answer, a cassette miss) is raised as it is; anything else raises
    :class:`ToolBug` (called inside the ``except`` block, so the traceback is the tool's)."""
    if isinstance(exc, ToolError):
        return ToolOutcome.failure(str(exc))
    if isinstance(exc, ToolServerFault):  # a service the tool calls gave no answer: infrastructure
        raise exc
    if isinstance(exc, TypeError) and _is_signature_error(exc):
        return ToolOutcome.failure(f"Invalid arguments for {name}: {exc}")
    raise ToolBug(name, exc, traceback.format_exc()) from exc


def _is_signature_error(exc: TypeError) -> bool:
    tb = exc.__traceback__
    # A TypeError raised while binding arguments has no frame inside the called function.
    depth = 0
    while tb is not None:
        depth += 1
        tb = tb.tb_next
    return depth <= 1 and "argument" in str(exc)


class SuiteBindingsExecutor(Executor):
    """``python-bindings``: runs a path suite's own Python tools (``bindings:`` in ``suite.yaml``,
    :mod:`callbench.suites.bindings`) like :class:`PythonExecutor` runs a benchmark's, one
    :class:`PythonExecutor` per suite."""

    name = "python-bindings"

    def __init__(self) -> None:
        self._by_suite: dict[int, PythonExecutor] = {}

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        bindings = suite.bindings
        if bindings is None:
            raise ToolBug(
                "python-bindings", ValueError(f"suite {suite.name!r} names no bindings"), "no traceback"
            )
        executor = self._by_suite.get(id(bindings))
        if executor is None:
            executor = self._by_suite[id(bindings)] = PythonExecutor(
                bindings.functions, bindings.state_factory
            )
        return executor.start(case, workdir, suite)
