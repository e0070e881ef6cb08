import json

from cfb_helpers import gold_turns, sample, wire_turns

from callbench.benchmarks.complexfuncbench.definitions import GENERIC_ERROR
from callbench.benchmarks.complexfuncbench.executor import ReplayExecutor
from callbench.benchmarks.complexfuncbench.suite import load_suite
from callbench.executors.base import run_sync
from callbench.types.messages import ToolCall


def _session(tmp_path, sid="Hotels-0", mode="improved"):
    suite = load_suite(f"complexfuncbench:fixture:{mode}")
    case = next(c for c in suite.cases if c.id == sid)
    return case, ReplayExecutor().start(case, tmp_path, suite)


def _tool_call(i, name, args):
    return ToolCall(id=f"c{i}", name=name, arguments_raw=json.dumps(args), arguments=args)


def test_matched_calls_get_the_annotated_response_under_the_wire_name(tmp_path):
    case, session = _session(tmp_path)
    turns = wire_turns(case, gold_turns("Hotels-0"))
    for turn in turns[:3]:
        for name, args in turn:
            outcome = run_sync(session.call(name, args))
            assert outcome.ok and outcome.annotations["cfb_status"] == "matched"
    name, args = turns[3][0]
    assert name == "Get_Hotel_Reviews-Tips-"
    outcome = run_sync(session.call(name, args))
    assert outcome.ok and json.loads(outcome.content) == sample("Hotels-0").steps[3][0].response
    assert outcome.annotations == {"cfb_status": "matched", "cfb_gold": "3.0", "cfb_method": "identical"}
    assert session.snapshot()["consumed"] == ["0.0", "1.0", "2.0", "2.1", "3.0"]


def test_unmatched_calls_get_the_generic_error_and_format_errors_their_text(tmp_path):
    _case, session = _session(tmp_path, "Attraction-0")
    wrong = run_sync(session.call("Get_Attraction_Details", {"slug": "other", "currency_code": "EUR"}))
    assert not wrong.ok and json.loads(wrong.content) == GENERIC_ERROR
    assert wrong.annotations["cfb_error"] == "value_error"
    bad = run_sync(session.call("Get_Attraction_Details", {"slug": 1}))
    assert not bad.ok and "should be a string" in bad.content


def test_begin_round_maps_parallel_calls_together(tmp_path):
    case, session = _session(tmp_path, "Cross-0", "faithful")
    turn = wire_turns(case, gold_turns("Cross-0"))[0]
    # One wrong look-up among four: mapped together, the turn advances and nothing ends.
    turn[1] = (turn[1][0], {"query": "Tokio"})
    run_sync(session.begin_round(1, [_tool_call(i, n, a) for i, (n, a) in enumerate(turn)]))
    outcomes = [run_sync(session.call(n, a)) for n, a in turn]
    assert [o.annotations["cfb_status"] for o in outcomes] == ["matched", "mismatch", "matched", "matched"]
    assert session.episode.ended is None and session.episode.turns == 1
    # Without the hook, a lone wrong call could be part of a larger turn: it never ends the episode.
    _, alone = _session(tmp_path, "Cross-0", "faithful")
    assert run_sync(alone.call(*turn[1])).annotations["cfb_status"] == "mismatch"
    assert alone.episode.ended is None
    # The scorer groups by round: that same call as a whole turn does end a faithful episode.
    alone.episode.play_turn([alone._pred(*turn[1], None)])
    assert alone.episode.ended is not None


def test_begin_round_skips_calls_the_harness_rejected(tmp_path):
    case, session = _session(tmp_path, "Attraction-10")
    lookup = wire_turns(case, gold_turns("Attraction-10"))[0][0]
    broken = ToolCall(
        id="x", name=lookup[0], arguments_raw="{", arguments=None, parse_error="Expecting value"
    )
    run_sync(session.begin_round(1, [broken, _tool_call(1, *lookup)]))
    outcome = run_sync(session.call(*lookup))  # the harness never executes the malformed call
    assert outcome.ok and session.episode.turns == 1
    assert [r.status for r in session.episode.results] == ["decode_error", "matched"]


def test_replay_uses_judge_verdicts_stored_in_the_cache_folder_without_asking(tmp_path):
    import asyncio

    from cfb_helpers import ScriptedProvider

    from callbench.benchmarks.complexfuncbench.definitions import PredCall, gold_calls_of
    from callbench.benchmarks.complexfuncbench.judge import Judge, VerdictCache
    from callbench.suites.suite import SuiteOptions

    # An earlier run stored the verdict; the judge endpoint is now unreachable (port 9).
    spec = "openai:judge-1@http://127.0.0.1:9/v1"
    paris = ("Search_Hotel_Destination", {"query": "Paris, France"})
    earlier = Judge(
        ScriptedProvider(reply_for=lambda m: '{"is_equal": true, "reason": "same"}'),
        label=spec,
        cache=VerdictCache(tmp_path / "cache"),
    )
    hotels = sample("Hotels-0")
    function = next(f for f in hotels.functions if f["name"] == paris[0])
    assert asyncio.run(
        earlier.judge_call(PredCall(0, *paris), gold_calls_of(hotels)[0][0], function, hotels.query)
    )

    options = SuiteOptions(extra={"judge": spec, "judge_cache": str(tmp_path / "cache")})
    suite = load_suite("complexfuncbench:fixture:faithful", options)
    case = next(c for c in suite.cases if c.id == "Hotels-0")
    outcome = run_sync(ReplayExecutor().start(case, tmp_path, suite).call(*paris))
    assert not asyncio.iscoroutine(outcome)  # answered at once: nothing to ask
    assert outcome.ok and outcome.annotations["cfb_method"] == "judge"
    assert json.loads(outcome.content) == hotels.steps[0][0].response
