"""The case time limit: a :class:`CaseClock` that charges the model only for its own time.

See docs/providers.md, "Case time limit".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from callbench.types.waits import TOOL_SERVER

T = TypeVar("T")

CASE_TIMEOUT = "CaseTimeout"
"""Error type of a case whose time limit ran out while the harness was waiting on the endpoint."""


FAILURE_CHARS = 240
"""At most this much of the last failed attempt's error goes into a ``CaseTimeout`` message."""


class CaseTimeoutError(Exception):
    """The case has no time left to wait on the endpoint (raised before a request is sent)."""


class CaseClock:
    """A case's time limit, charging the model only for the time it is responsible for.

    Two readings of one limit (``limit_s``):

    * **model time**, the wall time minus the time spent waiting on the endpoint (rate limiter,
      requests in flight, retry backoff; reported by :class:`~callbench.providers.model.Model`
      through ``endpoint_waits``), and minus the time a live tool server (MCP) had a call. Tools,
      built-in agents and the harness run on model time; when
      it reaches the limit the case stops as a scored ``timeout``;
    * **wall time**, which bounds the waits: the harness waits on the endpoint only until
      ``limit_s`` of wall time have passed. A wait cut by it, or one that would start after it,
      makes the case an error record (``CaseTimeout``), which ``--resume`` re-runs.

    One ``asyncio.timeout_at`` scope carries whichever deadline applies now: the wall deadline
    during a wait, the model-time deadline otherwise (never earlier than the wall deadline).
    ``charged_to`` says which one was armed, so it still tells after the timeout fired.

    Only waits of the case's own task count: a request another task makes (a shared judge request
    started in this case's context, which other cases await too) may outlive the case, and must
    not move its deadline. Once the case is over the clock ignores everything.
    """

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self._loop = asyncio.get_running_loop()
        self.started = self._loop.time()
        self.waited_s = 0.0
        """Seconds of finished waits on the endpoint."""
        self.waiting_for = ""
        """What the current (or last) wait was for: ``request``, ``retry backoff``..."""
        self.charged_to: str = "model"
        """``model`` or ``endpoint``: whose deadline the scope carries now."""
        self.failures = 0
        """Attempts of the current (or last) wait on the endpoint that failed and were retried."""
        self.last_failure = ""
        """Why the last of them failed (the provider's one-line error)."""
        self.credited_s = 0.0
        """Seconds callbench's event loop was held by another case or by callbench itself (see
        :mod:`callbench.harness.watchdog`): never charged to this case's model."""
        self._depth = 0
        self._wait_started = 0.0
        self._scope: asyncio.Timeout | None = None
        self._task: asyncio.Task[Any] | None = None

    async def run(self, episode: Awaitable[T]) -> T:
        """Await ``episode`` under the limit.

        Raises ``TimeoutError`` when it fires (see :attr:`charged_to`).
        """
        # A timeout scope in this task, not wait_for's extra task: the context variable that
        # carries the clock reaches the model, and no task is created per case.
        self._task = asyncio.current_task()
        self._scope = asyncio.timeout_at(self.started + self.limit_s)
        try:
            async with self._scope:
                return await episode
        finally:
            self._task = None

    def _listening(self) -> bool:
        return self._task is not None and asyncio.current_task() is self._task

    def expired(self) -> bool:
        """True once the limit fired."""
        return self._scope is not None and self._scope.expired()

    def begin(self) -> None:
        """A wait on the endpoint starts. Raises :class:`CaseTimeoutError` past the wall deadline."""
        if not self._listening():
            return
        if self._depth == 0:
            now = self._loop.time()
            self.failures, self.last_failure = 0, ""  # a new wait: earlier failures were answered
            if now >= self.started + self.limit_s:
                self.waiting_for = "request"
                raise CaseTimeoutError(self.message(now))
            self._wait_started = now
            self._arm("endpoint", self.started + self.limit_s)
        self._depth += 1

    def note(self, what: str) -> None:
        if self._listening():
            self.waiting_for = what

    def failed(self, cause: str) -> None:
        if self._listening():
            self.failures += 1
            self.last_failure = cause

    def end(self) -> None:
        if not self._listening():
            return
        self._depth -= 1
        if self._depth == 0:
            self.waited_s += self._loop.time() - self._wait_started
            self._arm("model", self._model_deadline())

    def credit(self, seconds: float) -> None:
        """``seconds`` of wall time were not this case's to pay (the loop was held elsewhere).

        During a wait on the endpoint the wait's own wall time already covers them."""
        if self._task is None or self._depth:
            return
        self.credited_s += seconds
        self._arm("model", self._model_deadline())

    def _model_deadline(self) -> float:
        return self.started + self.waited_s + self.credited_s + self.limit_s

    def _arm(self, charged_to: str, when: float) -> None:
        # Once fired, the scope keeps the deadline (and charged_to the owner) it fired with.
        if self._scope is not None and not self._scope.expired():
            self.charged_to = charged_to
            if self._scope.when() != when:  # a case's first wait keeps the deadline it started with
                self._scope.reschedule(when)

    def message(self, now: float | None = None) -> str:
        """Why a case became a ``CaseTimeout`` error record (one line)."""
        now = self._loop.time() if now is None else now
        waited = self.waited_s + (now - self._wait_started if self._depth else 0.0)
        if self.waiting_for == TOOL_SERVER:
            return (
                f"case time limit of {self.limit_s:g}s ran out while waiting on the tool server, which "
                f"had not answered the call; {waited:.1f}s of the case's {now - self.started:.1f}s were "
                "spent waiting on the model's endpoint and the tool server, never charged to the model"
            )
        what = self.waiting_for or "request"
        if self.failures:
            cause = " ".join(self.last_failure.split())  # one line, however the provider wrote it
            if len(cause) > FAILURE_CHARS:
                cause = cause[: FAILURE_CHARS - 1] + "…"
            plural = "" if self.failures == 1 else "s"
            what += f" after {self.failures} failed attempt{plural}, the last: {cause}"
        return (
            f"case time limit of {self.limit_s:g}s ran out while waiting on the endpoint "
            f"({what}); {waited:.1f}s of the case's {now - self.started:.1f}s "
            "were spent waiting on the endpoint, which is never charged to the model"
        )


class Pacer:
    """Spaces case starts by at least ``delay_s`` (for endpoints that must not be hammered): the engine's
    workers share one, and so do the cases of one Ray worker."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if self.delay_s <= 0:
            return
        async with self.lock:
            now = time.monotonic()
            if now < self.next_start:
                await asyncio.sleep(self.next_start - now)
            self.next_start = time.monotonic() + self.delay_s
