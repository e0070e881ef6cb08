"""Endpoint limits that hold across all Ray workers together.

One :class:`LimitBroker` actor owns the usual :class:`EndpointLimiter` of every endpoint (its
buckets and connection semaphore live on the broker's event loop); each worker's limiters are
:class:`RemoteLimiter` objects that ask the broker for every permit. A request pays one round trip to
the broker (about a millisecond on one machine) and only when a limit is set: without ``--rpm``,
``--tpm`` or ``--max-connections`` workers keep their local, unlimited limiters.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from callbench.providers.limits import EndpointLimiter, EndpointLimits


def any_limit(limits: EndpointLimits) -> bool:
    """Whether a limit is set at all (otherwise there is nothing to share)."""
    return any(v is not None for v in (limits.rpm, limits.tpm, limits.max_connections))


class LimitBroker:
    """The one holder of every endpoint's limiter state (a Ray async actor)."""

    def __init__(self) -> None:
        self.limiters: dict[str, EndpointLimiter] = {}
        self.held: Counter[tuple[str, str]] = Counter()
        """Connection slots held, by (worker, endpoint): a dead worker's slots are given back."""

    def _limiter(self, key: str, limits: EndpointLimits) -> EndpointLimiter:
        if key not in self.limiters:
            self.limiters[key] = EndpointLimiter(limits)
        return self.limiters[key]

    async def acquire(self, worker: str, key: str, limits: EndpointLimits, estimated_tokens: int) -> None:
        """Wait for a request slot of ``key`` on behalf of ``worker``."""
        await self._limiter(key, limits).acquire(estimated_tokens)
        self.held[(worker, key)] += 1

    async def release(self, worker: str, key: str, estimated_tokens: int, used_tokens: int | None) -> None:
        """Give the slot back and settle the token reservation."""
        if self.held[(worker, key)] > 0:
            self.held[(worker, key)] -= 1
            self.limiters[key].release(estimated_tokens, used_tokens)

    async def pause(self, key: str, seconds: float) -> None:
        """Hold every worker's requests to ``key`` (a 429 with Retry-After seen by one of them)."""
        if key in self.limiters:
            self.limiters[key].pause(seconds)

    async def forget(self, worker: str) -> int:
        """Release the slots a dead worker held; returns how many."""
        freed = 0
        for (holder, key), count in list(self.held.items()):
            if holder == worker:
                for _ in range(count):
                    self.limiters[key].release(0, None)
                freed += count
                del self.held[(holder, key)]
        return freed


class RemoteLimiter(EndpointLimiter):
    """A worker's view of one endpoint's limiter: every permit comes from the broker."""

    def __init__(self, broker: Any, worker: str, key: str, limits: EndpointLimits) -> None:
        super().__init__(EndpointLimits())  # no local state: the broker counts
        self.limits = limits
        self.broker, self.worker, self.key = broker, worker, key

    def pause(self, seconds: float) -> None:
        self.broker.pause.remote(self.key, seconds)

    async def acquire(self, estimated_tokens: int) -> None:
        await self.broker.acquire.remote(self.worker, self.key, self.limits, estimated_tokens)

    def release(self, estimated_tokens: int, used_tokens: int | None) -> None:
        # Not awaited (release is synchronous); the broker applies calls from one worker in order.
        self.broker.release.remote(self.worker, self.key, estimated_tokens, used_tokens)


def remote_limiter_factory(broker: Any, worker: str) -> Any:
    """The limiter factory a worker installs (:func:`callbench.providers.limits.set_limiter_factory`)."""

    def make(key: str, limits: EndpointLimits) -> EndpointLimiter:
        return RemoteLimiter(broker, worker, key, limits) if any_limit(limits) else EndpointLimiter(limits)

    return make
