"""The bfcl scorer on callbench traces: loader cases, oracle traces, perturbations, aggregation."""

from __future__ import annotations

import pytest

from callbench.benchmarks.bfcl.aggregate import aggregate_rows
from callbench.benchmarks.bfcl.scorer import BfclScorer
from callbench.benchmarks.bfcl.suite import load_suite
from callbench.suites.suite import SuiteOptions
from callbench.types.trace import RoundInfo, trace_from_calls


@pytest.fixture(scope="module")
def suite(bfcl_folder):
    return load_suite(
        "bfcl:simple_python,parallel,live_parallel,irrelevance,live_relevance",
        SuiteOptions(data=bfcl_folder, extra={"limit": 12}),
    )


def _gold_trace(case, rename=lambda name: name):
    calls = [{"tool": rename(step.tool), "arguments": step.arguments, "round": 1} for step in case.expected]
    return trace_from_calls(calls)


def test_oracle_traces_pass_and_aggregate(suite):
    scorer = BfclScorer(suite)
    rows = []
    for case in suite.cases:
        if case.category in ("irrelevance",):
            trace = trace_from_calls([])
            trace.rounds.append(RoundInfo(index=1, started_at=0.0, text="No function fits."))
        elif case.category == "live_relevance":
            tool = case.inline_contracts()[0].name
            trace = trace_from_calls([{"tool": tool, "arguments": {}, "round": 1}])
        else:
            trace = _gold_trace(case)
        verdict = scorer.score(case, trace)
        assert verdict.passed, (case.id, verdict.rationale)
        rows.append((case.category, verdict.passed))
    summary = aggregate_rows(rows)
    assert summary["categories"]["parallel"]["accuracy"] == 1.0
    assert "simple_java" in summary["summary"]["missing"]
    assert summary["summary"]["non_live_simple"] == pytest.approx(1 / 3)


def test_underscored_names_are_restored(suite):
    case = next(c for c in suite.cases if c.category == "parallel" and "." in c.expected[0].tool)
    verdict = BfclScorer(suite).score(case, _gold_trace(case, lambda n: n.replace(".", "_")))
    assert verdict.passed


def test_failures_carry_bfcl_error_types(suite):
    scorer = BfclScorer(suite)
    case = next(c for c in suite.cases if c.category == "simple_python")
    trace = trace_from_calls([], final_text="I would call a tool.")
    assert scorer.score(case, trace).codes == ["ast_decoder:decoder_failed"]
    assert scorer.score(case, trace_from_calls([])).codes == ["simple_function_checker:wrong_count"]
    extra = [{"tool": case.expected[0].tool, "arguments": {**case.expected[0].arguments, "bogus": 1}}]
    assert scorer.score(case, trace_from_calls(extra)).codes == ["simple_function_checker:unexpected_param"]
    irrelevant = next(c for c in suite.cases if c.category == "irrelevance")
    called = trace_from_calls([{"tool": irrelevant.inline_contracts()[0].name, "arguments": {"x": 1}}])
    assert scorer.score(irrelevant, called).codes == ["irrelevance_error:decoder_success"]


def test_improved_mode_records_faithful_verdict(bfcl_folder):
    suite = load_suite("bfcl:simple_python:improved", SuiteOptions(data=bfcl_folder, extra={"limit": 40}))
    scorer = BfclScorer(suite)
    case = next(
        c
        for c in suite.cases
        if any(type(v) is int and type(v) is not bool for v in c.expected[0].arguments.values())
    )
    args = {k: (str(v) if type(v) is int else v) for k, v in case.expected[0].arguments.items()}
    verdict = scorer.score(case, trace_from_calls([{"tool": case.expected[0].tool, "arguments": args}]))
    details = verdict.details["bfcl"]
    assert verdict.passed and details["faithful_passed"] is False
    assert details["faithful_error_type"] == "type_error:simple"
    assert details["mode"] == "improved" and details["numeric_strings"] is True


def test_unparsable_arguments_fail_like_bfcl(suite):
    from callbench.types.trace import Trace, TraceCall

    case = next(c for c in suite.cases if c.category == "simple_python")
    call = TraceCall(
        index=0,
        call_id="c0",
        round=1,
        tool=case.expected[0].tool,
        arguments_raw="",
        arguments=None,
        parse_error="empty",
    )
    verdict = BfclScorer(suite).score(case, Trace(calls=[call]))
    assert verdict.codes == ["ast_decoder:decoder_failed"]
