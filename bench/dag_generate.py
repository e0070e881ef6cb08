"""Speed of the DAG task generator and of planner + scoring per task.

Run: ``python bench/dag_generate.py``. Prints medians (targets: <= 20 ms for n_core=40, depth=39,
CIN=20, DIN=20; <= 1 s for a 1,000-function graph).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

from callbench.benchmarks.funcbenchgen.executor import DagExecutor
from callbench.benchmarks.funcbenchgen.generator import generate
from callbench.benchmarks.funcbenchgen.planner import PlannerAgent
from callbench.benchmarks.funcbenchgen.scorer import DagScorer
from callbench.benchmarks.funcbenchgen.suite import load_suite
from callbench.benchmarks.funcbenchgen.tasks import DagParams
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy
from callbench.suites.suite import SuiteOptions
from callbench.types.messages import GenerationSettings


def _median_ms(fn, repeats: int) -> float:
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_generation() -> None:
    cases = [
        (
            "n_core=40 depth=39 CIN=20 DIN=20",
            {"n_core": 40, "depth": 39, "n_conn": 20, "n_dis": 20},
            50,
            20.0,
        ),
        (
            "n_core=40 depth=10 CIN=20 DIN=20",
            {"n_core": 40, "depth": 10, "n_conn": 20, "n_dis": 20},
            50,
            20.0,
        ),
        (
            "1,000 functions: n_core=400 depth=30 CIN=300 DIN=300",
            {"n_core": 400, "depth": 30, "n_conn": 300, "n_dis": 300},
            10,
            1000.0,
        ),
        ("1,000 functions: n_core=1000 depth=100", {"n_core": 1000, "depth": 100}, 10, 1000.0),
        ("1,000 functions: n_core=1000 depth=999 (path)", {"n_core": 1000, "depth": 999}, 10, 1000.0),
    ]
    print("generation (median over seeds, validation included)")
    for label, values, repeats, target in cases:
        ms = _median_ms(lambda i, v=values: generate(DagParams(**v, seed=i * 100)), repeats)
        print(f"  {label:<52} {ms:9.2f} ms   target <= {target:g} ms   {'OK' if ms <= target else 'SLOW'}")


def bench_planner(spec: str) -> None:
    suite = load_suite(spec, SuiteOptions())
    executor, scorer, agent = DagExecutor(), DagScorer(), PlannerAgent()
    times, passed = [], 0
    for case in suite.cases:
        start = time.perf_counter()
        episode = Episode(case, suite.candidate_tools(case), ModePolicy("production-parity"), "")
        trace = asyncio.run(
            run_episode(episode, agent, executor.start(case, Path("."), suite), GenerationSettings())
        )
        passed += scorer.score(case, trace).passed
        times.append((time.perf_counter() - start) * 1000)
    print(f"  {spec:<52} {statistics.median(times):9.2f} ms/task  ({passed}/{len(times)} solved)")


def main() -> None:
    bench_generation()
    print("planner episode + dag scoring (median per task)")
    bench_planner("n_core=10;depth=4;n_conn=5;n_dis=5;seeds=10")
    bench_planner("n_core=40;depth=1,20,39;n_conn=20;n_dis=20;seeds=5")


if __name__ == "__main__":
    main()
