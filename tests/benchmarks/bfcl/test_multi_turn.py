"""Multi-turn BFCL through the real harness loop with the bfcl-multi-turn executor."""

from __future__ import annotations

import asyncio

import pytest
from gold_agent import GoldTurnAgent

from callbench.benchmarks.bfcl.executor import BfclMultiTurnExecutor
from callbench.benchmarks.bfcl.multi_turn_checks import check_multi_turn, decode_result_turns
from callbench.benchmarks.bfcl.scorer import BfclScorer
from callbench.benchmarks.bfcl.suite import load_suite
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy
from callbench.suites.suite import SuiteOptions
from callbench.types.messages import GenerationSettings


@pytest.fixture(scope="module")
def suite(bfcl_folder):
    return load_suite("bfcl:multi_turn", SuiteOptions(data=bfcl_folder, extra={"limit": 6}))


def _play(suite, case, agent):
    episode = Episode(case, suite.candidate_tools(case), ModePolicy("production-parity"), suite.system_prompt)
    session = BfclMultiTurnExecutor().start(case, None, suite)
    trace = asyncio.run(run_episode(episode, agent, session, GenerationSettings()))
    trace.final_state = session.snapshot()
    return trace, episode


def test_gold_play_passes_every_category(suite):
    scorer = BfclScorer(suite)
    seen = set()
    for case in suite.cases:
        trace, _ = _play(suite, case, GoldTurnAgent(case))
        verdict = scorer.score(case, trace)
        assert verdict.passed, (case.id, verdict.rationale, verdict.reasons)
        assert verdict.partial == 1.0
        seen.add(case.category)
    assert seen == {
        "multi_turn_base",
        "multi_turn_miss_func",
        "multi_turn_miss_param",
        "multi_turn_long_context",
    }


def test_skipped_turn_fails_with_partial_credit(suite):
    case = next(
        c
        for c in suite.cases
        if c.category == "multi_turn_base"
        and sum(1 for turn in c.metadata["bfcl"]["ground_truth"] if turn) >= 3
    )
    trace, _ = _play(suite, case, GoldTurnAgent(case, skip_turns={0}))
    verdict = BfclScorer(suite).score(case, trace)
    assert not verdict.passed
    assert verdict.codes[0] in ("multi_turn:empty_turn_model_response",)
    assert 0.0 <= verdict.partial < 1.0
    assert verdict.details["bfcl"]["turns"][0] is False


def test_missed_functions_are_offered_late(suite):
    case = next(c for c in suite.cases if c.category == "multi_turn_miss_func")
    withheld = {doc["name"] for docs in case.executor_config["withheld_docs"].values() for doc in docs}
    assert withheld and not withheld & {t.name for t in case.inline_contracts()}
    _, episode = _play(suite, case, GoldTurnAgent(case))
    assert withheld <= set(episode.offered_by_name)


def test_step_cap_force_quits(suite):
    case = suite.cases[0]
    trace, _ = _play(suite, case, GoldTurnAgent(case, loop_tool="pwd"))
    assert trace.final_state["bfcl"]["force_quit"] is True
    assert len(trace.rounds) == 21  # 21 calling steps: the 21st exceeds BFCL's limit of 20
    verdict = BfclScorer(suite).score(case, trace)
    assert not verdict.passed and verdict.codes == ["multi_turn:force_terminated"]


def test_result_file_turns_decode_like_bfcl(suite):
    case = suite.cases[0]
    config, truth = case.executor_config, case.metadata["bfcl"]["ground_truth"]
    assert decode_result_turns("not a list") is None
    result = [[[{"ls": "{}"}], "plain text", [{"cd": "{bad json"}]] for _ in truth]
    turns = decode_result_turns(result)
    assert [len(steps) for steps in turns] == [1] * len(truth)
    outcome = check_multi_turn(config["involved_classes"], config["initial_config"], False, turns, truth)
    assert not outcome.check.valid
