"""``review.agreement_report``: labels gathered from real run folders' reviews (rubric criteria with
weighted kappa counted by hand here, three reviewers, stale and unsure entries left out)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callbench.review.agreement_report import AgreementReportError, agreement_report
from callbench.review.store import append_review, current_records, new_entry, review_file

TIER = "native-function-contract"


def _run(root: Path, *argv: str) -> None:
    exe = Path(sys.executable).with_name("callbench")
    cmd = str(exe if exe.exists() else shutil.which("callbench"))
    done = subprocess.run([cmd, "run", *argv], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("agreement-report")
    _run(root, "--model", "oracle", "--suite", "genomics-manual", "--limit", "6", "-o", "manual")
    _run(root, "--model", "noisy:2", "--suite", "genomics", "--limit", "12", "-o", "noisy")
    return root


@pytest.fixture()
def manual(runs, tmp_path) -> Path:
    shutil.copytree(runs / "manual", tmp_path / "manual")
    return tmp_path / "manual"


@pytest.fixture()
def noisy(runs, tmp_path) -> Path:
    shutil.copytree(runs / "noisy", tmp_path / "noisy")
    return tmp_path / "noisy"


def _weighted_kappa(pairs: list[tuple[int, int]], k: int) -> float:
    """Linear weighted kappa by Cohen (1968) with agreement weights 1 − |i−j|/(k−1)."""
    n = len(pairs)
    w = [[1 - abs(i - j) / (k - 1) for j in range(k)] for i in range(k)]
    p = [[sum(1 for x, y in pairs if (x, y) == (i, j)) / n for j in range(k)] for i in range(k)]
    rows = [sum(p[i]) for i in range(k)]
    cols = [sum(p[i][j] for i in range(k)) for j in range(k)]
    p_o = sum(w[i][j] * p[i][j] for i in range(k) for j in range(k))
    p_e = sum(w[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k))
    return (p_o - p_e) / (1 - p_e)


def test_rubric_criteria_weighted_kappa(manual):
    records = current_records(manual)
    facts: list[tuple[int, int]] = []
    scale = None
    for i, (key, c) in enumerate(sorted(records.items())):
        rubric = c.record.rubric
        assert rubric is not None
        ann, bob = {}, {}
        for criterion in rubric.criteria:
            levels = criterion.scale.values()
            ann[criterion.id] = levels[-1]
            bob[criterion.id] = levels[(i + len(levels) - 1) % len(levels)] if i % 2 else levels[-1]
            if criterion.id == "facts":
                scale = levels
                facts.append((len(levels) - 1, levels.index(bob[criterion.id])))
        append_review(manual, new_entry(manual, "ann", key[0], key[1], "rubric", "scored", scores=ann))
        append_review(manual, new_entry(manual, "bob", key[0], key[1], "rubric", "scored", scores=bob))
    assert scale is not None and len(facts) >= 3
    report = agreement_report(manual)
    names = [s.name for s in report.sections]
    assert "rubric (pass rule)" in names
    section = next(s for s in report.sections if s.name == f"rubric · facts ({' < '.join(scale)})")
    kappa = section.between[0]
    assert kappa.label == "Cohen's κw (linear)" and kappa.n == len(facts)
    expected = _weighted_kappa(facts, len(scale))
    assert kappa.estimate == pytest.approx(expected)
    assert f"ann vs bob: Cohen's κw (linear) {expected:.2f}" in report.render("text")
    assert "no automatic verdict" in report.render("text")
    n_differ = sum(1 for i in range(len(records)) if i % 2)
    assert len(report.disagreements) == n_differ
    assert all(d.scorer == "rubric" and d.automatic is None for d in report.disagreements)
    quadratic = agreement_report(manual, weights="quadratic")
    assert any(s.between and s.between[0].label == "Cohen's κw (quadratic)" for s in quadratic.sections)


def _fails(run: Path) -> list[tuple[str, int]]:
    return sorted(
        k for k, c in current_records(run).items() if (v := c.record.verdicts.get(TIER)) and v.applicable
    )


def test_three_reviewers_fleiss_then_alpha(noisy):
    items = _fails(noisy)[:6]
    for i, key in enumerate(items):
        passed = current_records(noisy)[key].record.verdicts[TIER].passed
        flip = "overturn_fail" if passed else "overturn_pass"
        for reviewer, flips in (("ann", {0}), ("bob", {0, 1}), ("cy", {2})):
            decision = flip if i in flips else "agree"
            reason = "other" if i in flips else None
            append_review(noisy, new_entry(noisy, reviewer, key[0], key[1], TIER, decision, reason=reason))
    section = next(s for s in agreement_report(noisy, resamples=50).sections if s.name == TIER)
    assert section.between[0].label == "Fleiss' κ" and section.between_pairs[0] == "ann, bob, cy"
    assert [p for p in section.between_pairs[1:]] == ["ann vs bob", "ann vs cy", "bob vs cy"]
    # cy marks item 5 unsure: not every item has every rater's label any more
    append_review(noisy, new_entry(noisy, "cy", items[5][0], items[5][1], TIER, "unsure"))
    report = agreement_report(noisy, resamples=50)
    section = next(s for s in report.sections if s.name == TIER)
    assert section.between[0].label == "Krippendorff's α"
    assert report.n_unsure == 1
    two = agreement_report(noisy, ["ann", "bob"], resamples=50)
    assert two.reviewers == ["ann", "bob"]
    assert next(s for s in two.sections if s.name == TIER).between[0].label == "Cohen's κ"


def test_stale_entries_are_counted_and_left_out(noisy):
    a, b = _fails(noisy)[:2]
    for key in (a, b):
        append_review(noisy, new_entry(noisy, "ann", key[0], key[1], TIER, "agree"))
        append_review(noisy, new_entry(noisy, "bob", key[0], key[1], TIER, "agree"))
    # an entry made against an older line of record c (a re-run since): stale
    c = _fails(noisy)[2]
    entry = new_entry(noisy, "bob", c[0], c[1], TIER, "agree").model_copy(update={"record_hash": "0" * 64})
    with review_file(noisy, "bob").open("a") as handle:
        handle.write(entry.model_dump_json() + "\n")
    report = agreement_report(noisy, resamples=50)
    assert report.n_stale == 1
    section = next(s for s in report.sections if s.name == TIER)
    assert section.n_items == 2
    assert json.loads(report.render("json"))["n_stale"] == 1
    assert "stale entries left out (their record was re-run or re-scored): 1" in report.render("text")


def test_bad_input(noisy):
    with pytest.raises(AgreementReportError, match="no reviews yet"):
        agreement_report(noisy)
    key = _fails(noisy)[0]
    append_review(noisy, new_entry(noisy, "ann", key[0], key[1], TIER, "agree"))
    with pytest.raises(
        AgreementReportError, match=r"--reviewers: no reviews by 'bob' .*\(its reviewers: ann\)"
    ):
        agreement_report(noisy, ["ann", "bob"])
    with pytest.raises(AgreementReportError, match="--format must be"):
        agreement_report(noisy).render("xml")
