"""Start-up cost of the command line (issue 26, item 5): CPU and wall time of short invocations.

Runs each command N times (default 5) in a fresh process and prints the medians side by side, each
beside its target, in one table:

* ``callbench --help`` and ``callbench run --help``: target <= 0.3 s CPU;
* ``callbench run -s starter --limit 1`` with the default built-in agent (one case, no network): its
  CPU is the fixed cost of a run (one starter case costs a few milliseconds), target <= 0.5 s CPU;
* a bare typer application printing its ``--help``: the floor that typer and rich set, for reference.

CPU is the child's user + system time (``getrusage(RUSAGE_CHILDREN)``), which load on the machine
changes far less than wall time. The script is a report, not a gate: it exits 0 whatever the figures.

    python bench/startup.py                 # medians of 5
    python bench/startup.py -n 9
    python bench/startup.py --src OTHER/src # the same against another source tree (PYTHONPATH)

For where the time goes: ``python -X importtime -m callbench.cli.main --help 2> imports.txt``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

HELP_TARGET_S = 0.3
RUN_FIXED_TARGET_S = 0.5

BARE_TYPER_APP = """
import typer
app = typer.Typer(no_args_is_help=True)
@app.command()
def run(limit: int = 1) -> None:
    "Run."
@app.command()
def show(path: str = ".") -> None:
    "Show."
app()
"""
"""Two commands and the rich help of typer: what any typer CLI pays before its own imports."""


class Timing(NamedTuple):
    """Medians over the repeats of one command."""

    cpu_s: float
    wall_s: float


def callbench_command() -> list[str]:
    """The ``callbench`` script beside this interpreter when installed, else ``python -m``."""
    script = Path(sys.executable).with_name("callbench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "callbench.cli.main"]


def time_command(
    argv: list[str] | Callable[[], list[str]], repeats: int, env: dict[str, str], cwd: Path
) -> Timing:
    """Median CPU (user + system of the child) and wall time of ``argv`` over ``repeats`` runs
    (``argv`` may be a function giving each run its command line, made before the clock starts).

    Raises:
        SystemExit: the command failed (its stderr is printed): a figure of a failed run means nothing.
    """
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(repeats):
        command = argv() if callable(argv) else argv
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.stderr.write(done.stderr.decode(errors="replace"))
            raise SystemExit(f"startup: {' '.join(command)} exited {done.returncode}")
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return Timing(statistics.median(cpu), statistics.median(wall))


def one_case_run(cli: list[str], runs: Path) -> Callable[[], list[str]]:
    """The 1-case run's command line, with a fresh run folder each time (a reused one is refused)."""

    def argv() -> list[str]:
        out = Path(tempfile.mkdtemp(dir=runs)) / "run"
        return [*cli, "run", "-s", "starter", "--limit", "1", "--progress", "quiet", "-o", str(out)]

    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--repeats", type=int, default=5, help="runs per command (median)")
    parser.add_argument("--src", type=Path, help="source tree to measure instead (put on PYTHONPATH)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    cli = callbench_command()
    if args.src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.src.resolve()), env.get("PYTHONPATH")]))
        cli = [sys.executable, "-m", "callbench.cli.main"]  # the script would import the installed tree
    work = Path(tempfile.mkdtemp(prefix="callbench-startup-"))
    try:
        (work / "bare_typer.py").write_text(BARE_TYPER_APP, encoding="utf-8")
        rows = [
            (
                f"callbench {' '.join(words)}",
                time_command([*cli, *words], args.repeats, env, work),
                HELP_TARGET_S,
            )
            for words in (["--help"], ["run", "--help"])
        ]
        run = time_command(one_case_run(cli, work), args.repeats, env, work)
        rows.append(("callbench run -s starter --limit 1", run, RUN_FIXED_TARGET_S))
        floor = time_command([sys.executable, str(work / "bare_typer.py"), "--help"], args.repeats, env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"start-up, medians of {args.repeats} ({os.cpu_count()} CPUs, load average {load})")
    print(f"command line: {' '.join(cli)}")
    print(f"{'command':<36} {'CPU s':>7} {'wall s':>7} {'target CPU':>11}  verdict")
    for name, timing, target in rows:
        verdict = "meets" if timing.cpu_s <= target else f"misses by {timing.cpu_s - target:.2f} s"
        limit = f"<= {target:.2f}"
        print(f"{name:<36} {timing.cpu_s:>7.3f} {timing.wall_s:>7.3f} {limit:>11}  {verdict}")
    print(f"{'bare typer app --help (the floor)':<36} {floor.cpu_s:>7.3f} {floor.wall_s:>7.3f} {'-':>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
