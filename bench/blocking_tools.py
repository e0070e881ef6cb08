#!/usr/bin/env python
"""Blocking tools and the event loop: N cases whose tool blocks for 1 s, and a case limit on such a tool.

    python bench/blocking_tools.py [--cases 4] [--repeat 3]

Prints the wall time of the cases (start-up excluded) at ``--concurrency N`` next to the serial and
ideal figures, and how long after its start a 0.3 s case limit ends a case stuck in a 1 s tool.
Targets: wall <= 1.3 s for 4 cases; the limit fires at ~0.3 s.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import callbench
from callbench.catalog import catalog
from callbench.executors.python import PythonExecutor
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract

SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}


def slow(key: str) -> dict[str, str]:
    time.sleep(1.0)
    return {"key": key}


def suite(name: str, n: int, timeout_s: float) -> Suite:
    cases = [
        Case(
            id=f"c{i}",
            instruction="slow",
            timeout_s=timeout_s,
            expected=[{"tool": "slow", "arguments": {"key": f"k{i}"}}],
        )
        for i in range(n)
    ]
    return Suite(
        name=name,
        cases=cases,
        registry=ToolRegistry([ToolContract(name="slow", parameters=SCHEMA)]),
        executor=PythonExecutor({"slow": slow}),
    )


def case_wall(n: int, concurrency: int, timeout_s: float) -> float:
    name = f"bench-blocking-{n}-{timeout_s}"
    built = suite(name, n, timeout_s)
    catalog().suites.register(name, lambda spec, options: built, replace=True)
    with tempfile.TemporaryDirectory() as tmp:
        records = callbench.run(
            name, model="oracle", out_dir=Path(tmp) / "r", progress="quiet", concurrency=concurrency
        ).records
    return max(r.started_at + r.duration_ms / 1000 for r in records) - min(r.started_at for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    walls = [case_wall(args.cases, args.cases, 30.0) for _ in range(args.repeat)]
    limits = [case_wall(1, 1, 0.3) for _ in range(args.repeat)]
    print(
        f"{args.cases} cases x 1 s blocking tool at --concurrency {args.cases}: median wall "
        f"{statistics.median(walls):.2f} s (serial would be {args.cases:.1f} s, ideal 1.0 s; target <= 1.3 s)"
    )
    print(
        "case limit 0.3 s on a 1 s blocking tool: the case ends after median "
        f"{statistics.median(limits):.2f} s"
    )


if __name__ == "__main__":
    main()
