"""Conversations per second: scripted-user conversations through the real engine with a 100 ms model.

Builds N conversation cases: a scripted user with three turns (it opens, then answers twice, then
its spent script sends ``###STOP###``), one tool with a tiny in-memory executor, and a gold path of
one call per user turn. The model is ``bench/agent_helpers.py``'s :class:`SlowOracle`: callbench's
``oracle`` playing each case's gold path after an ``asyncio.sleep`` of ``--latency`` per request (it
holds no CPU, like a remote model). Per user turn it sends one tool call, then a text reply that hands
the conversation back to the user: 3 user turns x 2 requests = 6 requests per conversation.

Each concurrency C runs ``--waves`` x C conversations (``--conversations`` fixes N instead) through
``callbench.run`` (three strict tiers, records written, summary), after a warm-up run, ``--repeat``
times; medians are printed. Ideal wall time:

    ideal = requests per conversation x latency x ceil(N / C)

(every conversation's requests back to back, C conversations at a time, no harness time at all).
``engine wall`` is the first conversation's start to the last one's end (from the records); ``run
wall`` the whole ``callbench.run`` call (suite preparation, run folder, summary as well).
Target (issue 29): engine wall / ideal <= 1.2 at ``--concurrency 50``; ``--check`` exits 1 when missed.

Latest figures, ``python bench/conversations.py --check --repeat 5`` (medians; shared 2-core machine,
load about 1.2; also in docs/conversations.md, "Speed"):

       C   conv  requests  ideal s  engine s   run s  engine/ideal  run/ideal   conv/s  CPU ms/req
       1      6        36     3.60      3.64    3.70         1.010      1.029      1.7       3.244
      10     60       360     3.60      3.70    3.80         1.028      1.057     16.2       0.602
      50    300      1800     3.60      3.85    4.05         1.069      1.126     78.0       0.425

Usage: python bench/conversations.py [--concurrency 1 10 50] [--waves 6] [--repeat 3]
       [--latency 0.1] [--conversations N] [--check] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import callbench
from callbench.executors.python import PythonExecutor
from callbench.providers.agents.oracle import gold_plan
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.conversation import ScriptedTurn, UserSide

BENCH = Path(__file__).resolve().parent
TARGET = 1.2
"""Issue 29's target: engine wall / ideal at ``--concurrency 50``."""
CHECKED_CONCURRENCY = 50
USER_TURNS = 3

SCHEMA = {
    "type": "object",
    "properties": {"order": {"type": "string"}},
    "required": ["order"],
    "additionalProperties": False,
}


def helpers() -> Any:
    """``bench/agent_helpers.py`` as the module ``agent_helpers``: its slow oracle and turn counter."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("agent_helpers")


def lookup(order: str) -> dict[str, str]:
    """The tiny tool: an order's status, from a dict."""
    return {"order": order, "status": "shipped"}


def conversation_suite(n: int, name: str = "bench-conv") -> Suite:
    """``n`` conversation cases: a scripted user with :data:`USER_TURNS` turns, one ``lookup`` call of
    the agent's per user turn (the oracle plays it, then a text reply)."""
    cases = []
    for i in range(n):
        script = [ScriptedTurn(say=f"Where is order #{i}-{t}?") for t in range(USER_TURNS)]
        expected = [
            {"tool": "lookup", "arguments": {"order": f"{i}-{t}"}, "turn": t} for t in range(USER_TURNS)
        ]
        cases.append(
            Case(
                id=f"conv{i}",
                user=UserSide(script=script),
                expected=expected,
                metadata={"oracle_turns": USER_TURNS},
            )
        )
    return Suite(
        name=name,
        cases=cases,
        registry=ToolRegistry([ToolContract(name="lookup", description="Order status.", parameters=SCHEMA)]),
        executor=PythonExecutor({"lookup": lookup}),
        source="bench",
    )


def requests_per_conversation(suite: Suite) -> int:
    """Model requests the oracle sends per conversation (its plan: a call round and a text round per
    user turn); the same for every case of :func:`conversation_suite`."""
    counts = {len(gold_plan(case)) for case in suite.cases}
    assert len(counts) == 1, counts
    return counts.pop()


def one_run(
    suite: Suite, concurrency: int, out: Path, profile: cProfile.Profile | None = None
) -> dict[str, float]:
    """One ``callbench.run`` of ``suite``; wall, engine wall, CPU seconds and requests sent."""
    agent = helpers()
    agent.COUNTER.reset()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if profile is not None:
        profile.enable()
    try:
        result = callbench.run(
            suite, agent.SlowOracle(), out_dir=out, concurrency=concurrency, progress="quiet", cache=False
        )
    finally:
        if profile is not None:
            profile.disable()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    records = result.records
    assert len(records) == len(suite.cases) and result.summary["n_error"] == 0, result.summary
    assert all(r.trace.stop_reason == "user_stop" for r in records), {r.trace.stop_reason for r in records}
    # the oracle plays every conversation's gold path: every tier passes every case
    assert all(t["accuracy"] == 1.0 for t in result.summary["tiers"].values()), result.summary["tiers"]
    first = min(r.started_at for r in records)
    last = max(r.started_at + r.duration_ms / 1000 for r in records)
    return {"wall": wall, "engine_wall": last - first, "cpu": cpu, "requests": agent.COUNTER.turns}


def measure(
    concurrency: int, n: int, repeat: int, latency: float, root: Path, profile: cProfile.Profile | None
) -> dict[str, float]:
    """Medians over ``repeat`` runs of ``n`` conversations at ``concurrency``, with the ideal."""
    suite = conversation_suite(n)
    per_conversation = requests_per_conversation(suite)
    ideal = per_conversation * latency * math.ceil(n / concurrency)
    runs = [
        one_run(
            suite,
            concurrency,
            root / f"c{concurrency}-{i}",
            profile if concurrency == CHECKED_CONCURRENCY else None,
        )
        for i in range(repeat)
    ]
    for r in runs:
        assert r["requests"] == n * per_conversation, (r["requests"], n * per_conversation)
    engine_wall = statistics.median(r["engine_wall"] for r in runs)
    return {
        "concurrency": concurrency,
        "n": n,
        "requests": n * per_conversation,
        "per_conversation": per_conversation,
        "ideal": ideal,
        "engine_wall": engine_wall,
        "wall": statistics.median(r["wall"] for r in runs),
        "cpu_ms_per_request": statistics.median(r["cpu"] for r in runs) / (n * per_conversation) * 1000,
        "conversations_per_s": n / engine_wall,
        "engine_ratio": engine_wall / ideal,
        "run_ratio": statistics.median(r["wall"] for r in runs) / ideal,
    }


def print_table(rows: list[dict[str, float]]) -> None:
    header = (
        f"{'C':>4} {'conv':>6} {'requests':>9} {'ideal s':>8} {'engine s':>9} {'run s':>7} "
        f"{'engine/ideal':>13} {'run/ideal':>10} {'conv/s':>8} {'ideal conv/s':>13} {'CPU ms/req':>11}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['concurrency']:>4} {r['n']:>6} {r['requests']:>9} {r['ideal']:>8.2f} "
            f"{r['engine_wall']:>9.2f} {r['wall']:>7.2f} {r['engine_ratio']:>13.3f} {r['run_ratio']:>10.3f} "
            f"{r['conversations_per_s']:>8.1f} {r['n'] / r['ideal']:>13.1f} {r['cpu_ms_per_request']:>11.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10, CHECKED_CONCURRENCY])
    parser.add_argument("--waves", type=int, default=6, help="conversations per run = waves x concurrency")
    parser.add_argument("--conversations", type=int, default=None, help="fixed N for every concurrency")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per model request")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 when engine wall / ideal > {TARGET} at C={CHECKED_CONCURRENCY}",
    )
    parser.add_argument(
        "--profile", type=Path, default=None, help=f"cProfile the C={CHECKED_CONCURRENCY} runs to FILE"
    )
    args = parser.parse_args()
    agent = helpers()
    agent.LATENCY_S = args.latency  # SlowOracle reads the module's latency at every request
    profile = cProfile.Profile() if args.profile else None
    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        one_run(conversation_suite(20), 10, root / "warm")  # imports, plugins and schemas loaded
        for concurrency in args.concurrency:
            n = args.conversations or args.waves * concurrency
            rows.append(measure(concurrency, n, args.repeat, args.latency, root, profile))
    load_after = os.getloadavg()[0]
    if profile is not None:
        profile.dump_stats(args.profile)
    per = rows[0]["per_conversation"]
    print(
        f"scripted user, {USER_TURNS} user turns, {per} requests per conversation, "
        f"{args.latency * 1000:.0f} ms per request, medians of {args.repeat} runs; "
        f"ideal = {per} x {args.latency:g} s x ceil(N / C)"
    )
    print_table(rows)
    print(f"load average (1 min) before/after: {load_before:.2f} / {load_after:.2f} on {os.cpu_count()} CPUs")
    checked = [r for r in rows if r["concurrency"] == CHECKED_CONCURRENCY]
    if not checked:
        return 0
    ratio = checked[0]["engine_ratio"]
    verdict = "meets" if ratio <= TARGET else f"misses by {ratio - TARGET:.3f}"
    where = f"at C={CHECKED_CONCURRENCY}"
    print(f"target (issue 29): engine wall / ideal <= {TARGET} {where}: {ratio:.3f}, {verdict}")
    return 1 if args.check and ratio > TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
