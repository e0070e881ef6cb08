"""The example agents score exactly what the same call sequences score in callbench's own loop, on
every starter case and a covering slice of genomics (issue 14, "Done when"; issue 26 for the slice).

For each suite, two runs play the same script: a local OpenAI-compatible server
(:class:`ProtocolServer`) whose responder plays the built-in ``noisy:2`` agent (the gold path with one
seeded mistake in about three cases of four) from the conversation it is sent.

(a) callbench's own loop drives that server as the model ``openai:scripted@URL``, on every case;
(b) an example agent (``--agent py:MODULE:agent``, in-process) drives another such server and calls
    the case's tools over callbench's MCP endpoint.

Per case, these must be equal: the calls callbench received (tool and arguments, in order), what the
model was told each call returned (less the continuation guidance the own loop's production-parity
mode appends, which an agent under test does not get), the final answer, and per strict tier
(passed, reason codes). The scripts must be identical (each run has its own responder). Failures for
several reasons must exist, or the comparison would be all-pass against all-pass: with ``noisy:2``,
8 of 16 starter and 152 of 220 genomics cases fail task completion, with 6 and 9 distinct reason
codes. One case per agent also runs through ``cmd:`` (a subprocess, ~3 s of imports each) to cover
that path.

**The genomics slice.** The own loop runs all 220 genomics cases (~4 s); the agents run a
deterministic slice of them (:func:`agent_verdicts.covering_slice`: every 10th case in key order,
plus, in key order, each case that exercises something the slice does not yet: a mistake label of
the player, a case group, each tier's pass and fail, each tier's reason codes, each kind of call the
Agents SDK pre-empts, and a pre-emption that changes the verdict). The test asserts that the slice
covers everything the whole run exercises. The full 220-case comparison, both agents, is
``python bench/example_agents_verdicts.py`` (prints cases compared, equal, differing by the SDK's
pre-emption; exits 1 on a mismatch); docs/testing.md.

The Agents SDK answers some calls itself, without calling MCP: calls of unknown tools, arguments
that are not a JSON object (examples/agents/README.md) and, in openai-agents 0.24, calls that lack
a required parameter of the listed schema (``MCPServer._validate_required_parameters``). The model
is told "An error occurred while running the tool", and callbench never sees the call: for the
benchmark it was not made, so the verdict may differ for a reason that is the SDK's, not
callbench's. ``noisy:2`` makes such calls (``missing_key``, and ``wrong_tool`` with the first tool's
arguments). For the SDK agent the test therefore asserts the exact expected difference: its MCP
calls are the own loop's calls minus exactly those the SDK pre-empts (computed from the script and
the schemas it listed), and its verdicts are what callbench's scorers give the own loop's trace
without those calls. Where no call is pre-empted, that is the own loop's verdict itself. (Starter:
no case has such a call. Genomics: 26 cases have one, and all 26 verdicts differ from the own loop's
for that reason alone.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from agent_verdicts import (
    AGENTS,
    CONCURRENCY,
    EXAMPLES,
    MODEL,
    ROOT,
    SUITES,
    TIERS,
    Played,
    agent_environment,
    covering_slice,
    features,
    mismatches,
    preempted_by_sdk,
    preemptions,
    run_agent,
    run_own_loop,
    script_outside_the_offer,
)

from callbench.suites.resolve import load_suite
from callbench.suites.suite import Suite

SLICE_STRIDE = 10
"""Every 10th genomics case joins the slice for breadth, besides the cases that cover a feature."""


@pytest.fixture(scope="module")
def suites() -> dict[str, Suite]:
    return {name: load_suite(name) for name in SUITES}


@pytest.fixture(scope="module")
def own_loop(suites: dict[str, Suite], tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Played]:
    """callbench's own loop on the scripted server, once per suite, every case (shared by both agents)."""
    done: dict[str, Played] = {}

    def play(suite: str) -> Played:
        if suite not in done:
            done[suite] = run_own_loop(suites[suite], tmp_path_factory.mktemp(f"own-{suite}"))
        return done[suite]

    return play


@pytest.fixture(scope="module")
def compared(suites: dict[str, Suite], own_loop: Callable[[str], Played]) -> dict[str, list[str]]:
    """The case keys the agents play, per suite: every starter case, the covering genomics slice."""
    starter = sorted(own_loop("starter").records)
    genomics, everything = covering_slice(suites["genomics"], own_loop("genomics"), SLICE_STRIDE)
    own = own_loop("genomics")
    covered = set().union(*(features(suites["genomics"], own, k) for k in genomics))
    assert covered == everything  # the slice exercises all the whole run does
    assert SUITES["genomics"] / 10 <= len(genomics) < SUITES["genomics"] / 4, len(genomics)
    return {"starter": starter, "genomics": genomics}


@pytest.fixture
def agent_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """The example agents' model settings; ``examples/agents`` importable for ``py:``."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    settings, removed = agent_environment(tmp_path)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    for name in removed:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_genomics_slice_holds_what_the_whole_run_has(
    suites: dict[str, Suite], own_loop: Callable[[str], Played], compared: dict[str, list[str]]
) -> None:
    """The slice's premise, checked against the whole own-loop run: failures of several kinds,
    pre-empted calls, and all of it inside the slice."""
    own, chosen = own_loop("genomics"), compared["genomics"]
    _, everything = covering_slice(suites["genomics"], own, SLICE_STRIDE)
    assert ("preempted", "missing_required") in everything
    assert ("preemption changes the verdict", "True") in everything
    assert len({f[2] for f in everything if f[0] == "code" and f[1] == TIERS[-1]}) >= 9
    assert len({f for f in everything if f[0] == "label"}) >= 8
    # Where the SDK pre-empts: as many cases in the slice as the stride alone would not guarantee.
    assert any(preemptions(own, k) for k in chosen)
    assert chosen == sorted(set(chosen)) and set(chosen) < set(own.records)


@pytest.mark.parametrize("suite_name", sorted(SUITES))
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_example_agent_scores_what_the_own_loop_scores(
    agent: str,
    suite_name: str,
    suites: dict[str, Suite],
    own_loop: Callable[[str], Played],
    compared: dict[str, list[str]],
    agent_env: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    suite = suites[suite_name]
    own = own_loop(suite_name)
    keys = compared[suite_name]
    ids = [own.records[k].case_id for k in keys]
    spec = f"py:{AGENTS[agent]}:agent"
    theirs = run_agent(suite, spec, tmp_path / "agent", agent_env, concurrency=CONCURRENCY, case_ids=ids)

    # Complete: every case of the suite, once, scored, in the own loop; the compared ones in the agent's.
    assert len(own.records) == SUITES[suite_name] == len(suite.cases)
    assert sorted(theirs.records) == keys
    assert [k for k in own.records if own.records[k].status != "completed"] == []
    assert [k for k in keys if theirs.records[k].status != "completed"] == []
    assert all(r.harness_mode == "agent-under-test" for r in theirs.records.values())

    # Not all-pass vs all-pass: the script fails cases for several different reasons.
    failed = [own.records[k].verdicts["task-completion-execution"] for k in keys]
    reasons = {code for v in failed if not v.passed for code in v.codes}
    assert 0 < sum(not v.passed for v in failed) < len(keys)
    assert len(reasons) >= 3, reasons
    assert script_outside_the_offer(own) == []

    # The same script was played: same mistakes, same calls and arguments in every round.
    assert theirs.labels == {k: own.labels[k] for k in keys}
    assert theirs.script == own.script_for(keys)
    assert mismatches(suite, own, theirs, keys, sdk=agent == "agents_sdk") == []
    if agent == "agents_sdk":
        # Starter: no call is pre-empted, equality is exact. Genomics: some are, and the comparison
        # above checked exactly those differences (the exception is real, not vacuous).
        preempted = [k for k in keys if preempted_by_sdk(theirs, k)]
        assert bool(preempted) == (suite_name == "genomics"), preempted
        # The schemas the SDK listed pre-empt exactly what callbench's own offer predicts (the
        # slice was chosen from the latter).
        assert {k: preemptions(theirs, k) for k in keys} == {k: preemptions(own, k) for k in keys}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_command_form_scores_one_case_like_the_own_loop(
    agent: str,
    suites: dict[str, Suite],
    own_loop: Callable[[str], Played],
    agent_env: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """One failing starter case through ``cmd:``, started from the repository root with a relative
    script path (callbench runs commands in the folder it was started in)."""
    suite = suites["starter"]
    own = own_loop("starter")
    case = next(c for c in suite.cases if not own.records[c.key].verdicts["task-completion-execution"].passed)
    agent_env.chdir(ROOT)
    spec = f"cmd:{sys.executable} examples/agents/{AGENTS[agent]}.py --model {MODEL}"
    theirs = run_agent(suite, spec, tmp_path / "agent", agent_env, case_ids=[case.id])

    assert list(theirs.records) == [case.key]
    record = theirs.records[case.key]
    assert record.status == "completed" and record.harness_mode == "agent-under-test"
    assert theirs.script == own.script_for([case.key])
    assert mismatches(suite, own, theirs, [case.key], sdk=agent == "agents_sdk") == []
