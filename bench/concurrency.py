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

Every measurement runs in a fresh child process after a 50-case warm-up; the whole ``callbench run``
is also timed from outside (the installed console script: start-up, imports, suite loading, run,
summary). ``--compare-ref [REF]`` measures git REF too (default 66023ae, before issue 15's CPU work:
``git archive`` of its ``src/``, children with ``PYTHONPATH`` there), alternating before/after per
repeat against the same server, and prints the medians side by side.

Latest figures, 2026-12-06 (load 0.6), with
``python bench/concurrency.py --compare-ref c3adf2c --repeat 5`` (medians; c3adf2c is the code before
the lean HTTP client and the start-up work; the machine ran at about half its quick speed):

                                          before (c3adf2c)   after   target (issue 26)
    callbench.run wall / ideal                     1.479     1.239
    engine wall / ideal                            1.284     1.078   <= 1.1: meets
    CLI wall / ideal (from outside)                2.650     1.704   <= 1.25: misses by 0.454 (1.36x)
    harness CPU ms / request                       0.897     0.784   <= 0.3: misses by 0.484 (2.61x)
    CLI CPU ms / request                           2.063     1.306   <= 0.5: misses by 0.806 (2.61x)
    Model+provider only wall / ideal               1.077     1.043
    Model+provider only CPU ms / request           0.350     0.128

Earlier the same day, on the quick machine, ``--compare-client --repeat 3`` (aiohttp vs the lean
client, same tree): harness CPU 0.582 vs 0.481 ms per request, Model+provider 0.233 vs 0.090, engine
wall / ideal 1.198 vs 1.063, CLI 1.639 vs 1.409. Figures from different sittings compare only through
the printed machine-speed reference (a fixed Python loop): a shared VM's speed drifts by 2x.

Non-streamed requests go through callbench's lean keep-alive HTTP/1.1 client
(``callbench/providers/lean_http.py``), bodies through orjson; ``--compare-client`` runs the same
tree with ``CALLBENCH_HTTP_CLIENT=aiohttp`` beside it. What is left per request outside the provider:
scoring three tiers, the summary's pass over ``records.jsonl``, writing records, the per-case progress
line, the cyclic garbage collector; the CLI adds its start-up (``bench/startup.py``).

Usage: python bench/concurrency.py [--cases 2000] [--concurrency 100] [--latency 0.1] [--repeat 3]
       [--jitter 0.5] [--compare-ref [REF]] [--compare-client] [--no-cli]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import shutil
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
HELPERS = HERE.parent / "tests" / "helpers"
SERVER = HELPERS / "protocol_server.py"
sys.path.insert(0, str(HELPERS))  # text_suite.py: the Ray tests' suite of one-round cases
from text_suite import write_text_suite  # noqa: E402

ENGINE_WALL_TARGET, CLI_WALL_TARGET = 1.10, 1.25
ENGINE_CPU_TARGET, CLI_CPU_TARGET = 0.3, 0.5
"""Issue 26's targets: wall / ideal at concurrency 100, and CPU milliseconds per request."""

BASE_REF = "66023ae"
"""The commit issue 15's CPU work started from (``--compare-ref`` without a value)."""


def write_suite(root: Path, n: int) -> Path:
    """A suite of ``n`` cases that each expect a plain-text answer (one request per case)."""
    return write_text_suite(root, n, name="bench")


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


def cli_run(
    cli: Path,
    src: Path | None,
    suite: Path,
    port: int,
    out: Path,
    concurrency: int,
    extra_env: dict[str, str] | None = None,
) -> dict[str, float]:
    """The whole ``callbench run`` measured from outside: the installed console script in a child
    process (imports, suite loading, run, summary), with ``PYTHONPATH`` at ``src`` when given."""
    env = {**os.environ, **(extra_env or {})}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [str(cli), "run", "--suite", str(suite), "--model", f"openai:bench@http://127.0.0.1:{port}/v1"]
    command += ["--concurrency", str(concurrency), "--no-cache", "--out", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall0 = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - wall0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"callbench run failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cli_wall": wall, "cli_cpu": cpu}


def measure_here(suite: Path, port: int, out: Path, cases: int, concurrency: int) -> dict[str, float]:
    """One in-process run and one Model-only pass with the callbench this process imported, after a
    50-case warm-up run (plugins, suites and schemas loaded, as in the repeats of one process)."""
    warm = write_suite(out.parent / f"{out.name}-warm", 50)
    one_run(warm, port, out.parent / f"{out.name}-warm" / "run", 50, concurrency)
    figures = one_run(suite, port, out, cases, concurrency)
    bare = asyncio.run(model_only(port, cases, concurrency))
    return {**figures, "bare_wall": bare["wall"], "bare_cpu": bare["cpu"]}


def measure_child(
    src: Path,
    suite: Path,
    port: int,
    out: Path,
    cases: int,
    concurrency: int,
    extra_env: dict[str, str] | None = None,
) -> dict[str, float]:
    """:func:`measure_here` in a child process whose ``PYTHONPATH`` is ``src`` (another checkout)."""
    env = {**os.environ, **(extra_env or {}), "PYTHONPATH": str(src)}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--port", str(port)]
    command += ["--suite", str(suite), "--out", str(out), "--cases", str(cases)]
    command += ["--concurrency", str(concurrency)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"child measurement failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def export_ref(ref: str, root: Path) -> Path:
    """``src/`` of ``ref`` exported into ``root`` (``git archive``: no worktree metadata to clean up)."""
    repo = HERE.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", ref, "src"], capture_output=True, check=True)
    root.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root / "src"


def console_script() -> Path:
    """The installed ``callbench`` script next to this interpreter (not a pyenv shim, which adds its own
    start-up time)."""
    beside = Path(sys.executable).parent / "callbench"
    found = beside if beside.exists() else shutil.which("callbench")
    if found is None:
        raise SystemExit("no callbench console script installed (pip install -e .)")
    return Path(found)


def reference_loop_s() -> float:
    """CPU seconds of a fixed pure-Python loop (10 million additions): how fast this machine runs
    Python right now. A shared virtual machine's speed drifts by 2x within an hour; figures from
    different sittings compare only after dividing by this, figures side by side in one run always."""
    start = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.process_time() - start


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def print_table(sides: dict[str, list[dict[str, float]]], args: argparse.Namespace, ideal: float) -> None:
    """Medians per side, side by side."""
    names = list(sides)
    rows = [
        ("callbench.run wall / ideal", lambda r: _median(r, "wall") / ideal, "{:.3f}", None),
        ("engine wall / ideal", lambda r: _median(r, "engine_wall") / ideal, "{:.3f}", ENGINE_WALL_TARGET),
        (
            "CLI wall / ideal (from outside)",
            lambda r: _median(r, "cli_wall") / ideal,
            "{:.3f}",
            CLI_WALL_TARGET,
        ),
        (
            "harness CPU ms / request",
            lambda r: _median(r, "cpu") / args.cases * 1000,
            "{:.3f}",
            ENGINE_CPU_TARGET,
        ),
        (
            "CLI CPU ms / request",
            lambda r: _median(r, "cli_cpu") / args.cases * 1000,
            "{:.3f}",
            CLI_CPU_TARGET,
        ),
        ("Model+provider only wall / ideal", lambda r: _median(r, "bare_wall") / ideal, "{:.3f}", None),
        (
            "Model+provider only CPU ms / request",
            lambda r: _median(r, "bare_cpu") / args.cases * 1000,
            "{:.3f}",
            None,
        ),
    ]
    width = max(len(label) for label, _, _, _ in rows) + 2
    print(f"{'':{width}}" + "".join(f"{name:>14}" for name in names) + "   target (issue 26)")
    for label, value, fmt, target in rows:
        cells = "".join(f"{fmt.format(value(sides[n])):>14}" for n in names)
        print(f"{label:{width}}{cells}" + (_verdict(value(sides[names[-1]]), target) if target else ""))


def _verdict(value: float, target: float) -> str:
    """The target beside the newest side's figure: met, or missed by how much."""
    if value <= target:
        return f"   <= {target:g}: meets"
    return f"   <= {target:g}: misses by {value - target:.3f} ({value / target:.2f}x)"


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
    parser.add_argument(
        "--compare-ref",
        nargs="?",
        const=BASE_REF,
        default=None,
        metavar="REF",
        help=f"also measure git REF (default {BASE_REF}, before issue 15's CPU work) in child processes, "
        "alternating before/after per repeat, and print both side by side",
    )
    parser.add_argument(
        "--compare-client",
        action="store_true",
        help="measure this tree twice, requests through aiohttp (CALLBENCH_HTTP_CLIENT=aiohttp) and "
        "through the lean client, alternating per repeat, side by side",
    )
    parser.add_argument("--no-cli", action="store_true", help="skip the console-script runs")
    # Internal: one measurement in a child process, printed as JSON (used by --compare-ref).
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--suite", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_here(args.suite, args.port, args.out, args.cases, args.concurrency)))
        return
    ideal = args.cases * args.latency / args.concurrency
    reference_before = reference_loop_s()
    proc, port = start_server(args.latency, args.jitter)
    sides: dict[str, list[dict[str, float]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            suite = write_suite(root, args.cases)
            here_src = Path(callbench.__file__).resolve().parents[1]
            trees: dict[str, tuple[Path, dict[str, str]]] = {"after": (here_src, {})}
            if args.compare_ref:
                before = export_ref(args.compare_ref, root / "ref")
                trees = {f"before ({args.compare_ref})": (before, {}), **trees}
            if args.compare_client:
                trees = {"aiohttp": (here_src, {"CALLBENCH_HTTP_CLIENT": "aiohttp"}), "lean": (here_src, {})}
            cli = console_script()
            load_before = os.getloadavg()[0]
            runs = itertools.count()
            for repeat in range(args.repeat):
                # Alternate the order, so neither side always runs on a machine warmed by the other.
                order = list(trees) if repeat % 2 == 0 else list(reversed(trees))
                for name in order:
                    src, env = trees[name]
                    out = root / f"run{next(runs)}"
                    # Every measurement in a fresh process (either tree): none inherits another's warm-up.
                    figures = measure_child(src, suite, port, out, args.cases, args.concurrency, env)
                    if not args.no_cli:
                        cli_out = root / f"run{next(runs)}"
                        figures |= cli_run(cli, src, suite, port, cli_out, args.concurrency, env)
                    else:
                        figures |= {"cli_wall": float("nan"), "cli_cpu": float("nan")}
                    sides.setdefault(name, []).append(figures)
            load_after = os.getloadavg()[0]
    finally:
        proc.terminate()
        proc.wait(10)
    print(
        f"cases={args.cases} concurrency={args.concurrency} latency={args.latency * 1000:.0f} ms "
        f"jitter=+/-{args.jitter:.0%} repeats={args.repeat} (medians); ideal wall N x latency / C = "
        f"{ideal:.2f} s; CPU budget for no bottleneck {ideal / args.cases * 1000:.3f} ms / request"
    )
    print_table(sides, args, ideal)
    print(f"load average (1 min) before/after: {load_before:.2f} / {load_after:.2f} on {os.cpu_count()} CPUs")
    print(
        f"machine speed: 10^7 Python additions took {reference_before:.2f} / {reference_loop_s():.2f} s CPU "
        "before/after (0.6 s on this 2-core machine when it is quick)"
    )


if __name__ == "__main__":
    main()
