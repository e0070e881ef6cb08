"""The full verdict-equality sweep of the example agents against callbench's own loop.

``tests/agents/test_example_agents_verdicts.py`` runs every starter case and a covering slice of
genomics (about 24 of 220 cases); this script runs every case of the suites it is given, with both
example agents (``py:`` form, in-process), and compares each case exactly as the test does (calls
received, tool results told to the model, final answer, per-tier verdicts; for the Agents SDK less
the calls it answers itself). It prints, per suite and agent: cases compared, cases equal to the own
loop's verdicts, cases whose verdicts differ only by the SDK's pre-emption (and match callbench's
scoring of the trace without those calls), and mismatches. Exit status 1 on any mismatch, an
incomplete run or a different script; 0 otherwise.

    python bench/example_agents_verdicts.py                      # genomics, both agents (~1-3 min)
    python bench/example_agents_verdicts.py --suite starter --suite genomics --agent agents_sdk

Needs ``pip install -e '.[test]'`` (the example agents' SDKs); runs on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS_HELPERS = REPO / "tests" / "helpers"
TESTS_AGENTS = REPO / "tests" / "agents"
for folder in (TESTS_HELPERS, TESTS_AGENTS):  # the protocol server and the comparison live there
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from agent_verdicts import (  # noqa: E402 - after the path set-up
    AGENTS,
    CONCURRENCY,
    SUITES,
    Played,
    expected_verdicts,
    mismatches,
    preempted_by_sdk,
    process_environment,
    run_agent,
    run_own_loop,
    script_outside_the_offer,
    verdicts,
)

from callbench.suites.resolve import load_suite  # noqa: E402
from callbench.suites.suite import Suite  # noqa: E402


def problems_of(suite: Suite, own: Played, theirs: Played, sdk: bool) -> list[str]:
    """Whole-run defects: incomplete runs, a different script, calls outside the offer."""
    keys = sorted(own.records)
    out = []
    if len(keys) != len(suite.cases) or sorted(theirs.records) != keys:
        out.append(
            f"case sets differ: own {len(keys)}, agent {len(theirs.records)}, suite {len(suite.cases)}"
        )
    out += [f"{k}: own loop {r.status}" for k, r in own.records.items() if r.status != "completed"]
    out += [f"{k}: agent {r.status}" for k, r in theirs.records.items() if r.status != "completed"]
    if theirs.labels != own.labels or theirs.script != own.script:
        out.append("the two runs played different scripts")
    out += [f"{k}: scripted call outside the offer: {c}" for k, c in script_outside_the_offer(own)]
    if sdk and any(
        preempted_by_sdk(theirs, k) != preempted_by_sdk(own, k) for k in keys if k in theirs.records
    ):
        out.append("the SDK's listed schemas pre-empt other calls than callbench's own offer predicts")
    return out


def compare(suite: Suite, own: Played, agent: str, work: Path) -> int:
    """Run ``agent`` on every case of ``suite``, print its figures; the number of defects."""
    started = time.perf_counter()
    sdk = agent == "agents_sdk"
    with process_environment(work / "env"):
        theirs = run_agent(
            suite, f"py:{AGENTS[agent]}:agent", work / "agent", os.environ, concurrency=CONCURRENCY
        )
    wall = time.perf_counter() - started
    keys = sorted(k for k in own.records if k in theirs.records)
    found = mismatches(suite, own, theirs, keys, sdk=sdk)
    wrong = {item[0] for item in found}
    preempted = [k for k in keys if sdk and preempted_by_sdk(theirs, k)]
    by_preemption = [
        k
        for k in preempted
        if k not in wrong
        and expected_verdicts(suite, own.records[k], preempted_by_sdk(theirs, k)) != verdicts(own.records[k])
    ]
    equal = [k for k in keys if k not in wrong and verdicts(theirs.records[k]) == verdicts(own.records[k])]
    problems = problems_of(suite, own, theirs, sdk)
    failing = sum(not own.records[k].verdicts["task-completion-execution"].passed for k in keys)
    print(
        f"{suite.name:9} {agent:11} compared {len(keys):4}  equal {len(equal):4}  "
        f"differ by SDK pre-emption {len(by_preemption):3} (pre-empted {len(preempted):3})  "
        f"mismatched {len(wrong):3}  [own loop fails {failing} on task completion; {wall:.1f} s]"
    )
    for item in found[:10]:
        print(f"  mismatch: {item}")
    for problem in problems[:10]:
        print(f"  problem: {problem}")
    return len(wrong) + len(problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=sorted(SUITES), help="default: genomics")
    parser.add_argument("--agent", action="append", choices=sorted(AGENTS), help="default: both")
    args = parser.parse_args(argv)
    defects = 0
    with tempfile.TemporaryDirectory(prefix="cb-agent-verdicts-") as tmp:
        work = Path(tmp)
        for name in args.suite or ["genomics"]:
            suite = load_suite(name)
            own = run_own_loop(suite, work / f"own-{name}")
            for agent in args.agent or sorted(AGENTS):
                defects += compare(suite, own, agent, work / f"{name}-{agent}")
    print("OK: every case scores what the own loop scores" if not defects else f"FAILED: {defects} defects")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
