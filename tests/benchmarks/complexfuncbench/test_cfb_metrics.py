import pytest
from cfb_helpers import gold_turns, trace_of, wire_turns

from callbench.benchmarks.complexfuncbench.metrics import aggregate_records, ratio_interval, result_tables
from callbench.benchmarks.complexfuncbench.scorer import ComplexEvalScorer
from callbench.benchmarks.complexfuncbench.suite import load_suite


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
    # Reordered filter plus an explicit default: the rule matcher fails on the key sets, the gate
    # compares the critical filter as a set (both modes, as upstream's value checker), and the
    # response matcher fills the default.
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
    # Faithful: the infra error fails; denominators are the published 1000 (and 150 / 400 per
    # domain), with the rate over the loaded samples beside it and a warning.
    assert faithful["success"] == 9 and faithful["success_denominator"] == 1000
    assert faithful["success_rate"] == pytest.approx(9 / 1000)
    assert faithful["by_domain"]["Hotels"]["success_denominator"] == 150
    assert faithful["by_domain"]["Cross"]["success_denominator"] == 400
    assert faithful["success_rate_ci"] is None  # no interval over published denominators
    assert improved["success_rate_ci"]["method"] == "cluster-bootstrap"
    # Call accuracy: faithful counts a repeated look-up each time (it can pass 100%); the infra row
    # is absent from call accuracy in both modes (upstream never writes it).
    assert faithful["by_domain"]["Attraction"]["call_accuracy"] == pytest.approx((1 + 4) / (1 + 3))
    assert improved["by_domain"]["Attraction"]["call_accuracy"] == 1.0
    assert faithful["by_domain"]["Hotels"]["call_accuracy"] == 1.0
    assert improved["by_domain"]["Hotels"]["call_accuracy"] == 1.0
    assert faithful["by_domain"]["Cross"]["call_accuracy"] == 1.0  # only Cross-0 counts
    gold_total = 1 + 5 + 5 + 3 + 5 + 4 + 2 + 3 + 6
    assert improved["call_accuracy"] == 1.0
    assert improved["call_precision"] == pytest.approx(gold_total / (gold_total + 1))
    assert faithful["first_errors"]["counts"]["value_error"] == 0
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


def test_result_table_has_one_column_per_domain():
    [table] = result_tables(aggregate_records(_records("improved", {})))
    assert table.columns == [
        "mode",
        "Attraction",
        "Car-Rental",
        "Cross",
        "Flights",
        "Hotels",
        "Overall",
        "Call precision",
        "Compl.",
        "Corr.",
    ]
    [row] = table.rows
    assert row[:2] == ["improved", "100.00 / 100.00"] and row[-3:] == ["100.00", "-", "-"]
    assert table.notes == []
    assert result_tables({"n": 0})[0].notes == ["(no ComplexEval records)"]


def test_result_tables_one_per_mode_titled_by_mode():
    mixed = aggregate_records(_records("improved", {}) + _records("faithful", {}))
    tables = result_tables(mixed)
    assert [t.title for t in tables] == ["faithful", "improved"]
    assert [t.rows[0][0] for t in tables] == ["faithful", "improved"]


def _fake_rows(domain_counts: dict[str, int], faithful: bool = True) -> list[dict]:
    rows = []
    for domain, n in domain_counts.items():
        for i in range(n):
            metrics = {
                "success": float(i % 2 == 0),
                "faithful": float(faithful),
                "correct_calls": 1.0,
                "gold_calls": 2.0,
                "predicted_calls": 1.0,
                "gold_steps": 1.0,
                "model_turns": 1.0,
            }
            rows.append(
                {
                    "verdicts": {
                        "complexeval": {
                            "metrics": metrics,
                            "details": {"domain": domain, "template": f"{domain}/{i // 10}"},
                        }
                    }
                }
            )
    return rows


def test_faithful_rates_on_partial_data_show_the_loaded_rate_and_warn():
    summary = aggregate_records(_records("faithful", {}))
    assert summary["success_rate"] == pytest.approx(10 / 1000)
    assert summary["success_rate_loaded"] == 1.0
    assert summary["by_domain"]["Hotels"]["success_rate_loaded"] == 1.0
    assert len(summary["warnings"]) == 1 and "only 10 sample(s) were loaded" in summary["warnings"][0]
    [table] = result_tables(summary)
    assert table.notes[0] == "success over the 10 loaded samples: 100.00"
    assert table.notes[1].startswith("warning: faithful success rates")
    # The whole data set: published and loaded counts agree, nothing to warn about.
    full = aggregate_records(
        _fake_rows({"Hotels": 150, "Flights": 150, "Car-Rental": 150, "Attraction": 150, "Cross": 400})
    )
    assert full["success_rate"] == full["success_rate_loaded"] == 0.5 and "warnings" not in full
    # Improved mode divides by the loaded samples anyway.
    assert "success_rate_loaded" not in aggregate_records(_records("improved", {}))


def test_the_scorer_aggregate_carries_the_table_the_cli_prints():
    suite = load_suite("complexfuncbench:fixture:faithful")
    records = _records("faithful", {})
    aggregate = ComplexEvalScorer(suite).aggregate(records)
    assert aggregate is not None and aggregate.tables is not None
    [table] = aggregate.tables
    assert table.columns[0] == "mode" and table.rows[0][0] == "faithful"
    assert any(note.startswith("warning:") for note in table.notes)
