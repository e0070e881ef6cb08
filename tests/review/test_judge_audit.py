"""The judge audit (``callbench audit-judge`` and the report's section) on constructed runs: a known
confusion table reproduces κ = 0.70 and the Fleiss-Cohen-Everitt interval computed here by hand
(and sklearn's κ); a constant judge and unparsed replies are flagged before the figures; the generic
``details.judge_pair`` hook; human review decisions audited per tier; one clean line for bad input."""

from __future__ import annotations

import csv
import io
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from synth import make_record, write_run

from callbench.cli.main import main
from callbench.report.payload import build_payload, load_runs
from callbench.review.judge_audit import audit, audit_run, kappa_of_counts
from callbench.review.judge_sources import Observation
from callbench.review.store import append_review, current_records, new_entry

JUDGE = "openai:judge-model"
TIER_A, TIER_B = "native-function-contract", "real-tool-execution"
KNOWN = [[40, 10], [5, 45]]
"""Rows: judge pass, judge fail; columns: strict pass, strict fail."""


def _cfb_record(
    i: int, judge_pass: bool | None, strict_pass: bool, *, status: str = "scored", trial: int = 1
) -> dict:
    """A record with a ComplexEval verdict: both response scores 2 when the judge passes, else 2 and 1."""
    record = make_record(i, rng=random.Random(i), tiers=(), trial=trial)
    scores: tuple[Any, Any] = (2, 2) if judge_pass else (2, 1)
    if judge_pass is None:
        scores = (None, None)
    record["verdicts"] = {
        "complexeval": {
            "scorer": "complexeval",
            "passed": strict_pass,
            "details": {
                "mode": "improved",
                "judge_model": JUDGE,
                "success": strict_pass,
                "infra": False,
                "response": {"status": status, "completeness": scores[0], "correctness": scores[1]},
            },
        }
    }
    return record


def _known_run(root: Path, *, extra: list[dict] | None = None) -> Path:
    records, i = [], 0
    for judge_pass, row in zip((True, False), KNOWN, strict=True):
        for strict_pass, count in zip((True, False), row, strict=True):
            for _ in range(count):
                records.append(_cfb_record(i, judge_pass, strict_pass))
                i += 1
    return write_run(root / "run", records + (extra or []))


def _hand_kappa(table: list[list[int]]) -> tuple[float, float]:
    """κ and its large-sample SE (Fleiss, Cohen & Everitt 1969), from the formula."""
    n = sum(map(sum, table))
    p = [[x / n for x in row] for row in table]
    rows = [sum(p[i]) for i in range(2)]
    cols = [p[0][j] + p[1][j] for j in range(2)]
    po, pe = p[0][0] + p[1][1], rows[0] * cols[0] + rows[1] * cols[1]
    k = (po - pe) / (1 - pe)
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - k)) ** 2 for i in range(2))
    b = (1 - k) ** 2 * sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    c = (k - pe * (1 - k)) ** 2
    return k, math.sqrt((a + b - c) / (n * (1 - pe) ** 2))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit-judge", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_known_confusion_table_reproduces_kappa_and_its_interval(tmp_path, capsys):
    run = _known_run(tmp_path)
    code, out, err = _cli(capsys, str(run), "--format", "json")
    assert code == 0, err
    [result] = json.loads(out)["audits"]
    # By hand: po = 0.85, pe = 0.50 * 0.45 + 0.50 * 0.55 = 0.50, κ = (0.85 - 0.50) / 0.50 = 0.70.
    kappa, se = _hand_kappa(KNOWN)
    assert kappa == pytest.approx(0.70, abs=1e-12)
    k = result["kappa"]
    assert k["estimate"] == pytest.approx(0.70, abs=1e-12) and k["method"] == "asymptotic"
    assert k["std_error"] == pytest.approx(se, rel=1e-9)
    assert (k["low"], k["high"]) == pytest.approx((0.70 - 1.959964 * se, 0.70 + 1.959964 * se), abs=1e-6)
    # An independent implementation of κ on the same labels.
    from sklearn.metrics import cohen_kappa_score

    judge = [True] * 50 + [False] * 50
    strict = [True] * 40 + [False] * 10 + [True] * 5 + [False] * 45
    assert cohen_kappa_score(judge, strict) == pytest.approx(k["estimate"], abs=1e-12)
    assert result["flags"] == []
    assert result["confusion"]["table"] == KNOWN
    assert result["n"] == 100 and result["observed_agreement"] == pytest.approx(0.85)
    assert (result["judge_pass_rate"], result["strict_pass_rate"]) == pytest.approx((0.50, 0.45))
    bias = result["bias"]
    assert bias["judge_pass_strict_fail"] == 10 and bias["judge_fail_strict_pass"] == 5
    assert bias["judge_pass_of_strict_fails"] == pytest.approx(10 / 55)
    assert bias["judge_fail_of_strict_passes"] == pytest.approx(5 / 45)
    # Exact McNemar on 10 vs 5 discordant cases: 2 * P(X <= 5), X ~ Bin(15, 1/2).
    assert bias["mcnemar_p"] == pytest.approx(2 * sum(math.comb(15, x) for x in range(6)) / 2**15)
    assert [c["key"] for c in result["disagreements"]["judge_pass_strict_fail"]] == [
        f"demo:case-{i:05d}" for i in range(40, 50)
    ]
    assert [c["key"] for c in result["disagreements"]["judge_fail_strict_pass"]] == [
        f"demo:case-{i:05d}" for i in range(50, 55)
    ]
    assert result["source"] == "ComplexEval response judge" and result["judge"] == JUDGE
    assert result["strict"] == "complexeval success (improved)"


def test_markdown_shows_flags_first_then_the_figures(tmp_path, capsys):
    run = _known_run(tmp_path, extra=[_cfb_record(100, None, False, status="judge_failed")])
    code, out, _ = _cli(capsys, str(run))
    assert code == 0
    order = [
        out.index(s)
        for s in (
            "**Flags:**",
            "⚠ unparsed",
            "| n (cases",
            "Cohen's κ",
            "| judge pass |",
            "Bias:",
            "Disagreeing",
        )
    ]
    assert order == sorted(order)
    assert "| Cohen's κ [95% CI] | 0.70 [0.56, 0.84] (asymptotic) |" in out
    assert "| judge pass | 40 | 10 |" in out and "| judge fail | 5 | 45 |" in out
    assert (
        "ComplexEval response-judge scores (verdicts.complexeval.details.response): "
        "1 audit, 100 judged cases, 1 unparsed" in out
    )


def test_unparsed_replies_are_counted_and_flagged_never_failed(tmp_path):
    extra = [_cfb_record(100 + i, None, i % 2 == 0, status="judge_failed") for i in range(4)]
    extra.append(_cfb_record(200, None, False, status="no_answer"))  # not asked: not judged, not unparsed
    extra.append(_cfb_record(201, None, True, status="skipped: no judge configured"))
    [a] = audit_run(_known_run(tmp_path, extra=extra)).audits
    assert a.n == 100 and a.confusion == KNOWN  # unchanged: not counted as judge fails
    assert a.kappa is not None and a.kappa.estimate == pytest.approx(0.70)
    assert a.unparsed == {"judge_failed": 4} and a.unparsed_share == pytest.approx(4 / 104)
    assert a.not_judged == {"no_answer": 1, "skipped: no judge configured": 1}
    assert [f.code for f in a.flags] == ["unparsed"]
    assert "4 of 104 judge replies did not parse (3.8%)" in a.flags[0].message
    assert a.unparsed_cases == [(f"demo:case-{100 + i:05d}", 1) for i in range(4)]


def test_a_judge_that_never_parses_is_flagged_with_no_figures(tmp_path):
    records = [_cfb_record(i, None, i % 3 == 0, status="judge_failed") for i in range(12)]
    [a] = audit_run(write_run(tmp_path / "run", records)).audits
    assert a.n == 0 and a.n_unparsed == 12
    assert [f.code for f in a.flags] == ["no_parsed_verdict"]
    assert a.kappa is not None and a.kappa.estimate is None


def test_a_constant_judge_is_flagged_and_kappa_undefined(tmp_path, capsys):
    # A misconfigured judge returning 0 for every case: every verdict a fail.
    records = [_cfb_record(i, False, i % 4 == 0) for i in range(22)]
    run = write_run(tmp_path / "run", records)
    [a] = audit_run(run).audits
    assert [f.code for f in a.flags] == ["constant_judge"]
    assert a.flags[0].message.startswith(
        "κ undefined: the judge gave one verdict to every case (fail on all 22)"
    )
    assert a.kappa is not None and a.kappa.estimate is None and a.kappa.low is None
    assert a.kappa.reason is not None and a.kappa.reason.startswith(
        "the judge gave one verdict to every case"
    )
    code, out, _ = _cli(capsys, str(run))
    assert code == 0
    assert out.index("constant_judge") < out.index("Cohen's κ")
    assert "| Cohen's κ [95% CI] | undefined: the judge gave one verdict to every case" in out


def test_a_constant_strict_tier_is_flagged(tmp_path):
    records = [_cfb_record(i, i % 2 == 0, True) for i in range(10)]
    [a] = audit_run(write_run(tmp_path / "run", records)).audits
    assert [f.code for f in a.flags] == ["constant_strict"]
    assert a.kappa is not None and a.kappa.estimate is None


def test_several_trials_take_a_seeded_bootstrap_over_cases(tmp_path):
    records = []
    for judge_pass, row in zip((True, False), KNOWN, strict=True):
        for strict_pass, count in zip((True, False), row, strict=True):
            for _ in range(count):
                i = len(records) // 2
                records += [_cfb_record(i, judge_pass, strict_pass, trial=t) for t in (1, 2)]
    # 100 cases of 2 trials each (the trials of a case agree): κ is still 0.70, the interval
    # resamples the 100 cases, not the 200 records.
    run = write_run(tmp_path / "run", records[:200])
    first = audit_run(run).audits[0]
    again = audit_run(run).audits[0]
    k = first.kappa
    assert k is not None and k.estimate is not None and k.low is not None and k.high is not None
    assert k.estimate == pytest.approx(kappa_of_counts(80, 20, 10, 90))
    assert k.method.startswith("bootstrap over 100 cases")
    assert (k.low, k.high) == (again.kappa.low, again.kappa.high)  # type: ignore[union-attr]
    # Resampling cases of two identical trials is about as wide as the analytic interval of the 100 cases.
    _, se = _hand_kappa(KNOWN)
    assert k.high - k.low == pytest.approx(2 * 1.96 * se, rel=0.25)


def test_without_statsmodels_kappa_comes_from_the_counts_and_a_bootstrap(tmp_path, monkeypatch):
    import callbench.review.judge_audit as judge_audit

    monkeypatch.setattr(judge_audit, "have_statsmodels", lambda: False)
    [a] = audit_run(_known_run(tmp_path)).audits
    k = a.kappa
    assert k is not None and k.estimate == pytest.approx(0.70) and k.low is not None and k.high is not None
    assert (
        k.method.startswith("bootstrap over 100 cases, 2000 resamples")
        and "statsmodels not installed" in k.method
    )
    _, se = _hand_kappa(KNOWN)
    assert (k.low, k.high) == pytest.approx((0.70 - 1.96 * se, 0.70 + 1.96 * se), abs=0.03)


def test_the_generic_judge_pair_field_is_a_source(tmp_path):
    records = []
    for i, (judge, strict) in enumerate(
        [(True, True), (True, False), (False, False), (None, True), (False, True)]
    ):
        record = make_record(i, rng=random.Random(i), tiers=("tau2",))
        record["verdicts"]["tau2"]["passed"] = strict
        record["verdicts"]["tau2"]["details"] = {
            "judge_pair": {
                "source": "NL assertions",
                "judge": "anthropic:x",
                "judge_passed": judge,
                "status": "" if judge is not None else "unparsable reply",
                "strict": "database state",
            }
        }
        records.append(record)
    [a] = audit_run(write_run(tmp_path / "run", records)).audits
    assert (a.source, a.judge, a.strict) == ("NL assertions", "anthropic:x", "database state")
    assert a.confusion == [[1, 1], [1, 1]] and a.unparsed == {"unparsable reply": 1}


def test_audit_refuses_observations_of_different_audits():
    one = Observation("S", "J", "T", "k", 1, True, True)
    with pytest.raises(ValueError):
        audit([one, Observation("S", "J2", "T", "k", 1, True, True)])


# --- human review ---------------------------------------------------------------------------------


def _review(run: Path, reviewer: str, key: tuple[str, int], tier: str, decision: str) -> None:
    reason = "scorer_too_strict" if decision == "overturn_pass" else "scorer_too_lenient"
    append_review(
        run,
        new_entry(
            run,
            reviewer,
            key[0],
            key[1],
            tier,
            decision,  # type: ignore[arg-type]
            reason=reason if decision.startswith("overturn") else None,
        ),
    )


def test_human_review_decisions_are_audited_per_tier(tmp_path, capsys):
    run = write_run(tmp_path / "run", [make_record(i, rng=random.Random(i)) for i in range(30)])
    records = current_records(run)

    def keys(tier: str, passed: bool) -> list[tuple[str, int]]:
        return sorted(k for k, c in records.items() if c.record.verdicts[tier].passed is passed)

    passed_a, failed_a = keys(TIER_A, True), keys(TIER_A, False)
    assert len(passed_a) >= 6 and len(failed_a) >= 6
    # Tier A, reviewer ann: agrees on 4 passes and 3 fails, overturns 2 passes and 1 fail.
    for key in passed_a[:4] + failed_a[:3]:
        _review(run, "ann", key, TIER_A, "agree")
    for key in passed_a[4:6]:
        _review(run, "ann", key, TIER_A, "overturn_fail")
    _review(run, "ann", failed_a[3], TIER_A, "overturn_pass")
    # A dispute (ann agrees, bob overturns) and an unsure: not judged.
    _review(run, "ann", failed_a[4], TIER_A, "agree")
    _review(run, "bob", failed_a[4], TIER_A, "overturn_pass")
    _review(run, "bob", failed_a[5], TIER_A, "unsure")
    # ...and a consensus settles another dispute.
    _review(run, "ann", passed_a[6], TIER_A, "agree")
    _review(run, "bob", passed_a[6], TIER_A, "overturn_fail")
    _review(run, "consensus", passed_a[6], TIER_A, "overturn_fail")
    # Tier B: bob agrees with every verdict he looked at.
    for key in keys(TIER_B, True)[:3] + keys(TIER_B, False)[:2]:
        _review(run, "bob", key, TIER_B, "agree")

    audits = {a.strict: a for a in audit_run(run).audits}
    assert set(audits) == {TIER_A, TIER_B}
    a = audits[TIER_A]
    assert (a.source, a.judge) == ("Human review", "reviewers ann, bob")
    # judge pass & strict pass 4; judge pass & strict fail 1;
    # judge fail & strict pass 2 + 1 (consensus); both fail 3
    assert a.confusion == [[4, 1], [3, 3]]
    assert a.not_judged == {"disputed": 1, "unsure": 1}
    assert a.judge_only_cases == [failed_a[3]]
    assert a.strict_only_cases == sorted([*passed_a[4:6], passed_a[6]])
    po, pj, ps = 7 / 11, 5 / 11, 7 / 11
    pe = pj * ps + (1 - pj) * (1 - ps)
    assert a.kappa is not None and a.kappa.estimate == pytest.approx((po - pe) / (1 - pe))
    b = audits[TIER_B]
    assert b.confusion == [[3, 0], [0, 2]] and b.kappa is not None and b.kappa.estimate == pytest.approx(1.0)

    code, out, _ = _cli(capsys, str(run), "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["source"], r["judge"], r["strict"]) for r in rows] == [
        ("Human review", "reviewers ann, bob", TIER_A),
        ("Human review", "reviewers bob", TIER_B),
    ]
    assert rows[0]["judge_pass_strict_fail_cases"] == f"{failed_a[3][0]}#1"


# --- bad input and nothing to audit ----------------------------------------------------------------


def test_bad_input_is_one_line(tmp_path, capsys):
    code, out, err = _cli(capsys, str(tmp_path / "missing"))
    assert (
        code == 2
        and out == ""
        and err.strip() == f"callbench: error: no such run folder: {tmp_path / 'missing'}"
    )
    (tmp_path / "empty").mkdir()
    code, _, err = _cli(capsys, str(tmp_path / "empty"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no records.jsonl" in err
    run = _known_run(tmp_path)
    code, _, err = _cli(capsys, str(run), "--format", "xml")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--format" in err


def test_a_run_without_judge_verdicts_says_what_it_looked_for(tmp_path, capsys):
    run = write_run(tmp_path / "plain", [make_record(i, rng=random.Random(i)) for i in range(5)])
    code, out, err = _cli(capsys, str(run))
    assert code == 1 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith("callbench: plain: nothing to audit")
    for looked in ("verdicts.complexeval.details.response", "details.judge_pair", "reviews/*.jsonl"):
        assert looked in line
    # ComplexEval verdicts without a judge: the line says they were found and why none counts.
    unjudged = [_cfb_record(i, None, True, status="skipped: no judge configured") for i in range(3)]
    code, _, err = _cli(capsys, str(write_run(tmp_path / "nojudge", unjudged)))
    assert code == 1 and "3 cases, none judged (skipped: no judge configured 3)" in err


def test_the_report_payload_has_the_section_only_when_a_source_exists(tmp_path):
    run = _known_run(tmp_path)
    [page] = build_payload(load_runs([run]))["judge_audit"]
    assert page["run"] == 0 and page["label"].endswith("(run)")
    [a] = page["audits"]
    assert a["kappa"]["estimate"] == pytest.approx(0.70) and a["confusion"]["table"] == KNOWN
    plain = write_run(tmp_path / "plain", [make_record(i, rng=random.Random(i)) for i in range(5)])
    assert build_payload(load_runs([plain]))["judge_audit"] == []
