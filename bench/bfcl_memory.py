"""Benchmark and check: the built-in oracle on all of BFCL memory (``bfcl:memory``: 3 x 155 questions
after 3 x 37 prerequisite conversations), at two concurrencies.

Prints per backend the questions the oracle passes, whether the two runs' verdicts and run-folder
snapshots are identical, and the wall time of each run; with --reference, replays the runs through
bfcl-eval's own inference-side code in BFCL's order (tests/benchmarks/bfcl/memory_replay.py) and prints
the entries whose memory, call answers or snapshots differ (none expected).

The vector backend uses the tests' deterministic stand-in encoder unless --embedding-model names a
local sentence-transformers folder (BFCL uses all-MiniLM-L6-v2; nothing is downloaded).

Usage: python bench/bfcl_memory.py [--concurrency 1 4] [--embedding-model PATH] [--reference]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks" / "bfcl"))

CATEGORIES = ("memory_kv", "memory_vector", "memory_rec_sum")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--embedding-model", help="a local sentence-transformers folder (default: stand-in)")
    parser.add_argument("--reference", action="store_true", help="replay through bfcl-eval's own flow")
    args = parser.parse_args()

    from memory_standin import StandInEncoder

    import callbench
    from callbench.benchmarks.bfcl import memory_backends

    work = Path(tempfile.mkdtemp(prefix="bfcl-memory-"))
    model_folder = args.embedding_model
    if model_folder is None:  # the stand-in, loaded in place of a model from this (empty) folder
        encoder = StandInEncoder()
        memory_backends.load_encoder = lambda path: encoder
        model_folder = str(work / "stand-in")
        Path(model_folder).mkdir()
    runs = {}
    for concurrency in args.concurrency:
        started = time.perf_counter()
        runs[concurrency] = callbench.run(
            "bfcl:memory",
            "oracle",
            out_dir=work / f"c{concurrency}",
            progress="quiet",
            cache=False,
            concurrency=concurrency,
            suite_options={"embedding_model": model_folder},
        )
        print(f"concurrency {concurrency}: {time.perf_counter() - started:.1f} s wall")
    first = runs[args.concurrency[0]]
    for category in CATEGORIES:
        records = [r for r in first.records if r.category == category]
        passed = sum(r.status == "completed" and r.verdicts["bfcl"].passed for r in records)
        prereqs = [r for r in first.records if r.category == category + "_prereq"]
        errors = sum(r.status != "completed" for r in prereqs)
        played = f"{len(prereqs)} conversations, {errors} errors"
        print(f"{category}: oracle passes {passed}/{len(records)} ({played})")
    outcomes = {
        c: {r.case_id: (r.status, r.verdicts["bfcl"].passed) for r in run.records} for c, run in runs.items()
    }
    print(
        "verdicts identical across concurrencies:",
        len({str(sorted(o.items())) for o in outcomes.values()}) == 1,
    )
    snapshots = {
        c: {p.relative_to(run.run_dir): p.read_bytes() for p in (run.run_dir / "bfcl_memory").rglob("*.json")}
        for c, run in runs.items()
    }
    print(
        "snapshots identical across concurrencies:",
        len({str(sorted(s.items())) for s in snapshots.values()}) == 1,
    )
    if args.reference:
        from memory_replay import replay

        def bind(category: str) -> None:
            if category == "memory_vector":
                memory_backends.memory_module("vector", memory_backends.load_encoder(model_folder))

        os.environ["BFCL_PROJECT_ROOT"] = str(work / "bfcl-root")
        for concurrency, run in runs.items():
            records = {r.case_id: r for r in run.records}
            count, mismatches = replay(records, run.run_dir, CATEGORIES, work / f"ref{concurrency}", bind)
            differ = len(mismatches)
            print(f"bfcl-eval's own flow, run at concurrency {concurrency}: {count} entries, {differ} differ")
            for line in mismatches[:20]:
                print("  ", line)


if __name__ == "__main__":
    main()
