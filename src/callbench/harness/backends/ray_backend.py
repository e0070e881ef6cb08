"""``--backend ray``: cases run in Ray actors, each with the engine's own async loop; this process (the
driver) stays the single writer of ``records.jsonl``.

The driver cuts the run's (suite, case key, trial) list into small batches and keeps a few in flight
per worker; each finished batch comes back as records that go through the same
:class:`~callbench.harness.engine.RecordSink` as on the local backend, so writing, observers, resume and
the summary do not depend on the backend. A worker that dies fails its in-flight batches: their cases
go back to the front of the queue and a new worker takes the dead one's place. A batch's records
arrive together or not at all, and the driver accepts a record only while its (case, trial) is in
flight, so no case is written twice; that set holds the in-flight cases only, not the run's.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from callbench.errors import ConfigError, ProviderError
from callbench.harness.backends.ray_limits import LimitBroker, any_limit
from callbench.harness.backends.ray_session import ray_session
from callbench.harness.backends.ray_worker import BatchResult, CaseWorker, JobId, PlayCase
from callbench.harness.config import RunConfig
from callbench.providers.limits import EndpointLimits
from callbench.types.records import CaseRecord

WORKERS_ENV = "CALLBENCH_RAY_WORKERS"
"""How many workers (default: one per CPU of the Ray cluster)."""
MAX_BATCH = 32
BROKER_CALLS = 1_000_000
CLOSE_TIMEOUT_S = 10.0


@dataclass
class Flight:
    """One batch in flight: which worker slot and actor play it."""

    slot: int
    actor: Any
    batch: list[JobId]


class RayBackend:
    """A connected Ray session and the run's config; :meth:`run` plays the run's cases."""

    def __init__(self, ray: Any, config: RunConfig) -> None:
        self.ray, self.config = ray, config
        self.replaced = 0

    @classmethod
    @contextmanager
    def connect(cls, config: RunConfig) -> Iterator[RayBackend]:
        """Connect to Ray as the config asks (one line if Ray is missing or the address is dead)."""
        if config.agent is not None:
            raise ConfigError("--backend ray plays models; an --agent run uses the local backend")
        if config.watch:  # rounds happen in the workers; only finished records reach this process
            raise ConfigError("--watch prints rounds as this process plays them; use it with --backend local")
        with ray_session(config.ray_address) as ray:
            yield cls(ray, config)

    def n_workers(self) -> int:
        if self.config.ray_workers is not None:  # --ray-workers
            return self.config.ray_workers
        given = os.environ.get(WORKERS_ENV, "").strip()
        if given:
            if not given.isdigit() or int(given) < 1:
                raise ConfigError(f"{WORKERS_ENV}={given!r}: expected a whole number of workers, at least 1")
            return int(given)
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    async def run(
        self,
        ids: Iterable[JobId],
        total: int,
        add: Callable[[CaseRecord], None],
        counters: Counter[str] | None,
        play: PlayCase,
    ) -> None:
        """Play the ``total`` jobs of ``ids`` on the workers; ``add`` each record as its batch returns.
        ``ids`` is read as workers need more, so the driver never holds the run's job list."""
        if total <= 0:
            return
        per_worker = self.config.concurrency
        size = max(1, min(MAX_BATCH, per_worker // 2))
        n = min(self.n_workers(), math.ceil(total / size))
        cpus = max(1.0, float(self.ray.cluster_resources().get("CPU", 1)))
        limits = EndpointLimits(self.config.max_connections, self.config.rpm, self.config.tpm)
        # Every request in flight may wait inside the broker at once; releases must never queue behind
        # them (Ray's default of 1,000 concurrent calls per async actor could deadlock a large run).
        broker = (
            self.ray.remote(LimitBroker).options(max_concurrency=BROKER_CALLS).remote()
            if any_limit(limits)
            else None
        )
        pool = _Pool(self.ray, self.config, play, broker, num_cpus=min(1.0, cpus / n))
        try:
            pool.start(n)
            queue = _BatchQueue(_batches(iter(ids), size))
            await self._drive(pool, queue, add, counters, depth=math.ceil(per_worker / size) + 1)
        finally:
            await pool.stop()
            if broker is not None:
                self.ray.kill(broker)

    async def _drive(
        self,
        pool: _Pool,
        queue: _BatchQueue,
        add: Callable[[CaseRecord], None],
        counters: Counter[str] | None,
        depth: int,
    ) -> None:
        flights: dict[asyncio.Future[Any], Flight] = {}
        in_flight: set[tuple[str, int]] = set()
        while queue or flights:
            for slot in range(len(pool.actors)):
                while queue and sum(f.slot == slot for f in flights.values()) < depth:
                    batch = queue.popleft()
                    flights[pool.submit(slot, batch)] = Flight(slot, pool.actors[slot], batch)
                    in_flight.update((key, trial) for _, key, trial in batch)
            done, _ = await asyncio.wait(flights, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                flight = flights.pop(future)
                result = self._result(future, flight, pool, queue, in_flight)
                if result is None:
                    continue
                for record in result.records:
                    if record.record_id in in_flight:  # the first copy wins; a second is dropped
                        in_flight.discard(record.record_id)
                        add(record)
                if counters is not None:
                    counters.update(result.counters)

    def _result(
        self,
        future: asyncio.Future[Any],
        flight: Flight,
        pool: _Pool,
        queue: _BatchQueue,
        in_flight: set[tuple[str, int]],
    ) -> BatchResult | None:
        """The batch's result, or ``None`` after a dead worker (its cases are queued again)."""
        exceptions = self.ray.exceptions
        try:
            result: BatchResult = future.result()
            return result
        except exceptions.RayTaskError as exc:  # the batch itself raised: a fatal provider error, a bug
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc) from None
        except (exceptions.RayActorError, exceptions.WorkerCrashedError, exceptions.ObjectLostError):
            again = [job for job in flight.batch if (job[1], job[2]) in in_flight]
            in_flight.difference_update((key, trial) for _, key, trial in again)
            if again:
                queue.appendleft(again)
            if pool.actors[flight.slot] is flight.actor:  # its other batches fail too: replace once
                self.replaced += 1
                if self.replaced > 2 * len(pool.actors) + 3:
                    raise ProviderError(
                        f"Ray workers died {self.replaced} times during the run; stopping (the cases "
                        "written so far are kept: --resume continues the run)"
                    ) from None
                pool.replace(flight.slot)
            return None


def _batches(ids: Iterator[JobId], size: int) -> Iterator[list[JobId]]:
    while batch := list(itertools.islice(ids, size)):
        yield batch


class _BatchQueue:
    """Batches still to play: those of dead workers first (queued again), then the run's next ones,
    made only when taken."""

    def __init__(self, fresh: Iterator[list[JobId]]) -> None:
        self._again: deque[list[JobId]] = deque()
        self._fresh = fresh
        self._next: list[JobId] | None = next(fresh, None)

    def __bool__(self) -> bool:
        return bool(self._again) or self._next is not None

    def popleft(self) -> list[JobId]:
        if self._again:
            return self._again.popleft()
        batch, self._next = self._next, next(self._fresh, None)
        assert batch is not None, "popleft on an empty queue"
        return batch

    def appendleft(self, batch: list[JobId]) -> None:
        self._again.appendleft(batch)


class _Pool:
    """The run's worker actors, by slot; a dead one is replaced in its slot."""

    def __init__(self, ray: Any, config: RunConfig, play: PlayCase, broker: Any, num_cpus: float) -> None:
        self.ray, self.config, self.play, self.broker = ray, config, play, broker
        self.cls = ray.remote(CaseWorker)
        self.options = {"num_cpus": num_cpus, "max_restarts": 0, "max_concurrency": 1000}
        self.actors: list[Any] = []
        self.names: list[str] = []
        self.generation = 0
        self.run_token = uuid.uuid4().hex[:8]

    def _spawn(self) -> tuple[Any, str]:
        self.generation += 1
        name = f"callbench-{self.run_token}-worker-{self.generation}"  # named: tools and tests find it
        return self.cls.options(name=name, **self.options).remote(
            self.config, self.play, self.broker, name
        ), name

    def start(self, n: int) -> None:
        for _ in range(n):
            actor, name = self._spawn()
            self.actors.append(actor)
            self.names.append(name)

    def submit(self, slot: int, batch: list[JobId]) -> asyncio.Future[Any]:
        ref = self.actors[slot].run_batch.remote(batch)
        return asyncio.wrap_future(ref.future())

    def replace(self, slot: int) -> None:
        self.ray.kill(self.actors[slot], no_restart=True)
        if self.broker is not None:  # connection slots the dead worker held go back
            self.broker.forget.remote(self.names[slot])
        self.actors[slot], self.names[slot] = self._spawn()

    async def stop(self) -> None:
        """Let each worker close its model and executors (their subprocesses, connections), then end it."""
        closing = [asyncio.wrap_future(actor.close.remote().future()) for actor in self.actors]
        try:
            await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), CLOSE_TIMEOUT_S)
        except TimeoutError:
            pass  # a worker that cannot close in time is ended all the same
        finally:
            for actor in self.actors:
                self.ray.kill(actor, no_restart=True)
