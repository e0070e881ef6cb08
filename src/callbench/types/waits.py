"""Time a case spends waiting on infrastructure: the model's endpoint, a live tool server.

The engine's case clock (``callbench.harness.clock.CaseClock``) is published in :data:`endpoint_waits`
while a case plays; whatever waits on a service outside callbench (a model request, a live judge, an
MCP tool server) tells it when the wait begins and ends, so that the time is never charged to the
model, and a case limit that runs out during such a wait makes an error record instead of a verdict.
It lives in the bottom layer because both the providers and the executors report to it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol

TOOL_SERVER = "tool server"
"""What a case waits for while a live tool server (MCP) has its call (:meth:`EndpointWaits.note`)."""


class EndpointWaits(Protocol):
    """Told when a case starts and stops waiting on the endpoint (the engine's case clock)."""

    def begin(self) -> None:
        """The case starts waiting on the endpoint; may raise if the case has no time left."""

    def note(self, what: str) -> None:
        """What the case waits for now.

        One of ``request``, ``retry backoff``, ``rate limiter or connection slot``, ``tool server``.
        """

    def failed(self, cause: str) -> None:
        """An attempt failed and will be tried again; ``cause`` says why (one line, e.g. ``openai HTTP
        503: overloaded``). A case limit that runs out before an answer names the last cause."""

    def end(self) -> None:
        """The wait is over (an answer, or an error that propagates)."""


endpoint_waits: ContextVar[EndpointWaits | None] = ContextVar("callbench_endpoint_waits", default=None)
"""The running case's clock. A context variable, not an argument, so that every service the case
waits on is covered: the model under test, a live judge a tool calls, a live tool server."""
