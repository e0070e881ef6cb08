"""Stalls of callbench's event loop: who caused them, and that nobody else pays for them.

Every case of a run shares one event loop. A tool, an executor or a built-in agent that blocks it
(a ``time.sleep``, a long computation on the loop) holds up every other case in flight, and their
case clocks keep running meanwhile: without this watchdog a case limit could fire in another case
because of it, and its timeout would be scored as that case's model's failure.

:class:`LoopWatchdog` finds stalls with a heartbeat on the loop (a callback every ``tick_s``; a beat
that comes ``threshold_s`` or more late ends a stall of that length) and names their cause with a
thread that, while the beat is late, reads which task holds the loop and which case that task is
playing. When a hold of the loop ends, before any timer that expired during it runs, every other
case's clock is credited with its length (never charged to their models); a stall of a second or
more is also charged to the case that caused it: its record carries ``trace.loop_stall_s`` and the
summary a ``blocked_event_loop`` QC flag. A hold no case caused (callbench's own code, a protocol
callback) is credited to every case.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

STALL_THRESHOLD_S = 1.0
"""A stall this long (seconds) is charged to the case that caused it (``trace.loop_stall_s``, a QC
flag). Shorter holds may be an OS descheduling the loop thread on a loaded machine, which looks the
same from inside: they are credited to the other cases' clocks but charged to nobody."""
CREDIT_THRESHOLD_S = 0.1
"""A heartbeat this late means the loop was held: the other cases' clocks are credited."""
TICK_S = 0.05
"""Seconds between heartbeats, and between the watching thread's looks."""


class Creditable(Protocol):
    """A case clock that can be told that some wall time was not its case's to pay."""

    def credit(self, seconds: float) -> None: ...


CaseId = tuple[str, int]
"""(case key, trial)."""


@dataclass
class Stall:
    """One stall of the loop: the case that caused it (``None``: no case) and its length."""

    case: CaseId | None
    seconds: float


@dataclass
class LoopWatchdog:
    """Heartbeat on the running loop plus a watching thread (see the module docstring)."""

    threshold_s: float = STALL_THRESHOLD_S
    credit_after_s: float = CREDIT_THRESHOLD_S
    tick_s: float = TICK_S
    stalls: list[Stall] = field(default_factory=list)
    """Every stall of the run at least ``threshold_s`` long, in order."""
    _loop: asyncio.AbstractEventLoop | None = None
    _expected: float = 0.0
    _beat: float = 0.0
    _culprit: CaseId | None = None
    _sampled: bool = False
    _cases: dict[asyncio.Task[object], CaseId] = field(default_factory=dict)
    _clocks: dict[asyncio.Task[object], Creditable] = field(default_factory=dict)
    _charged: dict[CaseId, float] = field(default_factory=dict)
    _handle: asyncio.TimerHandle | None = None
    _thread: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        """Start watching the running loop (call from a coroutine on it)."""
        self._loop = asyncio.get_running_loop()
        self._beat = time.monotonic()
        self._schedule(self._loop.time())
        self._thread = threading.Thread(target=self._watch, name="callbench-loop-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the heartbeat and the thread."""
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    # --- what the engine tells it ---------------------------------------------------------------

    def enter(self, case: CaseId) -> None:
        """The current task starts playing ``case``."""
        task = asyncio.current_task()
        if task is not None:
            self._cases[task] = case

    def attach_clock(self, clock: Creditable) -> None:
        """The current task's case runs under ``clock`` (credited for stalls it did not cause)."""
        task = asyncio.current_task()
        if task is not None:
            self._clocks[task] = clock

    def leave(self) -> float:
        """The current task's case is over: the seconds of loop stalls it caused."""
        task = asyncio.current_task()
        if task is None:
            return 0.0
        self._clocks.pop(task, None)
        case = self._cases.pop(task, None)
        return self._charged.pop(case, 0.0) if case is not None else 0.0

    # --- on the loop ----------------------------------------------------------------------------

    def _schedule(self, now: float) -> None:
        assert self._loop is not None
        self._expected = now + self.tick_s
        self._handle = self._loop.call_at(self._expected, self._heartbeat)

    def _heartbeat(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        self._beat = time.monotonic()
        late = now - self._expected
        if late >= self.credit_after_s:
            self._stall_ended(self._culprit, late)
        self._culprit, self._sampled = None, False
        if not self._stop.is_set():
            self._schedule(now)

    def _stall_ended(self, culprit: CaseId | None, seconds: float) -> None:
        # Runs before the timers that expired during the stall (their deadlines are later than this
        # beat's), so the credit below reschedules them before they fire.
        if seconds >= self.threshold_s:
            self.stalls.append(Stall(culprit, seconds))
            if culprit is not None:
                self._charged[culprit] = self._charged.get(culprit, 0.0) + seconds
        for task, clock in list(self._clocks.items()):
            if culprit is None or self._cases.get(task) != culprit:
                clock.credit(seconds)

    # --- on the watching thread -----------------------------------------------------------------

    def _watch(self) -> None:
        loop = self._loop
        while not self._stop.wait(self.tick_s):
            if self._sampled or time.monotonic() - self._beat < self.credit_after_s + self.tick_s:
                continue
            # The beat is late: whichever task runs on the loop now is holding it.
            task = asyncio.current_task(loop) if loop is not None else None
            self._culprit = self._cases.get(task) if task is not None else None
            self._sampled = True


current_watchdog: contextvars.ContextVar[LoopWatchdog | None] = contextvars.ContextVar(
    "callbench_loop_watchdog", default=None
)
"""The run's watchdog, seen by every case task of the run (tasks copy the context they start in)."""
