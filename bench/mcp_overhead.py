"""MCP overhead: time added per tool call when an agent calls a case's tools over MCP (issue 14).

Part 1 (:func:`measure_call_overhead`): the same starter tool is called N times through one executor session

* ``direct``      -- ``session.call`` plus the reply text, as callbench's offline loop executes a call;
* ``mcp 2026``    -- a real ``mcp`` SDK client over streamable HTTP to :class:`CaseToolServer` on
  127.0.0.1, whose handler does exactly the ``direct`` work (``Client(url)``: protocol 2026-07-28,
  one self-contained POST per call);
* ``mcp legacy``  -- the same with ``Client(url, mode="legacy")`` (initialize handshake, 2025-11-25):
  what clients built on older SDKs speak;
* ``raw 2026`` / ``raw legacy`` -- a bare JSON-RPC ``tools/call`` POST with ``httpx2`` (no SDK client)
  at each protocol: the server's share of the MCP cost (plus one plain HTTP client round trip).

and prints the median and p95 per call side by side with the difference from ``direct``. Client and
server share this process and its event loop, as they do for ``py:`` agents; a ``cmd:`` agent's
client runs in its own process, so there the server's share (``raw ...``) is what callbench adds.
Target: <= 1 ms median added per call with the SDK client (issue 26; issue 14 had asked for <= 2 ms).

Part 2 (:func:`measure_agent_wall`): wall / ideal for about 200 agent cases at ``--concurrency 50``
with a model that takes 100 ms per turn (target <= 1.2). The cases are the starter suite's 16 repeated
with ``--trials`` (13 trials: 208 cases); the "model" is callbench's ``oracle`` playing each case's
gold path after an ``asyncio.sleep(0.1)`` per turn (bench/agent_helpers.py), so ideal = model turns x
0.1 s / 50 and every case must pass. Sides, each timed around one ``callbench.run`` (median of 3):

* ``offline engine`` -- callbench's own loop with that model as a ``Provider`` (no MCP);
* ``agent engine``   -- ``--agent py:agent_helpers:slow_oracle_starter``: the same script as an agent
  loop on the official ``mcp`` client, in this process (its client's CPU shares callbench's loop);
* ``agent http``     -- the same agent as an ``http:`` service in a process of its own: this process's
  CPU is callbench's alone (engine, MCP server, tools, scoring);
* ``agent sdk-dflt`` -- the ``py:`` agent on ``mcp.Client(url)``, which builds an SSL context (loads
  the CA bundle) per connection: what a naive agent costs;
* ``agent CLI``      -- ``callbench run --agent py:...`` as a subprocess, start-up included.

``--profile`` adds where callbench's CPU goes in the ``agent http`` run (cProfile, per package).
The machine this runs on is shared: the table prints the load average; compare sides within a run.

Part 3 (:func:`measure_replay`, issue 28): cases/s of the ``mcp-git`` suite (the real
``mcp-server-git``; ``oracle``, ``--tier all``, ``--trials``) played three ways, each timed around one
``callbench.run`` (median of ``--repeat``; one warm-up run of each first):

* ``live``   -- the server answers every call (started once per run; the state check replays the gold
  path on it too);
* ``record`` -- the same with ``--record DIR``: every exchange and the state after each call kept;
* ``replay`` -- ``--replay DIR``: no server is started, every call is answered from the cassette, and
  the verdicts must equal the live run's.

Target: replay >= 5x faster than live.

Part 4 (:func:`measure_isolation`, issue 28 item 1): cases/s of 64 stateful cases (4 cases x 16
trials: create an entity, add an observation) on the reference memory server
(``@modelcontextprotocol/server-memory``, npm; installed by ``.ci/background.d/30-npm-mcp.sh`` when
missing) at ``--concurrency 8``, played by the oracle after a model latency per turn (0.1, 0.5 and 1 s),
under ``--tools-isolation run`` (one server for the run), ``case`` (a server per case, started ahead by
the warm pool) and ``case`` without the pool (each case starts its server at its first call and waits for
its stop). Target: ``case`` <= 1.3x ``run`` in wall time.

    python bench/mcp_overhead.py              # 2000 calls per path
    python bench/mcp_overhead.py --calls 500
    python bench/mcp_overhead.py --quick      # 100 calls per path, 48 cases, 1 repetition (smoke run)
    python bench/mcp_overhead.py --part 2 --profile --no-cli
    python bench/mcp_overhead.py --part 3             # replay vs live (needs mcp-server-git and git)
    python bench/mcp_overhead.py --part 4             # run vs case isolation (needs node; see part 4)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

import callbench
from callbench.executors.base import ExecutorSession, ToolOutcome
from callbench.mcp.serve import CaseToolServer, ToolReply
from callbench.suites.suite import Suite

SUITE = "starter"
CASE = "weather_paris"
TOOL = "get_weather"
ARGUMENTS: dict[str, Any] = {"city": "Paris", "unit": "celsius"}
WARMUP = 20
CALL_TARGET_MS = 1.0
"""Median milliseconds an MCP tool call may add (issue 26)."""


class Row:
    """Per-call times of one path, in milliseconds.

    (A plain class: the bench smoke test loads this file without registering it as a module, which a
    dataclass cannot resolve its annotations without.)
    """

    def __init__(self, path: str, times_ms: list[float]) -> None:
        self.path = path
        self.times_ms = times_ms

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def p95(self) -> float:
        ordered = sorted(self.times_ms)
        return ordered[max(0, int(0.95 * len(ordered)) - 1)]


def reply_text(outcome: ToolOutcome) -> ToolReply:
    """The text callbench's offline loop would give the model for this outcome."""
    if outcome.content is not None:
        return ToolReply(outcome.content, is_error=not outcome.ok)
    if outcome.ok:
        return ToolReply(json.dumps(outcome.result, ensure_ascii=False, default=str))
    return ToolReply(json.dumps({"error": outcome.error}, ensure_ascii=False), is_error=True)


async def _timed(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    for _ in range(WARMUP):
        await call()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


async def _measure(n: int, suite: Suite, session: ExecutorSession) -> list[Row]:
    async def direct() -> ToolReply:
        return reply_text(await session.call(TOOL, dict(ARGUMENTS)))

    async def handler(name: str, arguments: dict[str, Any]) -> ToolReply:
        return reply_text(await session.call(name, arguments))

    offered = [suite.registry.get(TOOL)]
    rows = [Row("direct", await _timed(n, direct))]
    async with CaseToolServer() as server:
        url = server.open(offered, handler, label=f"{SUITE}:{CASE}")
        for label, mode in (("mcp 2026", "auto"), ("mcp legacy", "legacy")):
            async with Client(url, mode=mode) as client:
                await client.list_tools()
                reply = await client.call_tool(TOOL, dict(ARGUMENTS))
                assert not reply.is_error, reply.content
                rows.append(Row(label, await _timed(n, lambda c=client: c.call_tool(TOOL, dict(ARGUMENTS)))))
        async with httpx2.AsyncClient() as http:
            for label, protocol in (("raw 2026", "2026-07-28"), ("raw legacy", "2025-11-25")):
                post = _raw_post(http, url, protocol)
                await post()
                rows.append(Row(label, await _timed(n, post)))
    return rows


def _raw_post(http: httpx2.AsyncClient, url: str, protocol: str) -> Callable[[], Awaitable[None]]:
    """One bare JSON-RPC tools/call POST at ``protocol`` (no SDK client): the server's share."""
    params: dict[str, Any] = {"name": TOOL, "arguments": ARGUMENTS}
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": protocol,
    }
    if protocol != "2025-11-25":  # the 2026 wire: routing headers, and the envelope in _meta
        headers |= {"mcp-method": "tools/call", "mcp-name": TOOL}
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: protocol, CLIENT_CAPABILITIES_META_KEY: {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

    async def post() -> None:
        answer = await http.post(url, json=body, headers=headers)
        assert answer.status_code == 200 and "error" not in answer.json(), answer.text

    return post


def measure_call_overhead(n: int) -> list[Row]:
    """Part 1: per-call times of the direct path and the MCP paths, ``n`` calls each."""
    suite = callbench.load_suite(SUITE)
    case = next(c for c in suite.cases if c.id == CASE)
    with tempfile.TemporaryDirectory() as tmp:
        session = suite.executor.start(case, Path(tmp) / "work", suite)
        try:
            return asyncio.run(_measure(n, suite, session))
        finally:
            session.close()


def print_call_overhead(rows: list[Row]) -> None:
    """Part 1's table: medians and p95 side by side, and what each path adds to ``direct``."""
    base = rows[0]
    n = len(base.times_ms)
    print(f"per tool call, {SUITE}:{CASE} -> {TOOL}, {n} calls per path (ms)")
    print(f"{'path':>11} {'median':>8} {'p95':>8} {'+median':>8} {'+p95':>8}")
    for row in rows:
        print(
            f"{row.path:>11} {row.median:>8.3f} {row.p95:>8.3f} "
            f"{row.median - base.median:>8.3f} {row.p95 - base.p95:>8.3f}"
        )
    print(f"target: <= {CALL_TARGET_MS:g} ms median added per call (SDK client, mcp 2026)")


# -- Part 2 (wall / ideal for 200 agent cases) goes below this line, as its own functions. --------


BENCH = Path(__file__).resolve().parent
"""bench/: holds ``agent_helpers`` (the ``py:`` agents and the offline loop's model); put on the path
(and on the CLI's ``PYTHONPATH``) when part 2 runs."""
AGENT_SPEC = "py:agent_helpers:slow_oracle_starter"
SDK_DEFAULT_SPEC = "py:agent_helpers:slow_oracle_starter_sdk_default"
WALL_TARGET = 1.2


class Plan:
    """Part 2's workload: the starter suite repeated with ``--trials`` to about ``cases`` cases."""

    def __init__(self, helpers: Any, cases: int, concurrency: int, latency: float) -> None:
        suite = helpers.starter()
        self.per_pass = len(suite.cases)
        self.trials = max(1, -(-cases // self.per_pass))
        self.cases = self.trials * self.per_pass
        self.turns = self.trials * sum(helpers.model_turns(c) for c in suite.cases)
        self.concurrency = concurrency
        self.latency = latency
        longest = max(helpers.model_turns(c) for c in suite.cases) * latency
        # model time spread evenly over the slots, or the longest case if that is longer (a small run)
        self.ideal_s = max(self.turns * latency / concurrency, longest)


class WallRow:
    """Wall times of one side of part 2 over its repetitions (seconds)."""

    def __init__(self, label: str, how: str) -> None:
        self.label = label
        self.how = how
        self.walls: list[float] = []
        self.cpus: list[float] = []
        """CPU seconds of this process (callbench; plus the agent when it runs in process)."""
        self.spans: list[float] = []
        """Engine span: first case start to last case end (no suite loading, no run-folder writing)."""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float | None:
        return statistics.median(self.cpus) if self.cpus else None

    @property
    def span(self) -> float | None:
        return statistics.median(self.spans) if self.spans else None


def _helpers() -> Any:
    """``bench/agent_helpers.py`` as the module ``agent_helpers`` (the name the ``py:`` spec imports)."""
    import importlib
    import sys

    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("agent_helpers")


def _engine_run(out: Path, plan: Plan, **side: Any) -> tuple[float, float, float]:
    """One in-process ``callbench.run`` of the plan: (wall s, CPU s of this process, engine span s).
    Every case must pass."""
    cpu = time.process_time()
    started = time.perf_counter()
    result = callbench.run(
        SUITE, out_dir=out, trials=plan.trials, concurrency=plan.concurrency, progress="quiet", **side
    )
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    records = result.records
    assert len(records) == plan.cases, (len(records), plan.cases)
    errors = [r.key for r in records if r.status != "completed"]
    assert not errors, f"error records: {errors[:5]}"
    failed = [r for r in records if not r.verdicts["task-completion-execution"].passed]
    assert not failed, f"the oracle failed {len(failed)} cases, e.g. {_failure(failed[0])}"
    first = min(r.started_at for r in records)
    last = max(r.started_at + r.duration_ms / 1000 for r in records)
    return wall, cpu, last - first


def _failure(record: Any) -> str:
    """One failed record in a line: key, failing tiers and codes, the agent's outcome, the calls."""
    tiers = {t: v.codes for t, v in record.verdicts.items() if not v.passed}
    agent = record.trace.agent
    outcome = f"{agent.outcome}: {agent.message} {agent.stderr_tail[-300:]}" if agent else "-"
    calls = [(c.tool, c.execution) for c in record.trace.calls]
    return f"{record.key}: {tiers}; agent {outcome}; calls {calls}"


def _agent_service(latency: float) -> tuple[Any, str]:
    """Start ``bench/agent_helpers.py --serve`` (the same agent as an ``http:`` service, in a process
    of its own); returns (process, ``--agent`` spec)."""
    import subprocess
    import sys

    env = {**os.environ, "CALLBENCH_BENCH_LATENCY": str(latency)}
    process = subprocess.Popen(
        [sys.executable, str(BENCH / "agent_helpers.py"), "--serve", "--max-seconds", "1800"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, f"http:http://127.0.0.1:{port}/agent"


def _cli_argv() -> list[str]:
    import sys

    script = Path(sys.executable).parent / "callbench"  # not a pyenv shim: its start-up is not ours
    return [str(script)] if script.exists() else [sys.executable, "-m", "callbench.cli.main"]


def _cli_run(out: Path, plan: Plan) -> float:
    """The whole ``callbench run --agent py:...`` as a subprocess (Python start-up included): wall s."""
    import subprocess

    argv = [*_cli_argv(), "run", "--suite", SUITE, "--agent", AGENT_SPEC, "--trials", str(plan.trials)]
    argv += ["--concurrency", str(plan.concurrency), "--out", str(out), "--progress", "quiet"]
    path = os.pathsep.join(p for p in (str(BENCH), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "CALLBENCH_BENCH_LATENCY": str(plan.latency)}
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    assert done.returncode == 0, f"callbench run exited {done.returncode}: {done.stderr[-2000:]}"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_error"] == 0 and summary["n_records"] == plan.cases, summary
    return wall


def _cli_startup() -> float:
    """``callbench --help`` as a subprocess: the CLI's fixed start-up cost (imports), in seconds."""
    import subprocess

    started = time.perf_counter()
    subprocess.run([*_cli_argv(), "--help"], capture_output=True, check=True)
    return time.perf_counter() - started


def measure_agent_wall(
    cases: int, concurrency: int, latency: float, repeat: int, cli: bool = True
) -> tuple[Plan, list[WallRow]]:
    """Part 2: wall / ideal of about ``cases`` starter cases at ``concurrency`` with a model that sleeps
    ``latency`` s per turn, for the offline loop, the ``py:`` agent under test in process (on a shared
    SSL context, and on the SDK's default client), and (``cli``) the same agent through the CLI."""
    helpers = _helpers()
    helpers.LATENCY_S = latency
    plan = Plan(helpers, cases, concurrency, latency)
    service, http_spec = _agent_service(latency)
    sides: list[tuple[WallRow, dict[str, Any]]] = [
        (
            WallRow("offline engine", "callbench's own loop; model = oracle + sleep per turn"),
            {"model": helpers.SlowOracle(), "cache": False},
        ),
        (
            WallRow("agent engine", f"callbench.run(agent={AGENT_SPEC!r}): agent in process"),
            {"agent": AGENT_SPEC},
        ),
        (
            WallRow(
                "agent http", "the same agent as an http: service in its own process (CPU: callbench's alone)"
            ),
            {"agent": http_spec},
        ),
        (
            WallRow("agent sdk-dflt", f"{SDK_DEFAULT_SPEC}: the agent on mcp.Client(url), in process"),
            {"agent": SDK_DEFAULT_SPEC},
        ),
    ]
    cli_row = WallRow("agent CLI", f"callbench run --agent {AGENT_SPEC} (subprocess, start-up included)")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for row, side in sides:  # warm-up: first-use imports and suite loading are not the figure
                _engine_run(Path(tmp) / f"warm-{row.label}", Plan(helpers, 1, concurrency, latency), **side)
            for rep in range(repeat):
                for row, side in sides:
                    helpers.COUNTER.reset()
                    wall, cpu, span = _engine_run(Path(tmp) / f"{rep}-{row.label}", plan, **side)
                    if "agent" not in side or side["agent"].startswith("py:"):  # counted in this process
                        assert helpers.COUNTER.turns == plan.turns, (row.label, helpers.COUNTER.turns)
                    row.walls.append(wall)
                    row.cpus.append(cpu)
                    row.spans.append(span)
                if cli:
                    cli_row.walls.append(_cli_run(Path(tmp) / f"{rep}-cli", plan))
    finally:
        service.terminate()
        service.wait()
    return plan, [row for row, _ in sides] + ([cli_row] if cli else [])


def _package_of(filename: str, function: str) -> str:
    """A profile entry's package: ``h11``, ``mcp``, ``callbench/harness``, ``asyncio``, ``C:<name>``..."""
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if "/callbench/" in filename:
        return "callbench/" + filename.rsplit("/callbench/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if filename == "~":  # a C function: name the method (validate_python, poll, gc.collect, ...)
        name = function.split("'")[1] if "'" in function else function
        return "C:" + name.removeprefix("<built-in method ").removesuffix(">")
    if "/lib/python3" in filename:
        return filename.split("/lib/python3", 1)[1].split("/", 2)[1].removesuffix(".py")
    return Path(filename).stem


def profile_callbench_side(cases: int, concurrency: int, latency: float, top: int = 14) -> None:
    """Where callbench's CPU goes in an agent run: one ``callbench.run`` with the agent as an ``http:``
    service in its own process (so this process is callbench alone) under cProfile, its own time
    summed per package, as shares of the busy time (waiting in ``epoll`` left out)."""
    import cProfile
    import pstats

    helpers = _helpers()
    helpers.LATENCY_S = latency
    plan = Plan(helpers, cases, concurrency, latency)
    service, spec = _agent_service(latency)
    profiler = cProfile.Profile()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            _engine_run(Path(tmp) / "warm", Plan(helpers, 1, concurrency, latency), agent=spec)
            profiler.enable()
            _engine_run(Path(tmp) / "profiled", plan, agent=spec)
            profiler.disable()
    finally:
        service.terminate()
        service.wait()
    shares: dict[str, float] = {}
    for (filename, _line, function), entry in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        package = _package_of(filename, function)
        shares[package] = shares.get(package, 0.0) + entry[2]  # own time
    shares.pop("C:poll", None)
    busy = sum(shares.values())
    print(f"where callbench's CPU goes ({plan.cases} cases, agent over http: in its own process; cProfile")
    print(f"own time per package, as a share of {busy:.2f} s busy -- the profiler inflates Python code):")
    for package, seconds in sorted(shares.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {100 * seconds / busy:5.1f}%  {package}")


def print_agent_wall(plan: Plan, rows: list[WallRow], repeat: int) -> None:
    """Part 2's table: cases, turns, ideal, wall (median of ``repeat``), wall / ideal per side."""
    print(
        f"wall / ideal: {plan.cases} cases ({SUITE}: {plan.per_pass} cases x {plan.trials} trials), "
        f"--concurrency {plan.concurrency}, {plan.latency * 1000:g} ms per model turn, median of {repeat}"
    )
    print(
        "ideal = model turns x latency / concurrency; span = first case start to last case end; "
        "cpu = this process's CPU time"
    )
    print(
        f"{'side':>15} {'cases':>6} {'turns':>6} {'ideal s':>8} {'wall s':>8} {'wall/ideal':>10} "
        f"{'span s':>7} {'span/ideal':>10} {'cpu ms/case':>11}"
    )
    for row in rows:
        span = "-".rjust(7) + " " + "-".rjust(10)
        if row.span is not None:
            span = f"{row.span:>7.2f} {row.span / plan.ideal_s:>10.2f}"
        cpu = f"{row.cpu / plan.cases * 1000:>11.1f}" if row.cpu is not None else "-".rjust(11)
        print(
            f"{row.label:>15} {plan.cases:>6} {plan.turns:>6} {plan.ideal_s:>8.2f} {row.wall:>8.2f} "
            f"{row.wall / plan.ideal_s:>10.2f} {span} {cpu}"
        )
    for row in rows:
        print(f"  {row.label}: {row.how}")
    print(f"target: agent wall / ideal <= {WALL_TARGET}")


def print_side_by_side(calls: list[Row], plan: Plan, walls: list[WallRow]) -> None:
    """The two issue-14 figures next to the offline loop's, and how loaded the machine was."""
    base = calls[0]
    added = ", ".join(f"{r.path} +{r.median - base.median:.3f}" for r in calls[1:])
    print("summary: agent under test over MCP vs callbench's offline loop")
    print(
        f"  per tool call: direct (offline loop) {base.median:.3f} ms; over MCP {added} ms"
        f" (target <= {CALL_TARGET_MS:g})"
    )
    ratios = ", ".join(f"{r.label} {r.wall / plan.ideal_s:.2f}" for r in walls)
    print(f"  wall/ideal: {ratios} (target <= {WALL_TARGET})")
    for row in walls:
        if row.cpu is not None and row.label in ("offline engine", "agent http"):
            # One event loop runs all of callbench: its CPU time is a floor under the wall time.
            print(
                f"  {row.label}: callbench's own CPU is {row.cpu / plan.cases * 1000:.1f} ms per case, "
                f"{row.cpu:.2f} s = {row.cpu / plan.ideal_s:.2f} x ideal: a floor under its wall/ideal"
            )
    if any(r.label == "agent CLI" for r in walls):
        print(
            f"  the CLI figure includes start-up: `callbench --help` alone takes {_cli_startup():.2f} s here"
        )
    load = os.getloadavg()
    print(
        f"  shared, noisy machine: load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"on {os.cpu_count()} CPUs; compare sides within one run, not across runs"
    )


# -- Part 3 (replay vs live, issue 28) -------------------------------------------------------------

REPLAY_SUITE = "mcp-git"
REPLAY_TARGET = 5.0
"""Replay must be at least this many times faster than live."""


def _mcp_git_run(out: Path, trials: int, concurrency: int, **side: Any) -> tuple[float, Any]:
    """One ``callbench.run`` of mcp-git by the oracle: (wall s, result); no error record allowed."""
    started = time.perf_counter()
    result = callbench.run(
        REPLAY_SUITE,
        "oracle",
        "all",
        out_dir=out,
        trials=trials,
        concurrency=concurrency,
        cache=False,
        progress="quiet",
        **side,
    )
    wall = time.perf_counter() - started
    assert result.summary["n_error"] == 0, result.summary
    return wall, result


def measure_replay(trials: int, concurrency: int, repeat: int) -> tuple[int, dict[str, list[float]]]:
    """Part 3: wall seconds of ``live``, ``record`` and ``replay`` runs of mcp-git (``repeat`` each, after
    one warm-up of each); returns (cases per run, {side: walls})."""
    walls: dict[str, list[float]] = {"live": [], "record": [], "replay": []}
    cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _, live = _mcp_git_run(root / "warm-live", trials, concurrency)
        _mcp_git_run(root / "warm-record", trials, concurrency, record=root / "cassette")
        _, replayed = _mcp_git_run(root / "warm-replay", trials, concurrency, replay=root / "cassette")
        verdicts = {r.record_id: r.verdicts for r in live.records}
        assert {r.record_id: r.verdicts for r in replayed.records} == verdicts, "replay changed a verdict"
        cases = len(live.records)
        for rep in range(repeat):
            walls["live"].append(_mcp_git_run(root / f"{rep}-live", trials, concurrency)[0])
            tape = root / f"{rep}-cassette"
            walls["record"].append(_mcp_git_run(root / f"{rep}-record", trials, concurrency, record=tape)[0])
            walls["replay"].append(_mcp_git_run(root / f"{rep}-replay", trials, concurrency, replay=tape)[0])
    return cases, walls


def print_replay(cases: int, walls: dict[str, list[float]], trials: int, concurrency: int) -> None:
    """Part 3's table: wall (median), cases/s and the speed-up over live per side."""
    live = statistics.median(walls["live"])
    print(
        f"replay vs live: {REPLAY_SUITE} (mcp-server-git), oracle, --tier all, {cases} cases "
        f"(--trials {trials}), --concurrency {concurrency}, median of {len(walls['live'])}"
    )
    print(f"{'side':>8} {'wall s':>8} {'cases/s':>8} {'vs live':>8}")
    for side, times in walls.items():
        wall = statistics.median(times)
        print(f"{side:>8} {wall:>8.2f} {cases / wall:>8.1f} {live / wall:>7.1f}x")
    speedup = live / statistics.median(walls["replay"])
    print(f"target: replay >= {REPLAY_TARGET:g}x faster than live (here {speedup:.1f}x)")


# -- Part 4 (issue 28, item 1): run vs case isolation of a stateful server, with the warm pool --------

ISOLATION_CONCURRENCY = 8
ISOLATION_TARGET = 1.3
"""``case`` isolation may cost at most this many times ``run`` isolation's wall time."""
MEMORY_PACKAGE = "@modelcontextprotocol/server-memory"
ISOLATION_ROWS: list[dict[str, Any]] = [
    {
        "id": f"remember_{name.lower()}",
        "instruction": f"Remember {name}, then note that they like tea.",
        "expected": [
            {
                "tool": "create_entities",
                "arguments": {"entities": [{"name": name, "entityType": "person", "observations": ["new"]}]},
            },
            {
                "tool": "add_observations",
                "arguments": {"observations": [{"entityName": name, "contents": ["tea"]}]},
            },
        ],
    }
    for name in ("Ada", "Grace", "Alan", "Edsger")
]
"""Stateful cases that pass on a clean graph. On one server shared by cases in flight they may not: the
memory server reads, changes and rewrites its whole file per call, so concurrent calls lose each
other's writes (the ``passed`` column shows it)."""


def _memory_server() -> Path:
    """The reference memory server's script (npm), installed by the CI step when it is missing."""
    import subprocess

    prefix = Path(os.environ.get("CALLBENCH_NPM_PREFIX") or Path.home() / ".cache" / "callbench-test-npm")
    script = prefix / "node_modules" / MEMORY_PACKAGE / "dist" / "index.js"
    if not script.is_file():
        setup = BENCH.parent / ".ci" / "background.d" / "30-npm-mcp.sh"
        subprocess.run(["bash", str(setup)], check=True)
    return script


class IsolationSide:
    """One isolation's walls (seconds) at one model latency."""

    def __init__(self, label: str, latency: float) -> None:
        self.label = label
        self.latency = latency
        self.walls: list[float] = []
        self.passed: list[float] = []
        """Share of the cases that passed every tier, per run."""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)


def _isolation_run(
    out: Path, suite: Path, tools: str, trials: int, isolation: str, pool: bool
) -> tuple[float, int, float]:
    """One run of the memory probes by the oracle after a model latency per turn: (wall s, cases, share
    of the cases that passed every tier); no error record allowed."""
    from callbench.executors import mcp as mcp_executor

    helpers = _helpers()
    planned = mcp_executor.McpExecutor.plan_cases
    if not pool:  # unplanned: every case starts its server at its first call and waits for its stop
        mcp_executor.McpExecutor.plan_cases = lambda self, cases, concurrency: None  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        result = callbench.run(
            str(suite),
            helpers.SlowOracle(),
            out_dir=out,
            tools=tools,
            tools_isolation=isolation,
            trials=trials,
            concurrency=ISOLATION_CONCURRENCY,
            cache=False,
            progress="quiet",
        )
        wall = time.perf_counter() - started
    finally:
        mcp_executor.McpExecutor.plan_cases = planned  # type: ignore[method-assign]
    records = result.records
    errors = [r.key for r in records if r.status != "completed"]
    assert not errors, f"{isolation}: error records: {errors[:5]}"
    passed = sum(all(v.passed for v in r.verdicts.values()) for r in records) / len(records)
    return wall, len(records), passed


def measure_isolation(trials: int, latencies: list[float], repeat: int) -> tuple[int, list[IsolationSide]]:
    """Part 4: wall seconds of the memory probes at ``--concurrency 8`` under ``run`` isolation, ``case``
    isolation (warm pool) and ``case`` without the pool, per model latency (median of ``repeat``)."""
    import warnings

    import yaml

    helpers = _helpers()
    tools = f"mcp:stdio:MEMORY_FILE_PATH={{workdir}}/memory.jsonl node {_memory_server()}"
    sides: list[IsolationSide] = []
    cases = 0
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "isolation run" on a stateful server is what is measured here
        root = Path(tmp)
        suite = root / "memory.yaml"
        suite.write_text(yaml.safe_dump({"name": "memory-bench", "cases": ISOLATION_ROWS}))
        for latency in latencies:
            helpers.LATENCY_S = latency
            row = [
                (IsolationSide("run", latency), "run", True),
                (IsolationSide("case", latency), "case", True),
                (IsolationSide("case, no pool", latency), "case", False),
            ]
            _isolation_run(root / f"warm-{latency}", suite, tools, 1, "case", True)
            for rep in range(repeat):
                for side, isolation, pool in row:
                    out = root / f"{latency}-{rep}-{side.label}".replace(" ", "_").replace(",", "")
                    wall, cases, passed = _isolation_run(out, suite, tools, trials, isolation, pool)
                    side.walls.append(wall)
                    side.passed.append(passed)
            sides += [side for side, _, _ in row]
    return cases, sides


def print_isolation(cases: int, sides: list[IsolationSide], repeat: int) -> None:
    """Part 4's table: wall (median), cases/s, and each side's cost against ``run`` at its latency."""
    print(
        f"isolation: {cases} stateful cases on {MEMORY_PACKAGE} (npm), oracle after a model latency per "
        f"turn (3 turns a case), --concurrency {ISOLATION_CONCURRENCY}, median of {repeat}"
    )
    print(f"{'latency s':>9} {'isolation':>14} {'wall s':>8} {'cases/s':>8} {'vs run':>7} {'passed':>7}")
    for side in sides:
        base = next(s for s in sides if s.latency == side.latency and s.label == "run")
        print(
            f"{side.latency:>9g} {side.label:>14} {side.wall:>8.2f} {cases / side.wall:>8.1f} "
            f"{side.wall / base.wall:>6.2f}x {100 * min(side.passed):>6.0f}%"
        )
    load = os.getloadavg()
    print(
        f"target: case (warm pool) <= {ISOLATION_TARGET:g}x run in wall time; load average {load[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print("passed: the lowest share of cases passing every tier over the repetitions (clean graph: 100%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="calls per path (default 2000)")
    parser.add_argument("--cases", type=int, default=200, help="agent cases for part 2 (default 200)")
    parser.add_argument("--concurrency", type=int, default=50, help="part 2 (default 50)")
    parser.add_argument("--latency", type=float, default=0.1, help="model seconds per turn (default 0.1)")
    parser.add_argument("--repeat", type=int, default=3, help="part 2 repetitions (default 3)")
    parser.add_argument("--no-cli", action="store_true", help="part 2 without the CLI subprocess")
    parser.add_argument(
        "--part",
        choices=("1", "2", "3", "4", "both", "all"),
        default="both",
        help="both: 1 and 2; all: 1 to 4",
    )
    parser.add_argument(
        "--iso-latency",
        default="0.1,0.5,1",
        help="part 4: model seconds per turn, comma-separated (default 0.1,0.5,1)",
    )
    parser.add_argument(
        "--iso-trials", type=int, default=16, help="part 4: trials of its 4 cases (default 16)"
    )
    parser.add_argument("--trials", type=int, default=4, help="part 3: trials of mcp-git (default 4)")
    parser.add_argument(
        "--profile", action="store_true", help="part 2: also profile callbench's side of one agent run"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 100 calls per path, 48 cases, 1 repetition"
    )
    args = parser.parse_args()
    calls, cases, repeat = (100, 48, 1) if args.quick else (args.calls, args.cases, args.repeat)
    if args.part in ("4", "all"):
        latencies = [float(x) for x in args.iso_latency.split(",") if x.strip()]
        iso_cases, iso_sides = measure_isolation(2 if args.quick else args.iso_trials, latencies, repeat)
        print_isolation(iso_cases, iso_sides, repeat)
        if args.part == "4":
            return
        print()
    if args.part in ("3", "all"):
        trials = 1 if args.quick else args.trials
        replay_cases, replay_walls = measure_replay(trials, 8, repeat)
        print_replay(replay_cases, replay_walls, trials, 8)
        if args.part == "3":
            return
        print()
    rows = measure_call_overhead(calls) if args.part != "2" else []
    if rows:
        print_call_overhead(rows)
    if args.part == "1":
        return
    print()
    plan, walls = measure_agent_wall(cases, args.concurrency, args.latency, repeat, cli=not args.no_cli)
    print_agent_wall(plan, walls, repeat)
    if args.profile:
        print()
        profile_callbench_side(cases, args.concurrency, args.latency)
    if rows:
        print()
        print_side_by_side(rows, plan, walls)


if __name__ == "__main__":
    main()
