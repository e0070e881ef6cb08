"""Built-in agents on the starter suite: oracle 100%, refuse 0%, every noisy mutation caught."""

import pytest

import callbench
from callbench.providers.agents.noisy import MUTATIONS

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")


def run(model, tmp_path, **kw):
    return callbench.run(
        "starter", model, "all", out_dir=tmp_path / model.replace(":", "_"), progress="quiet", **kw
    )


def test_oracle_passes_every_starter_case_in_every_tier(tmp_path):
    result = run("oracle", tmp_path)
    assert result.summary["n_completed"] == 16
    for tier in TIERS:
        assert result.summary["tiers"][tier]["accuracy"] == 1.0, tier


def test_refuse_scores_zero_in_every_tier(tmp_path):
    result = run("refuse", tmp_path)
    for tier in TIERS:
        assert result.summary["tiers"][tier]["passed"] == 0
    assert all("no_structured_call" in r.verdicts[t].codes for r in result.records for t in TIERS)


def test_baseline_is_honest_and_between_the_bounds(tmp_path):
    result = run("baseline", tmp_path)
    accuracy = result.summary["tiers"]["task-completion-execution"]["accuracy"]
    assert 0.0 < accuracy < 1.0


EXPECTED_CODE = {
    "wrong_tool": ("native-function-contract", "tool_missing"),
    "wrong_value": ("native-function-contract", "argument_mismatch"),
    "missing_key": ("native-function-contract", "argument_missing"),
    "extra_key": ("native-function-contract", "schema_invalid"),
    "schema_invalid_value": ("native-function-contract", "schema_invalid"),
    "unexpected_call": ("task-completion-execution", "unexpected_state_change"),
    "early_stop": ("native-function-contract", "tool_missing"),
    "prose_call": ("native-function-contract", "no_structured_call"),
}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_each_noisy_mutation_is_caught_with_its_reason_code(tmp_path, mutation):
    cases = ["email_after_lookup", "create_and_delete", "file_round_trip"]
    result = run(f"noisy:3:{mutation}", tmp_path, case_ids=cases)
    tier, code = EXPECTED_CODE[mutation]
    for record in result.records:
        applied = record.trace.rounds[0].model if record.trace.rounds else None
        assert applied == f"noisy:{mutation}", (record.key, applied)
        verdict = record.verdicts[tier]
        assert not verdict.passed, (record.key, mutation)
        assert code in verdict.codes, (record.key, mutation, verdict.codes)


def test_noisy_is_seeded(tmp_path):
    a = run("noisy:5", tmp_path / "a")
    b = run("noisy:5", tmp_path / "b")

    def pick(res):
        return [
            (r.key, r.trace.rounds[0].model if r.trace.rounds else None)
            for r in sorted(res.records, key=lambda r: r.key)
        ]

    assert pick(a) == pick(b)
