"""Whole runs through the engine: built-in agents on the shipped fixture, then offline re-scoring."""

import json

import pytest

from callbench.api import run, score_run

MUTATION_CLASSES = {
    # What ComplexEval must call each seeded mistake (the format check runs before any matcher).
    "wrong_tool": {"func_error", "format_error"},
    "wrong_value": {"value_error"},
    "missing_key": {"param_missing", "format_error"},
    "extra_key": {"format_error"},
    "schema_invalid_value": {"format_error"},
    "early_stop": {"stop_early"},
    "prose_call": {"stop_early"},
}


def _records(folder):
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


def test_oracle_scores_full_marks_and_rescoring_agrees(tmp_path):
    result = run("complexfuncbench:fixture", "oracle", out_dir=tmp_path / "run")
    agg = result.summary["scorer_aggregates"]["complexeval"]
    assert agg["mode"] == "improved" and agg["n"] == 10
    assert agg["success_rate"] == 1.0 and agg["call_accuracy"] == 1.0 and agg["call_precision"] == 1.0
    assert agg["judges"] == ["skipped: not configured"]
    again = score_run(tmp_path / "run")
    assert again["scorer_aggregates"]["complexeval"]["success_rate"] == 1.0


def test_oracle_in_faithful_mode(tmp_path):
    result = run("complexfuncbench:fixture:faithful", "oracle", out_dir=tmp_path / "run")
    agg = result.summary["scorer_aggregates"]["complexeval"]
    assert agg["mode"] == "faithful" and agg["success"] == 10 and agg["call_accuracy"] == 1.0
    assert agg["success_denominator"] == 1000  # published denominators


@pytest.mark.parametrize("mutation", sorted(MUTATION_CLASSES))
def test_noisy_mutations_land_in_the_right_error_class(tmp_path, mutation):
    run("complexfuncbench:fixture", f"noisy:3:{mutation}", out_dir=tmp_path / "run")
    failed = 0
    for record in _records(tmp_path / "run"):
        applied = record["trace"]["rounds"][0]["model"].removeprefix("noisy:")
        details = record["verdicts"]["complexeval"]["details"]
        if details["success"]:
            # Improved mode forgives a broken optional look-up (all in step 0 in this fixture) when
            # every required call matched.
            assert all(c["counted"] or (c["gold"] or "0.").startswith("0.") for c in details["calls"])
            continue
        failed += 1
        assert details["first_error"] in MUTATION_CLASSES[applied], (record["case_id"], applied, details)
    assert failed >= 5
