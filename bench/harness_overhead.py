"""Harness overhead: the oracle agent over many single-call cases (loop + execution + scoring).

Prints the median and p95 per-case time measured inside the engine (retrieval, round loop, real
Python execution, three-tier scoring, record writing), the wall time per case including suite
loading and the summary, and two traced-memory figures for growing case counts: the growth while
cases run and the whole-run peak. While cases run, the harness keeps nothing per case except one
slim outcome record (verdicts, reason codes, call statuses, timings: about 11 KB each) that the
summary and its intervals need; traces, results and arguments go to ``records.jsonl`` and are
released. So memory grows by that slim record per case and by nothing else.

    python bench/harness_overhead.py            # 500, 1000, 2000, 4000 cases
    python bench/harness_overhead.py 2000       # one size

Each size runs twice: with the starter's in-memory tools on the event loop as the suite declares
them (``inline``), and with every tool in a worker thread (``thread``), which shows the cost of the
thread hand-off that keeps blocking tools from stalling other cases.
Target (issue 2): <= 2 ms per single-call case; flat memory as the case count grows.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import callbench
from callbench.benchmarks.starter.world import BINDINGS, make_world
from callbench.catalog import catalog
from callbench.executors.python import PythonExecutor
from callbench.suites.suite import Suite

SINGLE_CALL = (
    "weather_paris",
    "weather_tokyo_fahrenheit",
    "convert_distance",
    "schedule_meeting",
    "notes_search_one_of",
    "forecast_berlin",
    "convert_temperature",
    "email_call_only",
)


class _RunPhasePeak:
    """Observer: traced-memory peak growth between the first case and the last (suite already loaded)."""

    def __init__(self) -> None:
        self.base = 0
        self.peak = 0

    def on_run_start(self, header: object, total: int) -> None:
        tracemalloc.reset_peak()
        self.base = tracemalloc.get_traced_memory()[0]

    def on_run_end(self, summary: object) -> None:
        pass

    def on_case_end(self, record: object) -> None:
        self.peak = max(self.peak, tracemalloc.get_traced_memory()[1] - self.base)


def synthetic_suite(n: int, threaded: bool = False) -> Suite:
    base = callbench.load_suite("starter")
    singles = [c for c in base.cases if c.id in SINGLE_CALL]
    cases = []
    for i in range(n):
        template = singles[i % len(singles)]
        cases.append(
            template.model_copy(update={"id": f"{template.id}_{i}", "suite": "bench-single"}, deep=True)
        )
    return Suite(
        name="bench-single",
        cases=cases,
        registry=base.registry,
        executor=PythonExecutor(BINDINGS, make_world) if threaded else base.executor,
        system_prompt=base.system_prompt,
        source="bench",
    )


def measure(n: int, threaded: bool = False) -> dict[str, float]:
    """Time one run, then repeat it under tracemalloc for the memory peak (tracing slows Python)."""
    catalog().suites.register(
        "bench-single", lambda spec, options: synthetic_suite(int(spec), threaded), replace=True
    )
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = callbench.run(
            f"bench-single:{n}", "oracle", "all", out_dir=Path(tmp) / "timed", progress="quiet", concurrency=1
        )
        wall = time.perf_counter() - started
        durations = sorted(r.duration_ms for r in result.records)
        accuracy = result.summary["tiers"]["real-tool-execution"]["accuracy"]
        del result
        run_peak = _RunPhasePeak()
        tracemalloc.start()
        callbench.run(
            f"bench-single:{n}",
            "oracle",
            "all",
            out_dir=Path(tmp) / "traced",
            progress="quiet",
            concurrency=1,
            observers=[run_peak],
        )
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {
        "n": n,
        "tools": "thread" if threaded else "inline",
        "run_peak_mib": run_peak.peak / 2**20,
        "median_ms": statistics.median(durations),
        "p95_ms": durations[int(0.95 * len(durations)) - 1],
        "wall_per_case_ms": 1000 * wall / n,
        "peak_mib": peak / 2**20,
        "accuracy": accuracy,
    }


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [500, 1000, 2000, 4000]
    print(
        f"{'cases':>6} {'tools':>7} {'median ms':>10} {'p95 ms':>8} {'wall/case ms':>13} "
        f"{'run-phase MiB':>14} {'total peak MiB':>15} {'oracle acc':>10}"
    )
    for n, threaded in ((n, threaded) for n in sizes for threaded in (False, True)):
        row = measure(n, threaded)
        print(
            f"{row['n']:>6} {row['tools']:>7} {row['median_ms']:>10.3f} {row['p95_ms']:>8.3f} "
            f"{row['wall_per_case_ms']:>13.3f} {row['run_peak_mib']:>14.2f} {row['peak_mib']:>15.1f} "
            f"{row['accuracy']:>10.3f}"
        )


if __name__ == "__main__":
    main()
