"""One Ray worker: builds its own run state from the run's :class:`RunConfig` (suites, scorers,
executors, the model; no run folder) and plays batches of (suite, case key, trial) with the engine's
own :func:`~callbench.harness.engine.run_job` on its event loop. Finished records go back to the
driver, which writes them."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from callbench.catalog import catalog
from callbench.executors.base import Executor
from callbench.harness.clock import Pacer
from callbench.harness.config import RunConfig
from callbench.harness.prepare import build_run_model, build_scorers, load_suites, shared_executor
from callbench.providers.limits import set_limiter_factory
from callbench.providers.model import Model
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.records import CaseRecord

JobId = tuple[str, str, int]
"""What crosses to a worker: (suite name, case key, trial)."""
PlayCase = Callable[[Suite, Case, int, dict[str, Any], Executor, Model, RunConfig], Awaitable[CaseRecord]]
"""The engine's way to play and score one (case, trial) (:func:`callbench.harness.engine.play_case`),
handed over by the engine so that this module does not import it (the engine dispatches to here)."""


@dataclass
class BatchResult:
    """What a worker sends back for one batch: its records and the model's request counters since the
    worker's previous batch (the driver adds them up for the summary's request figures)."""

    records: list[CaseRecord]
    counters: dict[str, int] = field(default_factory=dict)
    pid: int = 0


@dataclass
class WorkerState:
    """A worker's run state, built once from the config."""

    config: RunConfig
    model: Model
    cases: dict[tuple[str, str], tuple[Suite, Case]]
    scorers: dict[str, dict[str, Any]]
    executors: dict[str, Executor]
    gate: asyncio.Semaphore
    reported: Counter[str] = field(default_factory=Counter)

    @classmethod
    def build(cls, config: RunConfig) -> WorkerState:
        if not config.suites:  # the driver's prepare_run made the same choice
            config = replace(config, suites=(catalog().require_default_suite(),))
        suites = load_suites(config)
        cases = {(s.name, c.key): (s, c) for s in suites for c in s.cases}
        scorers = {s.name: build_scorers(s, config.tiers) for s in suites}
        model = build_run_model(config.model, config)
        return cls(config, model, cases, scorers, {}, asyncio.Semaphore(config.concurrency))

    def executor_for(self, suite: Suite, case: Case) -> Executor:
        return shared_executor(self.executors, suite, case, self.config.executor)

    def counter_delta(self) -> dict[str, int]:
        now = Counter(self.model.counters)
        delta = now - self.reported
        self.reported = now
        return dict(delta)


class CaseWorker:
    """The Ray actor class (made remote by the backend): many batches may run at once on its loop,
    together never more than ``concurrency`` cases, case starts spaced by ``delay_s`` on this worker."""

    def __init__(self, config: RunConfig, play: PlayCase, broker: Any = None, name: str = "") -> None:
        self.config, self.play, self.broker, self.name = config, play, broker, name
        self.state: WorkerState | None = None
        self.ready = asyncio.Lock()
        self.pacing = Pacer(config.delay_s)

    async def _state(self) -> WorkerState:
        async with self.ready:  # built on the actor's own loop, once
            if self.state is None:
                if self.broker is not None:
                    from callbench.harness.backends.ray_limits import remote_limiter_factory

                    set_limiter_factory(remote_limiter_factory(self.broker, self.name))
                self.state = WorkerState.build(self.config)
            return self.state

    async def close(self) -> None:
        """Close the model's connections and the executors (the driver ends the worker next)."""
        if self.state is not None:
            await self.state.model.aclose()
            for executor in self.state.executors.values():
                await executor.aclose()

    def pid(self) -> int:
        """The worker's process id (tests kill it)."""
        return os.getpid()

    async def run_batch(self, batch: list[JobId]) -> BatchResult:
        """Play every (case, trial) of ``batch``; infrastructure failures are error records as ever."""
        state = await self._state()

        async def one(job_id: JobId) -> CaseRecord:
            suite_name, key, trial = job_id
            suite, case = state.cases[(suite_name, key)]
            async with state.gate:
                await self.pacing.wait()
                executor = state.executor_for(suite, case)
                return await self.play(
                    suite, case, trial, state.scorers[suite_name], executor, state.model, self.config
                )

        records = await asyncio.gather(*(one(job_id) for job_id in batch))
        return BatchResult(list(records), state.counter_delta(), os.getpid())
