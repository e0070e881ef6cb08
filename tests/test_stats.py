import math

import pytest
from synth import make_records

from callbench import stats
from callbench.errors import PoolingError


def test_wilson_matches_known_values():
    iv = stats.wilson_interval(8, 10)
    # Reference values of the Wilson score interval for 8/10 at 95%.
    assert iv.estimate == 0.8
    assert iv.low == pytest.approx(0.4902, abs=1e-4)
    assert iv.high == pytest.approx(0.9433, abs=1e-4)
    assert stats.wilson_interval(0, 0).low == 0.0 and stats.wilson_interval(0, 0).high == 1.0
    edge = stats.wilson_interval(10, 10)
    assert edge.high == 1.0 and edge.low < 1.0


def test_bootstrap_contains_mean_and_cluster_widens():
    values = [1.0] * 30 + [0.0] * 30
    plain = stats.bootstrap_interval(values)
    # Perfectly correlated clusters of 10: only 6 independent units, so the interval is wider.
    clustered = stats.bootstrap_interval(values, [str(i // 10) for i in range(60)])
    assert plain.low < 0.5 < plain.high
    assert clustered.method == "cluster-bootstrap"
    assert (clustered.high - clustered.low) > (plain.high - plain.low) * 1.5


def test_bootstrap_is_reproducible():
    values = [float(i % 3 == 0) for i in range(100)]
    assert stats.bootstrap_interval(values) == stats.bootstrap_interval(values)


def test_mcnemar_exact():
    assert stats.mcnemar_exact(0, 0) == 1.0
    # 10 discordant pairs all one way: p = 2 * 0.5**10.
    assert stats.mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)
    assert stats.mcnemar_exact(5, 5) == pytest.approx(1.0)


def test_paired_comparison_counts_and_interval():
    a = [True] * 40 + [False] * 10
    b = [True] * 25 + [False] * 25
    cmp = stats.paired_comparison(a, b)
    assert cmp.only_a == 15 and cmp.only_b == 0
    assert cmp.difference.estimate == pytest.approx(0.3)
    assert 0 < cmp.difference.low < 0.3 < cmp.difference.high
    assert cmp.mcnemar_p < 0.001


def test_pass_at_k_and_pass_hat_k():
    assert stats.pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert stats.pass_at_k(5, 2, 4) == 1.0
    assert stats.pass_at_k(5, 0, 3) == 0.0
    assert stats.pass_hat_k(5, 2, 2) == pytest.approx(1 / math.comb(5, 2))
    assert stats.pass_hat_k(4, 4, 4) == 1.0
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 1, 4)


def test_trial_statistics_flip_rate():
    out = stats.trial_statistics({"a": [True, True, True], "b": [True, False, True], "c": [False] * 3})
    assert out["trials"] == 3
    assert out["flip_rate"] == pytest.approx(1 / 3)
    assert out["flipping_cases"] == ["b"]
    assert out["pass_at_k"]["1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert out["pass_hat_k"]["3"] == pytest.approx(1 / 3)
    assert out["mean_disagreement"] == pytest.approx((0 + 2 * 2 * 1 / 6 + 0) / 3)


def test_summary_strata_never_pool_tiers_or_modes():
    recs = make_records(20, harness_mode="oracle-assisted") + make_records(
        20, seed=2, harness_mode="production-parity"
    )
    summary = stats.statistics_summary(recs)
    keys = [(s["tier"], s["harness_mode"]) for s in summary["strata"]]
    assert sorted(keys) == sorted(
        (t, m)
        for t in ("native-function-contract", "real-tool-execution")
        for m in ("oracle-assisted", "production-parity")
    )
    assert all(s["n"] == 20 for s in summary["strata"])


def test_pooling_is_refused():
    recs = make_records(5, harness_mode="oracle-assisted") + make_records(5, harness_mode="production-parity")
    with pytest.raises(PoolingError, match="harness modes"):
        stats.stratum_statistics(recs, "native-function-contract")
    only_contract = make_records(3, tiers=("native-function-contract",))
    with pytest.raises(PoolingError, match="tier"):
        stats.stratum_statistics(only_contract, "real-tool-execution")


def test_stratum_counts_errors_apart_from_accuracy():
    recs = make_records(200, error_rate=0.1, seed=3)
    st = stats.stratum_statistics(recs, "native-function-contract")
    errors = sum(r["status"] == "error" for r in recs)
    assert st["errors"] == errors > 0
    assert st["n"] == 200 - errors
    assert st["accuracy"]["estimate"] == pytest.approx(st["passed"] / st["n"])
    # Cases share templates (3 per template), so the interval is a cluster bootstrap.
    assert st["accuracy"]["method"] == "cluster-bootstrap"
    assert st["partial_mean_diagnostic"] is not None


def test_compare_runs_pairs_shared_cases():
    a = make_records(60, skill=0.9, seed=4)
    b = make_records(50, skill=0.3, seed=5)
    out = stats.compare_runs(a, b, "native-function-contract", resamples=500)
    assert out["n"] == 50
    assert out["difference"]["estimate"] > 0
    assert len(out["disagreeing"]) == out["only_a"] + out["only_b"]
    parity = make_records(50, harness_mode="production-parity")
    with pytest.raises(PoolingError):
        stats.compare_runs(a, parity, "native-function-contract")


def test_synthetic_records_have_the_real_record_shape():
    from callbench.types.records import CaseRecord

    for rec in make_records(12, error_rate=0.3, seed=8):
        parsed = CaseRecord.model_validate(rec)
        assert parsed.key == rec["key"] and parsed.status == rec["status"]


def test_summary_accepts_case_record_objects():
    from callbench.types.records import CaseRecord

    recs = make_records(30, trials=2, error_rate=0.1, seed=12)
    objects = [CaseRecord.model_validate(r) for r in recs]
    assert stats.statistics_summary(objects) == stats.statistics_summary(recs)


def test_all_pass_with_trials_keeps_an_honest_interval():
    recs = make_records(16, skill=1.0, trials=2, seed=3)
    acc = stats.accuracy_interval(recs, "native-function-contract")
    assert acc.estimate == 1.0 and acc.method == "wilson-clusters"
    # Wilson over the 6 templates (16 cases, 3 per template): far from the degenerate [1, 1].
    assert acc.low == pytest.approx(stats.wilson_interval(6, 6).low) and acc.high == 1.0


def test_few_clusters_widen_the_bootstrap():
    # 6 cases x 3 trials; only one case passes: the percentile bootstrap alone can reach 0.
    recs = [
        {"key": f"s:c{i}", "status": "completed", "trial": t, "verdicts": {"x": {"passed": i == 0}}}
        for i in range(6)
        for t in range(3)
    ]
    acc = stats.accuracy_interval(recs, "x")
    assert acc.method == "cluster-bootstrap+wilson"
    assert acc.estimate == pytest.approx(1 / 6)
    low, high = stats._wilson_at(1 / 6, 6, 0.95)
    assert acc.low <= low and acc.high >= high and acc.low < acc.estimate < acc.high
