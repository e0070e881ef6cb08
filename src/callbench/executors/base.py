"""The executor contract: a per-case session that turns a tool call into a result, asynchronously.

An :class:`Executor` opens one :class:`ExecutorSession` per case. The harness awaits
:meth:`ExecutorSession.call` for every call it executes, so a session may wait on a service and a
blocking tool implementation runs off the event loop (see :mod:`callbench.executors.python`): a slow
tool never stalls other cases, and the case time limit always fires. Every hook the loop calls is
declared here with its default; a session overrides what it needs, and hooks return values instead
of changing the episode.

A tool signals an *expected* failure (bad input, an empty clipboard...) by raising
:class:`~callbench.errors.ToolError` or returning :meth:`ToolOutcome.failure`: the model hears
the message and the call is scored as a failed execution. Anything else an implementation raises
is a bug in the tool, not the model's fault: the session raises :class:`~callbench.errors.ToolBug`
and the case becomes an error record (counted, flagged, excluded from accuracy, re-run by
``--resume``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from callbench.errors import UserError

if TYPE_CHECKING:
    from callbench.suites.suite import Suite
    from callbench.types.case import Case
    from callbench.types.contract import ToolContract
    from callbench.types.messages import Message, ToolCall

T = TypeVar("T")


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

    def heard(self, result_json: str | None = None) -> str:
        """The text the caller hears: ``content`` when set, else the result as JSON (``result_json``
        when the caller made it already), else the error as JSON."""
        if self.content is not None:
            return self.content
        if self.ok:
            return (
                result_json
                if result_json is not None
                else json.dumps(self.result, ensure_ascii=False, default=str)
            )
        return json.dumps({"error": self.error}, ensure_ascii=False)


@dataclass(frozen=True)
class TurnDirective:
    """What a session asks of the loop after a model turn (the value of :meth:`ExecutorSession.after_turn`).

    ``action``: ``"default"`` (the usual flow: a turn without calls ends the episode), ``"continue"``
    (another round follows, e.g. the next scripted user turn) or ``"stop"`` (end the episode now,
    recorded as ``max_rounds``). ``messages`` are appended to the conversation first; ``offer`` adds
    tools to the ones offered from the next round on.
    """

    action: Literal["default", "continue", "stop"] = "default"
    messages: tuple[Message, ...] = ()
    offer: tuple[ToolContract, ...] = ()


DEFAULT_TURN = TurnDirective()


class ExecutorSession(ABC):
    """Executes the calls of one case, in order. Fresh and isolated per case."""

    sees_invalid_calls: ClassVar[bool] = False
    """True: schema-invalid and unknown-tool calls whose arguments parsed are passed to :meth:`call`
    instead of being rejected by the loop (the session answers with its benchmark's own text)."""

    @abstractmethod
    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Execute one call. Expected failures are outcomes (``ToolOutcome.failure``), never exceptions."""

    async def opening(self, messages: list[Message]) -> list[Message] | None:
        """The conversation the case starts from, given the one its case and suite make (system
        prompt first): a session whose prompt depends on state it loaded (BFCL memory puts the memory
        read from an earlier phase's snapshot in the system prompt) returns its own list. Awaited once,
        before the first round. ``None`` (the default) keeps ``messages``. A
        :class:`~callbench.errors.UserError` raised here (e.g. a prerequisite the run did not play)
        makes the case an ``error`` record of type ``case_setup``."""
        return None

    async def begin_round(self, round_index: int, calls: Sequence[ToolCall]) -> None:  # noqa: B027 - optional hook
        """Called before a round's calls are executed one by one (sessions that answer a turn's
        parallel calls together look at all of them here). Default: nothing."""

    def episode_over(self) -> bool:
        """True ends the episode after the current round (``stop_reason: executor_end``), e.g. when a
        replayed gold path ended. Default: never."""
        return False

    async def after_turn(self, had_calls: bool) -> TurnDirective:
        """Called after each model turn; scripted conversations return the next user turn here."""
        return DEFAULT_TURN

    def user_tools(self) -> list[ToolContract]:
        """Conversation cases: the tools the *user* may call (dual control, e.g. the user's phone).
        Default: none."""
        return []

    async def call_user_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Execute a call the user side makes on its own tools. Default: refused (no user tools)."""
        return ToolOutcome.failure(f"unknown user tool {name!r}: this case's user has no tools")

    def snapshot(self) -> dict[str, Any] | None:
        """The state now, for state-comparison diagnostics (``None``: stateless, or not knowable).

        Must be a detached value (see :func:`callbench.types.frozen.freeze`): later calls in the same
        session must not change a snapshot already taken.
        """
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release per-case resources (temporary folders...)."""

    async def aclose(self) -> None:
        """End the case's session: what :meth:`close` releases, and what only an awaited stop can (a
        tool server started for this case). The harness awaits it when the case ends, whether it
        finished, failed or ran out of time; the default calls :meth:`close`."""
        self.close()


class Executor(ABC):
    """A factory of per-case sessions."""

    name: str = "executor"

    @abstractmethod
    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        """Open a fresh session for ``case``.

        ``workdir`` is a per-case temporary path that does not exist yet: an executor that writes
        files creates it (``mkdir(parents=True, exist_ok=True)``); the engine removes it after the case.
        """

    def plan_cases(self, cases: int, concurrency: int) -> None:  # noqa: B027 - optional hook
        """Told by the engine, on the run's event loop before the first case, how many cases (times
        trials) will open a session and how many run at once (an executor that starts a tool server
        per case starts them ahead). Default: nothing."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release run-level resources (connections shared by sessions); called once at the end of a run."""


def resolve_executor(target: str | Executor) -> Executor:
    """An executor instance from a catalog name (the entry is called without arguments) or an instance."""
    if isinstance(target, Executor):
        return target
    from callbench.catalog import catalog

    executor = catalog().executors.get(target)()
    if not isinstance(executor, Executor):  # the catalog's ExecutorFactory Protocol says less
        made = type(executor).__name__
        raise UserError(f"executor {target!r}: its factory returned {made}, not an Executor")
    return executor


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from synchronous code (tests, offline scoring).

    Inside a running event loop the coroutine runs on a fresh loop in a helper thread, so this never
    fails for being called from async code (it does block that loop while it waits).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="callbench-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
