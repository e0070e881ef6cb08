"""The executor contract: a per-case session that turns a tool call into a result."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from callbench.suites.suite import Suite
    from callbench.types.case import Case


@dataclass
class ToolOutcome:
    """The result of executing one call."""

    ok: bool
    result: Any = None
    error: str | None = None
    content: str | None = None
    """Exact text returned to the model; default: JSON of ``result`` (or the error)."""
    annotations: dict[str, Any] = field(default_factory=dict)
    """Executor facts recorded on the trace call (node kind, failure class, matched gold call...)."""

    @classmethod
    def failure(cls, message: str, **annotations: Any) -> ToolOutcome:
        return cls(ok=False, error=message, annotations=dict(annotations))


class ExecutorSession(ABC):
    """Executes the calls of one case, in order. Fresh and isolated per case."""

    @abstractmethod
    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Execute one call. Must not raise for tool-level failures: return ``ToolOutcome.failure``."""

    # Optional hooks the loop honours when a session defines them:
    #   begin_round(round_index, tool_calls): called before a round's calls are executed one by one;
    #   finished: a property; True ends the episode after the current round (stop_reason executor_end);
    #   sees_invalid_calls = True: schema-invalid and unknown-tool calls (with parsed arguments) are
    #   passed to call() instead of being rejected by the loop (the executor answers with its own text).

    def snapshot(self) -> dict[str, Any] | None:
        """The state now, for state-comparison diagnostics (``None``: stateless).

        Must be a detached value (see :func:`callbench.types.frozen.freeze`): later calls in the same session
        must not change a snapshot already taken.
        """
        return None

    def close(self) -> None:
        """Release resources (temporary folders...)."""


class Executor(ABC):
    """A factory of per-case sessions."""

    name: str = "executor"

    @abstractmethod
    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        """Open a fresh session for ``case``.

        ``workdir`` is a per-case temporary path that does not exist yet: an executor that writes
        files creates it (``mkdir(parents=True, exist_ok=True)``); the engine removes it after the case.
        """


def resolve_executor(target: str | Executor) -> Executor:
    """An executor instance from a catalog name (the entry is called without arguments) or an instance."""
    if isinstance(target, Executor):
        return target
    from callbench.catalog import catalog

    return catalog().executors.get(target)()
