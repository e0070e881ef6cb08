"""Which case is playing, and the hook through which a cassette answers its MCP calls.

``--record DIR`` and ``--replay DIR`` (:mod:`callbench.executors.cassette`) keep one tape per case and
trial. Two context variables carry what they need across layers that do not know of cassettes:

* :data:`current_play` is set by the engine while it opens a case's executor session, so that the
  session's tape is keyed by the case *and* its trial (an executor's ``start`` is told neither); it
  also carries the run folder, read by plugins through :func:`case_play`;
* :data:`active_tape` is set by a taped session around each call it makes, so that
  :meth:`callbench.executors.mcp.McpExecutor.forward`, the one place a call reaches a live server,
  hands the call to the tape (which answers it from the cassette, or records the live answer);
* :data:`server_replayed` is set while a session whose calls can never reach a server is opened
  (:func:`tool_server_replayed`, offered to plugins).

They live in the bottom layer, like :mod:`callbench.types.waits`, because the harness sets one and the
executors read both.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class CasePlay:
    """The case and trial whose executor session is being opened."""

    key: str
    """``suite:id``."""
    trial: int
    run_dir: Path | None = None
    """The run folder (``None`` when the session is opened outside a local run): an executor whose
    cases hand state to later cases (:attr:`callbench.types.case.Case.phase`) keeps it there."""


current_play: ContextVar[CasePlay | None] = ContextVar("callbench_current_play", default=None)
"""Set by the engine around ``executor.start(...)`` for a played case; ``None`` otherwise (a session
the state check opens to replay the gold path, a served case)."""


class TapeHook(Protocol):
    """Answers one MCP call in place of the live server (or records the live answer)."""

    async def __call__(self, executor: Any, name: str, arguments: dict[str, Any]) -> Any:
        """The reply (a :class:`~callbench.mcp.client.McpCallResult`) to ``name(arguments)``, sent
        through ``executor``; raises :class:`~callbench.errors.ToolServerFault` like a live call."""
        ...


active_tape: ContextVar[TapeHook | None] = ContextVar("callbench_active_tape", default=None)
"""The tape of the call in progress (``None``: the call goes to the live server)."""


server_replayed: ContextVar[bool] = ContextVar("callbench_server_replayed", default=False)
"""True while a taped executor opens a session under ``--replay`` with a miss policy that never goes
live (``strict``, ``model-visible``)."""


def tool_server_replayed() -> bool:
    """Whether the executor session being opened will have every MCP call answered from a cassette:
    no tool server will read what the session prepares for it (``mcp-git`` then builds no repository),
    and the session's state comes from the cassette's recorded state history."""
    return server_replayed.get()


def case_play() -> CasePlay | None:
    """The case, trial and run folder of the executor session being opened (read in
    ``Executor.start``); ``None`` outside a played case."""
    return current_play.get()
