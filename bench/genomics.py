"""Benchmark of the genomics pack: the oracle over both suites in the three strict tiers.

    python bench/genomics.py [--repeat 3]

Prints the whole-pack wall time (target: the seed's 143 + 29 = 172 cases in three tiers within
10 s on one core; the pack has 220 cases, so the time is also shown scaled to 172), and the median
per-case time split into retrieval (top-24 over the full registry, target <= 1 ms), tool execution
and scoring. Figures depend on the machine and its file system.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from callbench import api
from callbench.benchmarks.genomics.suite import load_all
from callbench.harness.prepare import build_scorers
from callbench.tools.retrieve import select_tools

TIERS = ["native-function-contract", "real-tool-execution", "task-completion-execution"]


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else 0.0


def time_pack(repeat: int, root: Path) -> tuple[list[float], object]:
    """Wall time of ``callbench run genomics --model oracle`` in the three tiers.

    Each repeat uses a fresh run folder.
    """
    walls, result = [], None
    for index in range(repeat):
        start = time.perf_counter()
        result = api.run("genomics", model="oracle", tier=TIERS, out_dir=root / f"run{index}")
        walls.append(time.perf_counter() - start)
    return walls, result


def per_case_split(result: object) -> dict[str, list[float]]:
    """Retrieval (re-timed), execution (from the traces) and scoring (re-scored) per case, in seconds."""
    suite = load_all()
    tools = list(suite.registry)
    scorers = build_scorers(suite, tuple(TIERS))
    by_id = {c.id: c for c in suite.cases}
    select_tools("warm up the index", tools, 24)
    split: dict[str, list[float]] = {"retrieval": [], "execution": [], "scoring": []}
    for record in result.records:  # type: ignore[attr-defined]
        case = by_id[record.case_id]
        start = time.perf_counter()
        for _ in range(20):
            select_tools(case.prompt_text(), tools, 24)
        split["retrieval"].append((time.perf_counter() - start) / 20)
        split["execution"].append(sum(c.duration_ms for c in record.trace.calls) / 1000)
        start = time.perf_counter()
        for scorer in scorers.values():
            scorer.score(case, record.trace)
        split["scoring"].append(time.perf_counter() - start)
    return split


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="whole-pack runs (the median is reported)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:  # records are read from the run folder: keep it
        report(args.repeat, *time_pack(args.repeat, Path(tmp)))


def report(repeat: int, walls: list[float], result: object) -> None:
    """Print the figures of the timed runs."""
    records = result.records  # type: ignore[attr-defined]
    passed = sum(all(v.passed for v in r.verdicts.values()) for r in records)
    wall = statistics.median(walls)
    print(f"genomics pack: {len(records)} cases x {len(TIERS)} tiers, oracle passed {passed}/{len(records)}")
    print(
        f"whole pack wall time: median {wall:.2f} s over {repeat} runs "
        f"({', '.join(f'{w:.2f}' for w in walls)}); scaled to 172 cases: {wall * 172 / len(records):.2f} s "
        f"(target <= 10 s)"
    )
    split = per_case_split(result)
    print(
        f"median per case: retrieval {_median_ms(split['retrieval']):.3f} ms (target <= 1 ms), "
        f"execution {_median_ms(split['execution']):.3f} ms, "
        f"scoring (3 tiers) {_median_ms(split['scoring']):.3f} ms"
    )
    print(
        f"max per case: retrieval {max(split['retrieval']) * 1000:.3f} ms, "
        f"execution {max(split['execution']) * 1000:.1f} ms, scoring {max(split['scoring']) * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
