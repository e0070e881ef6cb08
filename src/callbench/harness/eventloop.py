"""The event loop a run goes on: uvloop when it is installed (not on Windows), else asyncio's own.

uvloop runs the loop, its timers and its sockets in C: with 100 requests in flight it takes about a
third of the loop's CPU off every request. ``CALLBENCH_EVENT_LOOP=asyncio`` keeps asyncio's loop
(to rule the loop out when chasing a problem).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
EVENT_LOOP_ENV = "CALLBENCH_EVENT_LOOP"


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
    """``asyncio.run(main)`` on the fastest loop available."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
