"""Per-endpoint limits: concurrent connections, requests per minute, tokens per minute.

All providers that share a ``connection_key()`` (the same base URL) share one limiter, so
two models on one vLLM server, or a model and its judge on one vendor, respect one budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from callbench.types.run_options import DEFAULT_REQUEST_TIMEOUT_S  # noqa: F401 - re-exported: the providers' default


@dataclass(frozen=True)
class EndpointLimits:
    """Limits for one endpoint; ``None`` means unlimited."""

    max_connections: int | None = None
    rpm: float | None = None
    tpm: float | None = None


class RateBucket:
    """Token bucket refilled continuously at ``per_minute / 60`` per second.

    The level may go negative when a request used more than was reserved (tokens/minute is
    settled after the response); later requests then wait for the debt to be repaid.
    """

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.level = float(per_minute)
        self._clock = clock
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self, amount: float) -> float:
        """Wait until ``amount`` is available, take it, and return the seconds waited."""
        amount = min(amount, self.capacity)  # a request bigger than a minute's budget still runs
        waited = 0.0
        async with self._lock:  # FIFO: one waiter at a time drains the bucket
            while True:
                self._refill()
                if self.level >= amount:
                    self.level -= amount
                    return waited
                pause = (amount - self.level) / self.rate
                await asyncio.sleep(pause)
                waited += pause

    def settle(self, delta: float) -> None:
        """Charge (positive) or refund (negative) the difference between use and reservation."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


class EndpointLimiter:
    """Connection semaphore plus request and token buckets for one endpoint."""

    def __init__(self, limits: EndpointLimits) -> None:
        self.limits = limits
        self._sem = asyncio.Semaphore(limits.max_connections) if limits.max_connections else None
        self._requests = RateBucket(limits.rpm) if limits.rpm else None
        self._tokens = RateBucket(limits.tpm) if limits.tpm else None
        self._paused_until = 0.0

    def pause(self, seconds: float) -> None:
        """Hold every new request to this endpoint for ``seconds`` (after a 429 with Retry-After).

        Without this, the other requests in flight would each meet the same rate limit.
        """
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def acquire(self, estimated_tokens: int) -> None:
        """Wait for a request slot; pair every call with :meth:`release`."""
        while (wait := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        if self._requests is not None:
            await self._requests.take(1)
        if self._tokens is not None:
            await self._tokens.take(estimated_tokens)
        if self._sem is not None:
            await self._sem.acquire()

    def release(self, estimated_tokens: int, used_tokens: int | None) -> None:
        """Free the connection slot and settle the token reservation with the real usage."""
        if self._sem is not None:
            self._sem.release()
        if self._tokens is not None and used_tokens is not None:
            self._tokens.settle(used_tokens - estimated_tokens)


_limiters: dict[tuple[int, str], EndpointLimiter] = {}

LimiterFactory = Callable[[str, EndpointLimits], EndpointLimiter]
"""Makes the limiter of an endpoint (its connection key and limits) in the running loop."""
_factory: LimiterFactory | None = None


def set_limiter_factory(factory: LimiterFactory | None) -> None:
    """Make this process's endpoint limiters with ``factory`` (``None``: the local default).

    A distributed backend installs one in each worker so that limits hold across all workers
    together: its limiters ask a shared authority for every permit instead of counting alone.
    """
    global _factory
    _factory = factory
    _limiters.clear()


def limiter_for(connection_key: str, limits: EndpointLimits) -> EndpointLimiter:
    """The shared limiter of an endpoint in the running event loop.

    asyncio primitives belong to one loop, so limiters are kept per loop as well as per key.
    A later caller with different limits for the same endpoint gets the limiter already made.
    """
    key = (id(asyncio.get_running_loop()), connection_key)
    limiter = _limiters.get(key)
    if limiter is None:
        if len(_limiters) > 256:  # drop limiters of finished loops
            _limiters.clear()
        made = _factory(connection_key, limits) if _factory is not None else EndpointLimiter(limits)
        limiter = _limiters[key] = made
    return limiter


def estimate_tokens(text_chars: int) -> int:
    """Rough token estimate (4 characters per token) used to reserve tokens/minute budget."""
    return max(1, text_chars // 4)
