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


JITTER_S = 0.25


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
    with Clocked(latency_s=0.01) as server:
        summary = run_two_workers(tmp_path, server, 126, rpm=120)
    assert summary["n_completed"] == 126
    times = server.arrivals()
    assert len(times) == 126
    # A bucket of 120 starts full and refills at 2 a second. Per-worker buckets would have let all 126
    # through at once (63 a worker); one global budget makes the last 6 wait about 3 seconds.
    # Arrival times are taken at the server, after the permit: JITTER_S allows for a first request
    # that reached the server late (which shortens every later interval); per-worker buckets would
    # still put all 126 within the first tenth of a second.
    for i, t in enumerate(times):
        allowed = 120 + 2 * (t - times[0] + JITTER_S) + 2
        assert i + 1 <= allowed, f"request {i + 1} came {t - times[0]:.2f}s in"
    assert times[-1] - times[0] >= 2.0


def test_max_connections_holds_across_workers(ray_local: Any, tmp_path: Path) -> None:
    with Clocked(latency_s=0.1) as server:  # --ray-workers 2 here, $CALLBENCH_RAY_WORKERS above
        summary = run_two_workers(tmp_path, server, 40, max_connections=3, ray_workers=2)
    assert summary["n_completed"] == 40
    assert server.most_open() == 3  # 2 workers x 16 cases in flight, never more than 3 requests open
