"""The event loop a run goes on: uvloop when it is installed (not on Windows), else asyncio's own.

uvloop runs the loop, its timers and its sockets in C: with 100 requests in flight it takes about a
third of the loop's CPU off every request. ``CALLBENCH_EVENT_LOOP=asyncio`` keeps asyncio's loop
(to rule the loop out when chasing a problem).
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
EVENT_LOOP_ENV = "CALLBENCH_EVENT_LOOP"
YOUNG_GENERATION = 20_000
"""Allocations between two young-generation collections during a run (Python's default is 700).

A case allocates a few thousand container objects (messages, records, verdicts), nearly all freed by
reference counting; at 700 the collector ran every few cases and promoted enough to trigger full
collections: about 0.1 ms of CPU per case, 0.03 ms at 20,000 (measured on 2,000 one-round cases).
Only garbage in reference cycles waits longer to be freed."""


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor, or ``None`` (asyncio's default) when absent or turned off."""
    if os.environ.get(EVENT_LOOP_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the fastest loop available, with a young generation sized for a run."""
    with _young_generation(YOUNG_GENERATION), asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


@contextmanager
def _young_generation(threshold: int) -> Iterator[None]:
    """Collect the young generation every ``threshold`` allocations (never less often than set);
    the thresholds in force before are restored afterwards."""
    before = gc.get_threshold()
    if before[0] and before[0] < threshold:  # 0: the collector's thresholds were switched off
        gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
