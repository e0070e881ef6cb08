import asyncio
import json

from cfb_helpers import ScriptedProvider, gold_turns, trace_of, wire_turns

from callbench.benchmarks.complexfuncbench.judge import PROMPT_HASH, Judge, VerdictCache, parse_json_object
from callbench.benchmarks.complexfuncbench.scorer import ComplexEvalScorer
from callbench.benchmarks.complexfuncbench.suite import load_suite


def _case(mode="improved", sid="Hotels-0"):
    suite = load_suite(f"complexfuncbench:fixture:{mode}")
    return suite, next(c for c in suite.cases if c.id == sid)


def _paris_trace(case, final_text="Hotel Lumiere: no pets."):
    turns = gold_turns("Hotels-0")
    turns[0] = [("Search_Hotel_Destination", {"query": "Paris, France"})]
    return trace_of(wire_turns(case, turns), final_text=final_text)


def _judge_replies(messages):
    system = messages[0].content
    if "equivalent" in system:
        return 'Sure: {"is_equal": true, "reason": "same city with its country"}'
    return '```json\n{"score": 2, "reason": "ok"}\n```'


def test_judge_rescues_an_equivalent_call_and_verdicts_are_cached(tmp_path):
    suite, case = _case("faithful")
    trace = _paris_trace(case)
    assert not ComplexEvalScorer(suite).score(case, trace).passed  # faithful: the look-up turn ends it

    provider = ScriptedProvider(reply_for=_judge_replies)
    judge = Judge(provider, label="scripted:judge-1", cache=VerdictCache(tmp_path))
    scorer = ComplexEvalScorer(suite, judge=judge)
    verdict = asyncio.run(scorer.ascore(case, trace))
    assert verdict.passed
    assert verdict.details["calls"][0]["method"] == "judge"
    assert verdict.details["judge_model"] == "scripted:judge-1"
    assert verdict.details["prompt_hash"] == PROMPT_HASH
    assert verdict.details["response"] == {"status": "scored", "completeness": 2, "correctness": 2}
    assert len(provider.requests) == 3  # one call verdict, two response scores

    again = asyncio.run(scorer.ascore(case, trace))
    assert again.passed and len(provider.requests) == 3  # everything came from the cache
    assert scorer.score(case, trace).passed  # offline re-score reads the cache, asks nothing

    # A new judge over the same cache folder reuses the verdicts written to disk.
    fresh = ScriptedProvider(replies=[])
    rescored = asyncio.run(
        ComplexEvalScorer(
            suite, judge=Judge(fresh, label="scripted:judge-1", cache=VerdictCache(tmp_path))
        ).ascore(case, trace)
    )
    assert rescored.passed and fresh.requests == []


def test_unparsable_judge_reply_means_not_equal_and_is_not_cached():
    suite, case = _case("faithful")
    provider = ScriptedProvider(replies=["I think they match", "no json", "no json"])
    judge = Judge(provider)
    verdict = asyncio.run(ComplexEvalScorer(suite, judge=judge).ascore(case, _paris_trace(case)))
    assert not verdict.passed and verdict.details["first_error"] == "value_error"
    assert judge.cache.entries == {}
    assert verdict.details["response"]["status"] == "judge_failed"


def test_sync_score_reports_pending_judge_pairs():
    suite, case = _case("improved")
    scorer = ComplexEvalScorer(suite, judge=Judge(ScriptedProvider(replies=[])))
    verdict = scorer.score(case, _paris_trace(case))
    assert verdict.details["judge_pending"] == 1
    assert "await a judge verdict" in verdict.warnings[0]


def test_without_a_judge_the_step_is_skipped_and_said_so():
    suite, case = _case("improved")
    verdict = ComplexEvalScorer(suite).score(case, _paris_trace(case))
    assert verdict.passed  # improved: the look-up is skippable, the rest matched
    assert verdict.details["judge"] == "skipped: not configured"
    assert verdict.details["response"]["status"] == "skipped: no judge configured"
    assert verdict.details["correct_calls"] == 4


def test_no_answer_is_not_sent_to_the_judge():
    suite, case = _case("improved")
    provider = ScriptedProvider(reply_for=_judge_replies)
    verdict = asyncio.run(
        ComplexEvalScorer(suite, judge=Judge(provider)).ascore(
            case, trace_of(wire_turns(case, gold_turns("Hotels-0")), final_text="")
        )
    )
    assert verdict.details["response"]["status"] == "no_answer"
    assert provider.requests == []


def test_parse_json_object():
    assert parse_json_object('x {"a": 1} y') == {"a": 1}
    assert parse_json_object("[1]") is None and parse_json_object("") is None
    assert json.loads('{"is_equal": false}') == parse_json_object('{"is_equal": false}')
