"""``--rpm`` and ``--max-connections`` hold across all Ray workers together, not per worker: the
requests' arrival times at one local server show the global budget."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from protocol_server import ProtocolServer, Turn
from text_suite import write_text_suite

from callbench.harness.backends.ray_backend import WORKERS_ENV
from callbench.harness.config import RunConfig
from callbench.harness.engine import run_async


class Clocked(ProtocolServer):
    """Notes when each request arrives and when its reply is made (after the latency)."""

    def __init__(self, latency_s: float) -> None:
        super().__init__(lambda api, body: self._reply(), latency_s=latency_s)
        self.events: list[tuple[float, int]] = []
        self.guard = threading.Lock()
        self.fault_rule = self._arrive

    def _arrive(self, api: Any, body: Any) -> None:
        with self.guard:
            self.events.append((time.monotonic(), +1))

    def _reply(self) -> Turn:
        with self.guard:
            self.events.append((time.monotonic(), -1))
        return Turn(text="done")

    def arrivals(self) -> list[float]:
        return sorted(t for t, step in self.events if step > 0)

    def most_open(self) -> int:
        level = peak = 0
        for _, step in sorted(self.events):
            level += step
            peak = max(peak, level)
        return peak


def run_two_workers(tmp_path: Path, server: ProtocolServer, n: int, **limits: Any) -> dict[str, Any]:
    config = RunConfig(
        suites=(str(write_text_suite(tmp_path, n)),),
        model=f"openai:bench@{server.url}",
        out_dir=tmp_path / "run",
        concurrency=16,
        cache=False,
        backend="ray",
        **limits,
    )
    summary: dict[str, Any] = asyncio.run(run_async(config)).summary
    return summary


def test_rpm_holds_across_workers(ray_local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, "2")
    started = time.monotonic()  # CLOCK_MONOTONIC is one clock for every process on the machine
    with Clocked(latency_s=0.01) as server:
        summary = run_two_workers(tmp_path, server, 130, rpm=120)
    assert summary["n_completed"] == 130
    times = server.arrivals()
    assert len(times) == 130
    # One global bucket of 120 starts full (no earlier than the run) and refills at 2 a second, and a
    # request reaches the server only after its permit: so by any time t, at most 120 + 2 (t - started)
    # requests can have arrived, whatever the workers' start-up and scheduling delays.
    for i, t in enumerate(times):
        assert i + 1 <= 120 + 2 * (t - started) + 1, (
            f"request {i + 1} came {t - started:.2f}s after the start"
        )
    # And the limit made requests wait: the last 10 permits come at the refill rate, one every half
    # second, at least 5 s after the bucket was made, while the first 120 go out as fast as the workers
    # ask (0.2 to 0.7 s measured here). Per-worker buckets (65 a worker, 120 each) would let the last 11
    # arrive within one burst, and fail the bound above too (request 127 came 2.54 s after the start).
    assert times[-1] - times[-11] >= 1.5, f"the last 11 requests came within {times[-1] - times[-11]:.2f}s"


def test_max_connections_holds_across_workers(ray_local: Any, tmp_path: Path) -> None:
    with Clocked(latency_s=0.1) as server:  # --ray-workers 2 here, $CALLBENCH_RAY_WORKERS above
        summary = run_two_workers(tmp_path, server, 40, max_connections=3, ray_workers=2)
    assert summary["n_completed"] == 40
    assert server.most_open() == 3  # 2 workers x 16 cases in flight, never more than 3 requests open
