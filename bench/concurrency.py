"""Engine + openai provider throughput against a local server with a fixed latency.

Starts ``tests/helpers/protocol_server.py`` in a separate process (127.0.0.1, 100 ms per
request, text answers so every case is one round), writes a suite of N one-round cases, runs it
through ``callbench.run`` with the real ``openai`` provider at concurrency C, and prints:

* wall time vs the ideal ``N x latency / C`` (target: within 10%),
* the engine-only wall time (first request to last record) vs the same ideal,
* harness CPU time per request (this process only; the server runs elsewhere),
* the same requests through the ``Model`` wrapper alone (no engine), to split provider cost
  from engine cost,
* the load average, since other processes on a small machine inflate every figure.

With a fixed latency every wave of C responses arrives at once and is handled one after the
other on the event loop, so each round trip waits on average C x (CPU per request) / 2 behind its
wave: the ratio is about 1 + C x cpu / (2 x latency). ``--jitter 0.5`` spreads the arrivals as a
real server would (same mean latency, same ideal).

Usage: python bench/concurrency.py [--cases 2000] [--concurrency 100] [--latency 0.1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import callbench
from callbench.providers.model import Model, ModelOptions
from callbench.providers.openai_compat import make_provider
from callbench.types.messages import GenerationSettings, Message

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "tests" / "helpers" / "protocol_server.py"


def write_suite(root: Path, n: int) -> Path:
    """A suite of ``n`` cases that each expect a plain-text answer (one request per case)."""
    folder = root / "bench-suite"
    (folder / "tools").mkdir(parents=True)
    (folder / "suite.yaml").write_text("name: bench\ndescription: one-round cases for the throughput bench\n")
    tool = {
        "name": "echo",
        "description": "Echo a text.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
    (folder / "tools" / "echo.json").write_text(json.dumps(tool))
    with (folder / "cases.jsonl").open("w") as handle:
        for i in range(n):
            case = {
                "id": f"c{i:05d}",
                "category": "answer",
                "instruction": f"Say hello number {i}.",
                "expected": [],
                "expected_answer": {"contains": ["done"]},
            }
            handle.write(json.dumps(case) + "\n")
    return folder


def start_server(latency: float, jitter: float = 0.0) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(SERVER),
            "--latency",
            str(latency),
            "--jitter",
            str(jitter),
            "--text-only",
            "--max-seconds",
            "900",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def one_run(suite: Path, port: int, out: Path, cases: int, concurrency: int) -> dict[str, float]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = callbench.run(
        str(suite),
        f"openai:bench@http://127.0.0.1:{port}/v1",
        out_dir=out,
        concurrency=concurrency,
        cache=False,
        k=None,
    )
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    records = result.records
    assert len(records) == cases and result.summary["n_error"] == 0, result.summary.get("errors_by_type")
    first = min(r.started_at for r in records)
    last = max(r.started_at + r.duration_ms / 1000 for r in records)
    return {"wall": wall, "engine_wall": last - first, "cpu": cpu}


async def model_only(port: int, cases: int, concurrency: int) -> dict[str, float]:
    """The same requests through Model + provider with a plain semaphore (no engine, no scoring)."""
    model = Model(make_provider(f"bench@http://127.0.0.1:{port}/v1"), options=ModelOptions(use_cache=False))
    gate = asyncio.Semaphore(concurrency)
    settings = GenerationSettings()

    async def one(i: int) -> None:
        async with gate:
            await model.generate([Message.user(f"Say hello number {i}.")], [], settings)

    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        await asyncio.gather(*(one(i) for i in range(cases)))
    finally:
        await model.aclose()
    return {"wall": time.perf_counter() - wall0, "cpu": time.process_time() - cpu0}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="server latency varies uniformly by +/- this fraction (same mean, so same ideal)",
    )
    args = parser.parse_args()
    ideal = args.cases * args.latency / args.concurrency
    proc, port = start_server(args.latency, args.jitter)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = write_suite(Path(tmp), args.cases)
            load_before = os.getloadavg()[0]
            runs = [
                one_run(suite, port, Path(tmp) / f"run{i}", args.cases, args.concurrency)
                for i in range(args.repeat)
            ]
            bare = [asyncio.run(model_only(port, args.cases, args.concurrency)) for _ in range(args.repeat)]
            load_after = os.getloadavg()[0]
    finally:
        proc.terminate()
        proc.wait(10)
    wall = statistics.median(r["wall"] for r in runs)
    engine = statistics.median(r["engine_wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    print(
        f"cases={args.cases} concurrency={args.concurrency} latency={args.latency * 1000:.0f} ms "
        f"jitter=+/-{args.jitter:.0%} "
        f"repeats={args.repeat} (medians)"
    )
    print(f"ideal wall (N x latency / C):   {ideal:.2f} s")
    print(f"callbench.run wall:             {wall:.2f} s   ratio {wall / ideal:.3f}")
    print(f"engine wall (first..last case): {engine:.2f} s   ratio {engine / ideal:.3f}")
    print(
        f"harness CPU per request:        {cpu / args.cases * 1000:.3f} ms "
        f"(total {cpu:.2f} s; budget for no bottleneck {ideal / args.cases * 1000:.3f} ms)"
    )
    bare_wall = statistics.median(r["wall"] for r in bare)
    bare_cpu = statistics.median(r["cpu"] for r in bare)
    print(
        f"Model+provider only wall:       {bare_wall:.2f} s   ratio {bare_wall / ideal:.3f}   "
        f"CPU per request {bare_cpu / args.cases * 1000:.3f} ms"
    )
    print(f"load average (1 min) before/after: {load_before:.2f} / {load_after:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
