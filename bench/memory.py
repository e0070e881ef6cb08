"""Engine memory against the number of cases (issue 15, item 4: flat memory).

Runs 10,000, 100,000 and 1,000,000 single-call cases with the oracle (each case one call to a
starter tool and an answer, scored by the three strict tiers), each size in a fresh subprocess,
and prints the child's peak RSS (``ru_maxrss``) and cases per second, then the 1M - 10k difference
against the target (+50 MB).

    python bench/memory.py                         # 10000 100000 1000000
    python bench/memory.py --sizes 2000 20000      # smaller sets while developing
    python bench/memory.py --sizes 10000 100000 --compare-ref 66023ae   # the same against an older
                                                   # commit (a temporary git worktree)

The suite is built in code and its cases stream: :class:`StreamingSuite` makes each case (a copy of
one of eight starter single-call cases under a new id) when the engine asks for it, and ``select``
returns that lazy sequence. A path suite's ``cases.jsonl`` would be loaded whole, so the figure would
measure the suite loader, not the engine; the issue's figure is about the engine. Records go to a
temporary folder (a million records are a few GB) that is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

TARGET_MB = 50.0
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
NAME = "bench-flat"


def streaming_suite(n: int):  # type: ignore[no-untyped-def]
    """A suite of ``n`` single-call cases made on demand (classes built here: the child imports
    whichever callbench its ``PYTHONPATH`` names)."""
    import callbench
    from callbench.suites.suite import Suite
    from callbench.types.case import Case
    from callbench.types.hashing import sha256_of

    base = callbench.load_suite("starter")
    templates = [c for c in base.cases if c.id in SINGLE_CALL]

    class LazyCases(Sequence[Case]):
        """``n`` cases, each made when iterated to and dropped after."""

        def __len__(self) -> int:
            return n

        def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
            if isinstance(i, slice):
                return [self[j] for j in range(*i.indices(n))]
            template = templates[i % len(templates)]
            return template.model_copy(update={"id": f"{template.id}_{i}", "suite": NAME})

        def __iter__(self) -> Iterator[Case]:
            return (self[i] for i in range(n))

    @dataclass
    class StreamingSuite(Suite):
        def __post_init__(self) -> None:
            pass  # the eight templates were checked when the starter loaded

        @property
        def hash(self) -> str:  # its identity is its generator: eight templates and a count
            return sha256_of({"templates": [c.hash_payload() for c in templates], "n": n})

        def select(self, selectors: Sequence[str]):  # type: ignore[no-untyped-def, override]
            return self.cases if not selectors else super().select(selectors)

    return StreamingSuite(
        name=NAME,
        cases=LazyCases(),  # type: ignore[arg-type]
        registry=base.registry,
        executor=base.executor,
        system_prompt=base.system_prompt,
        source="bench",
    )


def child(n: int, out_dir: Path) -> None:
    """One measured run; prints a JSON line."""
    import callbench
    from callbench.catalog import catalog

    catalog().suites.register(NAME, lambda spec, options: streaming_suite(int(spec)), replace=True)
    started = time.perf_counter()
    result = callbench.run(f"{NAME}:{n}", "oracle", (), out_dir=out_dir, progress="quiet", concurrency=4)
    seconds = time.perf_counter() - started
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    accuracy = result.summary["tiers"]["real-tool-execution"]["accuracy"]
    print(json.dumps({"n": n, "seconds": seconds, "rss_mb": rss_mb, "accuracy": accuracy}))


def measure(n: int, src: Path) -> dict[str, float]:
    """Run one size in a fresh interpreter importing callbench from ``src``."""
    tmp = Path(tempfile.mkdtemp(prefix="callbench-memory-"))
    try:
        env = {**os.environ, "PYTHONPATH": str(src)}
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n), str(tmp / "run")],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def table(label: str, src: Path, sizes: list[int]) -> None:
    print(f"{label}: callbench from {src}")
    print(f"{'cases':>9} {'peak RSS MB':>12} {'cases/s':>9} {'oracle acc':>10}")
    rows = []
    for n in sizes:
        row = measure(n, src)
        rows.append(row)
        print(
            f"{n:>9} {row['rss_mb']:>12.1f} {n / row['seconds']:>9.0f} {row['accuracy']:>10.3f}", flush=True
        )
    if len(rows) > 1:
        growth = rows[-1]["rss_mb"] - rows[0]["rss_mb"]
        verdict = "within" if growth <= TARGET_MB else "OVER"
        print(f"{sizes[-1]} - {sizes[0]}: {growth:+.1f} MB ({verdict} the +{TARGET_MB:.0f} MB target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--compare-ref", help="also run against this git commit (a temporary worktree)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), Path(args.child[1]))
        return
    repo = Path(__file__).resolve().parent.parent
    table("this tree", repo / "src", args.sizes)
    if args.compare_ref:
        ref = Path(tempfile.mkdtemp(prefix="callbench-ref-")) / "wt"
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(ref), args.compare_ref],
            check=True,
        )
        try:
            table(f"ref {args.compare_ref}", ref / "src", args.sizes)
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(ref)], check=True)


if __name__ == "__main__":
    main()
