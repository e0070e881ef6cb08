"""Scale-out simulation: the local backend and the Ray backend at 1, 2 and 4 workers, side by side.

Starts ``tests/helpers/protocol_server.py`` in its own process (127.0.0.1, text answers so every case is
one request, ``--latency`` per request), writes a suite of ``--cases`` one-round cases, and runs it
through the engine with the real ``openai`` provider:

* ``local``: one process at ``--concurrency`` cases in flight;
* ``ray xW``: W Ray workers (actors), each at ``--concurrency`` cases in flight, so W times the load.

For each it prints the throughput (cases/s), the wall time (including the Ray workers' start-up: a
process each, importing callbench and loading the suite), the engine wall (first case start to last
case end, from the records), and both against the ideal ``cases x latency / (workers x concurrency)``:
a ratio of 1.0 is a run bound only by the endpoint's latency. Ray itself is started once (its start-up
is printed apart). The machine's CPU count bounds what more workers can give: every request costs the
harness CPU (client, engine, scoring) and the driver CPU to write its record; see docs/scale-out.md.

Usage: python bench/scale_out.py [--cases 20000] [--concurrency 50] [--latency 0.1] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # concurrency.py: the same suite and server as the single-process bench

from concurrency import start_server, write_suite  # noqa: E402

from callbench.harness.backends.ray_session import ray_session  # noqa: E402
from callbench.harness.config import RunConfig  # noqa: E402
from callbench.harness.engine import run_async  # noqa: E402


def one_run(
    suite: Path, port: int, out: Path, args: argparse.Namespace, workers: int | None
) -> dict[str, Any]:
    """One run; ``workers`` None is the local backend."""
    config = RunConfig(
        suites=(str(suite),),
        model=f"openai:bench@http://127.0.0.1:{port}/v1",
        out_dir=out,
        concurrency=args.concurrency,
        cache=False,
        backend="local" if workers is None else "ray",
        ray_workers=workers,
    )
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = asyncio.run(run_async(config))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    records = result.records
    assert len(records) == args.cases and result.summary["n_error"] == 0, result.summary.get("errors_by_type")
    first = min(r.started_at for r in records)
    last = max(r.started_at + r.duration_ms / 1000 for r in records)
    ideal = args.cases * args.latency / ((workers or 1) * args.concurrency)
    return {"wall": wall, "engine": last - first, "ideal": ideal, "driver_cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=50, help="cases in flight per worker")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--workers", default="1,2,4", help="Ray worker counts, comma-separated")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    proc, port = start_server(args.latency)
    rows: list[tuple[str, dict[str, Any]]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = write_suite(Path(tmp), args.cases)
            load_before = os.getloadavg()[0]
            rows.append(("local", one_run(suite, port, Path(tmp) / "local", args, None)))
            started = time.perf_counter()
            with ray_session(None, num_cpus=max(counts)):  # one logical CPU per worker
                ray_start = time.perf_counter() - started
                for n in counts:
                    rows.append((f"ray x{n}", one_run(suite, port, Path(tmp) / f"ray{n}", args, n)))
            load_after = os.getloadavg()[0]
    finally:
        proc.terminate()
        proc.wait(10)
    print(
        f"cases={args.cases} latency={args.latency * 1000:.0f} ms concurrency={args.concurrency} per worker; "
        f"{os.cpu_count()} CPUs; Ray start-up {ray_start:.1f} s (not counted below)"
    )
    print(
        f"{'backend':<9} {'ideal s':>8} {'wall s':>8} {'cases/s':>8} {'wall/ideal':>10} "
        f"{'engine s':>9} {'engine/ideal':>12} {'driver CPU s':>12}"
    )
    for name, r in rows:
        print(
            f"{name:<9} {r['ideal']:>8.1f} {r['wall']:>8.1f} {args.cases / r['wall']:>8.0f} "
            f"{r['wall'] / r['ideal']:>10.2f} {r['engine']:>9.1f} {r['engine'] / r['ideal']:>12.2f} "
            f"{r['driver_cpu']:>12.1f}"
        )
    print(f"load average (1 min) before/after: {load_before:.2f} / {load_after:.2f}")


if __name__ == "__main__":
    main()
