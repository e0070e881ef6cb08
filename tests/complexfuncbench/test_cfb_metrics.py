import pytest
from cfb_helpers import gold_turns, trace_of, wire_turns

from callbench.scoring.cfb_metrics import aggregate_records, ratio_interval
from callbench.scoring.complexeval import ComplexEvalScorer
from callbench.suites.complexfuncbench import load_suite


def _records(mode: str, traces: dict[str, object]) -> list[dict]:
    suite = load_suite(f"complexfuncbench:fixture:{mode}")
    scorer = ComplexEvalScorer(suite)
    out = []
    for case in suite.cases:
        trace = traces.get(case.id) or trace_of(wire_turns(case, gold_turns(case.id)))
        if callable(trace):
            trace = trace(case)
        out.append({"verdicts": {"complexeval": scorer.score(case, trace).model_dump()}})
    return out


def _reordered_filter(case):
    turns = gold_turns("Hotels-10")
    _name, args = turns[2][0]
    # Reordered filter plus an explicit default: the rule matcher fails on the key sets, then the
    # faithful gate compares the critical filter verbatim; improved compares it as a set.
    args["categories_filter"] = ",".join(reversed(args["categories_filter"].split(",")))
    args["currency_code"] = "USD"
    return trace_of(wire_turns(case, turns))


def _repeated_lookup(case):
    turns = gold_turns("Attraction-10")
    return trace_of(wire_turns(case, [turns[0], turns[0], turns[1]]))


def _no_answer(case):
    return trace_of(wire_turns(case, gold_turns(case.id)), final_text="")


def _infra(case):
    return trace_of(wire_turns(case, gold_turns(case.id)[:1]), stop="error")


CONSTRUCTED = {"Hotels-10": _reordered_filter, "Attraction-10": _repeated_lookup, "Cross-1": _infra}


def test_faithful_and_improved_differ_on_the_same_traces():
    faithful = aggregate_records(_records("faithful", CONSTRUCTED))
    improved = aggregate_records(_records("improved", CONSTRUCTED))
    assert faithful["mode"] == "faithful" and improved["mode"] == "improved"
    # Improved: all 9 completed samples succeed (a reordered filter is the same filter); the infra
    # error is counted apart, outside every denominator.
    assert improved["success"] == 9 and improved["success_denominator"] == 9
    assert improved["n_infra_error"] == 1
    assert improved["success_rate"] == 1.0
    # Faithful: the reordered critical filter is a value_error and the infra error fails too;
    # denominators are the published 1000 (and 150 / 400 per domain).
    assert faithful["success"] == 8 and faithful["success_denominator"] == 1000
    assert faithful["success_rate"] == pytest.approx(8 / 1000)
    assert faithful["by_domain"]["Hotels"]["success_denominator"] == 150
    assert faithful["by_domain"]["Cross"]["success_denominator"] == 400
    assert faithful["success_rate_ci"] is None  # no interval over published denominators
    assert improved["success_rate_ci"]["method"] == "cluster-bootstrap"
    # Call accuracy: faithful counts a repeated look-up each time (it can pass 100%); the infra row
    # is absent from call accuracy in both modes (upstream never writes it).
    assert faithful["by_domain"]["Attraction"]["call_accuracy"] == pytest.approx((1 + 4) / (1 + 3))
    assert improved["by_domain"]["Attraction"]["call_accuracy"] == 1.0
    assert faithful["by_domain"]["Hotels"]["call_accuracy"] == pytest.approx((5 + 5 + 2) / 13)
    assert improved["by_domain"]["Hotels"]["call_accuracy"] == 1.0
    assert faithful["by_domain"]["Cross"]["call_accuracy"] == 1.0  # only Cross-0 counts
    gold_total = 1 + 5 + 5 + 3 + 5 + 4 + 2 + 3 + 6
    assert improved["call_accuracy"] == 1.0
    assert improved["call_precision"] == pytest.approx(gold_total / (gold_total + 1))
    assert faithful["first_errors"]["counts"]["value_error"] == 1
    assert faithful["first_errors"]["counts"]["infra_error"] == 1
    assert improved["first_errors"]["counts"]["infra_error"] == 1
    assert improved["by_domain"]["Attraction"]["call_precision"] == pytest.approx(4 / 5)


def test_non_answers_score_zero_only_in_improved_mode():
    rows = _records("improved", {"Attraction-0": _no_answer})
    # Inject judge scores into the metrics as the async scorer would.
    for row in rows:
        metrics = row["verdicts"]["complexeval"]["metrics"]
        if "response:no_answer" not in metrics:
            metrics.update({"completeness": 2.0, "correctness": 1.0})
    improved = aggregate_records(rows)["response"]
    assert improved["completeness"] == {"mean": pytest.approx(18 / 10), "n": 10, "coverage": 1.0}
    for row in rows:
        row["verdicts"]["complexeval"]["metrics"]["faithful"] = 1.0
        row["verdicts"]["complexeval"]["details"] = {}
    faithful = aggregate_records(rows)["response"]
    assert faithful["correctness"] == {"mean": 1.0, "n": 9, "coverage": 0.9}


def test_modes_are_never_pooled_and_steps_are_reported():
    rows = _records("improved", {}) + _records("faithful", {})
    out = aggregate_records(rows)
    assert set(out["by_mode"]) == {"faithful", "improved"} and "never pooled" in out["warning"]
    steps = out["by_mode"]["improved"]["steps"]
    assert steps["mean_extra_turns"] == 0.0 and steps["mean_gold_steps"] == pytest.approx(2.6)
    assert out["by_mode"]["improved"]["embedders"] == ["char-ngram-3"]
    assert out["by_mode"]["improved"]["judges"] == ["skipped: not configured"]
    assert aggregate_records([]) == {"n": 0}


def test_ratio_interval_resamples_clusters():
    ci = ratio_interval([1, 1, 0, 0], [1, 1, 1, 1], ["a", "a", "b", "b"])
    assert ci["estimate"] == 0.5 and ci["method"] == "cluster-bootstrap"
    assert 0.0 <= ci["low"] <= 0.5 <= ci["high"] <= 1.0


def test_markdown_table_has_one_column_per_domain():
    from callbench.scoring.cfb_metrics import markdown_table

    table = markdown_table(aggregate_records(_records("improved", {})))
    head, _rule, row = table.splitlines()
    assert head.startswith("| mode | Attraction | Car-Rental | Cross | Flights | Hotels | Overall")
    assert row.startswith("| improved | 100.00 / 100.00 |") and row.endswith("| 100.00 | - | - |")
    assert markdown_table({"n": 0}) == "(no ComplexEval records)"
