"""Speed of the CodeXomics importer and of replaying the imported suite.

Usage: python bench/codexomics_import.py [DATA_DIR] [--repeat N]

DATA_DIR defaults to $CALLBENCH_CODEXOMICS_DATA or ../shared/data/codexomics next to the repo.
Prints the median import time (2 suites + the YAML registry), the write time, and the median
per-case time of the oracle over every imported case (contract executor, loop + scoring of the
three strict tiers), plus the golden-run replay.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from callbench.benchmarks.codexomics.golden import replay_golden
from callbench.benchmarks.codexomics.suite import import_codexomics
from callbench.benchmarks.codexomics.write import write_suite
from callbench.executors.contract import ContractExecutor
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy
from callbench.providers.agents.oracle import OracleAgent
from callbench.scoring.tiers import score_tier
from callbench.suites.loader import load_suite_path
from callbench.types.messages import GenerationSettings
from callbench.types.verdict import TIERS


def default_data() -> Path:
    env = os.environ.get("CALLBENCH_CODEXOMICS_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data" / "codexomics"


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


async def oracle_case_times(suite) -> tuple[list[float], int]:
    times, passed = [], 0
    executor = ContractExecutor()
    for case in suite.cases:
        start = time.perf_counter()
        episode = Episode(
            case, list(suite.registry_for(case)), ModePolicy("production-parity"), suite.system_prompt
        )
        trace = await run_episode(
            episode, OracleAgent().for_case(case), executor.start(case, None, suite), GenerationSettings()
        )
        verdicts = [score_tier(t, case, trace, suite.registry_for(case)) for t in TIERS]
        times.append(time.perf_counter() - start)
        passed += all(v.passed for v in verdicts)
    return times, passed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", nargs="?", type=Path, default=default_data())
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = [args.data / "automatic_simple.json", args.data / "automatic_complex.json"]
    imports = [
        timed(lambda: import_codexomics(files, args.data / "tools_registry")) for _ in range(args.repeat)
    ]
    result = imports[-1][0]
    print(
        f"import: {len(result.cases)} cases, {len(result.contracts)} contracts, "
        f"{result.count('error')} errors / {result.count('warning')} warnings / {result.count('info')} info"
    )
    print(
        f"import time: median {statistics.median(t for _, t in imports) * 1000:.1f} ms "
        f"over {args.repeat} runs"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder, write_s = timed(lambda: write_suite(result, Path(tmp) / "suite"))
        suite, load_s = timed(lambda: load_suite_path(folder))
        print(f"write: {write_s * 1000:.1f} ms; load with the native loader: {load_s * 1000:.1f} ms")
        times, passed = asyncio.run(oracle_case_times(suite))
        print(
            f"oracle, 3 tiers: {passed}/{len(times)} cases pass every tier; "
            f"median {statistics.median(times) * 1000:.2f} ms/case, total {sum(times):.2f} s"
        )
        report, golden_s = timed(lambda: replay_golden(suite, args.data / "complex_golden_paths.json"))
        print(
            f"golden replay: {29 - len(report.failing())}/29 golden pass, failing {report.failing()}, "
            f"{sum(not r.verdict.passed for r in report.wrong)}/{len(report.wrong)} wrong runs fail, "
            f"{report.schema_valid_runs}/29 golden runs schema-valid; {golden_s * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
