"""``callbench review`` through the installed console script: both command forms, agreement figures
checked against a kappa computed here by hand, disagreements, consensus written once, ``show`` figures,
and one clean line for each kind of bad input."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fresh_cli import assert_clean_error

from callbench.review.store import append_review, current_records, new_entry, reviewed_accuracy

TIER = "native-function-contract"


def _callbench(*argv: str, cwd: Path, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("callbench")
    exe = str(script) if script.exists() else shutil.which("callbench")
    assert exe, "the callbench console script is not installed"
    return subprocess.run([exe, *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("review-cli")
    done = _callbench(
        "run", "--model", "noisy:2", "--suite", "genomics", "--limit", "24", "-o", "run", cwd=root
    )
    assert done.returncode == 0, done.stderr
    return root / "run"


@pytest.fixture()
def run(base_run, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(base_run, copy)
    return copy


def _verdicts(run: Path, passed: bool) -> list[tuple[str, int]]:
    recs = current_records(run)
    return sorted(
        k
        for k, c in recs.items()
        if (v := c.record.verdicts.get(TIER)) is not None and v.applicable and v.passed is passed
    )


def _review(run: Path, reviewer: str, key, decision: str, reason=None, note="") -> None:
    append_review(run, new_entry(run, reviewer, key[0], key[1], TIER, decision, reason=reason, note=note))


def _two_reviewers(run: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """ann and bob review 6 failed and 4 passed verdicts; returns each item's (ann, bob) final label."""
    failed, passed = _verdicts(run, False)[:6], _verdicts(run, True)[:4]
    assert len(failed) == 6 and len(passed) == 4
    labels = {}
    ann_over, bob_over = {0, 1, 2}, {0, 3}
    for i, key in enumerate(failed):
        a = "overturn_pass" if i in ann_over else "agree"
        b = "overturn_pass" if i in bob_over else "agree"
        _review(run, "ann", key, a, "scorer_too_strict" if i in ann_over else None, note=f"ann on {i}")
        _review(run, "bob", key, b, "equivalent_call" if i in bob_over else None)
        labels[key] = ("pass" if i in ann_over else "fail", "pass" if i in bob_over else "fail")
    for i, key in enumerate(passed):
        a = "overturn_fail" if i == 0 else "agree"
        _review(run, "ann", key, a, "scorer_too_lenient" if i == 0 else None)
        _review(run, "bob", key, "agree")
        labels[key] = ("fail" if i == 0 else "pass", "pass")
    return labels


def _kappa(pairs: list[tuple[str, str]]) -> tuple[float, float]:
    """Cohen's kappa and raw agreement from the 2x2 table counted here: κ = (p_o − p_e)/(1 − p_e)."""
    n = len(pairs)
    table = {(x, y): sum(1 for p in pairs if p == (x, y)) for x in ("pass", "fail") for y in ("pass", "fail")}
    p_o = (table["pass", "pass"] + table["fail", "fail"]) / n
    a_pass = (table["pass", "pass"] + table["pass", "fail"]) / n
    b_pass = (table["pass", "pass"] + table["fail", "pass"]) / n
    p_e = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    return (p_o - p_e) / (1 - p_e), p_o


def test_help_of_both_forms(run):
    done = _callbench("review", "--help", cwd=run.parent)
    assert done.returncode == 0
    assert "agreement" in done.stdout and "--reviewer NAME" in done.stdout and "serve" in done.stdout
    done = _callbench("review", "agreement", "--help", cwd=run.parent)
    assert done.returncode == 0 and "--consensus" in done.stdout and "--reviewers" in done.stdout


def test_typo_is_neither_subcommand_nor_folder(run):
    done = _callbench("review", "agrement", "run", cwd=run.parent)
    assert_clean_error(
        done, 2, "'agrement' is neither a review subcommand (agreement, serve) nor an existing run folder"
    )


def test_serve_form_checks_its_input(run):
    done = _callbench("review", str(run), "--reviewer", "consensus", cwd=run.parent)
    assert_clean_error(done, 2, "'consensus' is reserved for consensus entries")
    done = _callbench("review", str(run), "--reviewer", "../evil", cwd=run.parent)
    assert_clean_error(done, 2, "reviewer name '../evil' is not allowed")
    done = _callbench("review", str(run), cwd=run.parent)
    assert done.returncode == 2 and "--reviewer" in done.stderr and "Traceback" not in done.stderr


def test_serve_form_starts_the_page(run):
    script = Path(sys.executable).with_name("callbench")
    exe = str(script) if script.exists() else shutil.which("callbench")
    proc = subprocess.Popen(
        [str(exe), "review", str(run), "--reviewer", "ann", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"reviewing {run} as ann at http://127.0.0.1:"), line
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_no_reviews_is_one_line(run):
    done = _callbench("review", "agreement", str(run), cwd=run.parent)
    assert_clean_error(done, 2, f"{run}: no reviews yet")


def test_two_reviewers_kappa_disagreements_and_automatic(run):
    labels = _two_reviewers(run)
    done = _callbench("review", "agreement", str(run), cwd=run.parent)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    kappa, p_o = _kappa(list(labels.values()))
    assert f"ann vs bob: Cohen's κ {kappa:.2f} [" in out
    assert f"(n={len(labels)}, asymptotic)" in out
    assert f"ann vs bob: raw agreement {p_o:.2f} [" in out
    # each reviewer against the automatic verdict: fail for the 6, pass for the 4
    automatic = {k: ("pass" if k in _verdicts(run, True) else "fail") for k in labels}
    k_ann, raw_ann = _kappa([(a, automatic[k]) for k, (a, _b) in labels.items()])
    k_bob, raw_bob = _kappa([(b, automatic[k]) for k, (_a, b) in labels.items()])
    assert f"ann vs automatic: Cohen's κ {k_ann:.2f} [" in out
    assert f"ann vs automatic: raw agreement {raw_ann:.2f} [" in out
    assert f"bob vs automatic: Cohen's κ {k_bob:.2f} [" in out
    assert f"bob vs automatic: raw agreement {raw_bob:.2f} [" in out
    differing = sorted(k for k, (a, b) in labels.items() if a != b)
    assert f"Disagreements ({len(differing)})" in out
    for key, trial in differing:
        assert f"{key} trial {trial} · {TIER}" in out
    assert 'ann: overturn_pass (scorer_too_strict) "ann on 1"' in out
    assert (
        "'unsure' is left out" in out
        and "stale entries left out (their record was re-run or re-scored): 0" in out
    )
    as_json = json.loads(_callbench("review", "agreement", str(run), "-f", "json", cwd=run.parent).stdout)
    section = next(s for s in as_json["sections"] if s["name"] == TIER)
    assert section["between"][0]["estimate"] == pytest.approx(kappa)
    assert len(as_json["disagreements"]) == len(differing)
    md = _callbench("review", "agreement", str(run), "-f", "md", cwd=run.parent).stdout
    assert f"### {TIER} ({len(labels)} reviewed)" in md


def test_consensus_written_once_and_settles(run):
    labels = _two_reviewers(run)
    differing = sum(a != b for a, b in labels.values())
    before = reviewed_accuracy(run)[TIER]
    assert before.n_disputed == differing
    done = _callbench("review", "agreement", str(run), "--consensus", "ann", cwd=run.parent)
    assert done.returncode == 0, done.stderr
    assert f"consensus: recorded {differing} entries taking ann's decision; 0 already settled" in done.stdout
    lines = (run / "reviews" / "consensus.jsonl").read_text().splitlines()
    assert len(lines) == differing
    first = json.loads(lines[0])
    assert first["reviewer"] == "consensus" and first["note"].startswith("consensus: took ann's decision (")
    assert "others: bob: " in first["note"]
    again = _callbench("review", "agreement", str(run), "--consensus", "ann", cwd=run.parent)
    assert f"recorded 0 entries taking ann's decision; {differing} already settled" in again.stdout
    assert len((run / "reviews" / "consensus.jsonl").read_text().splitlines()) == differing
    after = reviewed_accuracy(run)[TIER]
    assert after.n_disputed == 0 and after.n_reviewed == len(labels)
    ann_passes = sum(a == "pass" for a, _b in labels.values())
    unreviewed_passes = before.automatic_passed - sum(1 for k in labels if k in _verdicts(run, True))
    assert after.reviewed_passed == unreviewed_passes + ann_passes


def test_bad_reviewer_names(run):
    _two_reviewers(run)
    done = _callbench("review", "agreement", str(run), "--consensus", "zed", cwd=run.parent)
    assert_clean_error(done, 2, "--consensus: 'zed' is not a reviewer of")
    done = _callbench("review", "agreement", str(run), "--reviewers", "ann,zed", cwd=run.parent)
    assert_clean_error(done, 2, "--reviewers: no reviews by 'zed' in")
    assert not (run / "reviews" / "consensus.jsonl").exists()


def test_one_reviewer_still_against_automatic(run):
    key = _verdicts(run, False)[0]
    _review(run, "ann", key, "overturn_pass", "gold_wrong")
    _review(run, "ann", _verdicts(run, False)[1], "agree")
    done = _callbench("review", "agreement", str(run), cwd=run.parent)
    assert done.returncode == 0, done.stderr
    assert "agreement between reviewers needs two; only ann reviewed this run" in done.stdout
    assert "ann vs automatic: raw agreement 0.50" in done.stdout
    assert f"case {key[0]}: gold path suspect (1 of 1 reviewer: gold_wrong)" in done.stdout


def test_bad_review_line_names_file_and_line(run):
    _two_reviewers(run)
    with (run / "reviews" / "bob.jsonl").open("a") as handle:
        handle.write("{not json\n")
    n = len((run / "reviews" / "bob.jsonl").read_text().splitlines())
    done = _callbench("review", "agreement", str(run), cwd=run.parent)
    assert_clean_error(done, 2, f"bob.jsonl:{n}: bad review line: not valid JSON")


def test_show_reviewed_beside_automatic(run):
    _two_reviewers(run)
    acc = reviewed_accuracy(run)[TIER]
    md = _callbench("show", str(run), "-f", "md", cwd=run.parent)
    assert md.returncode == 0, md.stderr
    row = next(line for line in md.stdout.splitlines() if line.startswith(f"| {TIER} | {acc.n} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert (
        cells[2] == f"{100 * acc.automatic_accuracy:.1f}%"
        and cells[3] == f"{100 * acc.reviewed_accuracy:.1f}%"
    )
    assert cells[6] == f"{acc.n_overturned} ({acc.overturned_to_pass}/{acc.overturned_to_fail})"
    assert "Strict accuracy" in md.stdout  # the automatic table is still there
    rows = list(csv.DictReader(io.StringIO(_callbench("show", str(run), "-f", "csv", cwd=run.parent).stdout)))
    tier_row = next(r for r in rows if r["tier"] == TIER and r["group"] == "all")
    assert float(tier_row["accuracy"]) == pytest.approx(acc.automatic_accuracy, abs=1e-4)
    assert float(tier_row["reviewed_accuracy"]) == pytest.approx(acc.reviewed_accuracy, abs=1e-4)
    assert int(tier_row["n_disputed"]) == acc.n_disputed


def test_show_table_and_json_carry_reviews_beside_automatic(run):
    _two_reviewers(run)
    acc = reviewed_accuracy(run)[TIER]
    table = _callbench("show", str(run), cwd=run.parent)
    assert table.returncode == 0, table.stderr
    flat = " ".join(table.stdout.split())
    assert "Reviewed accuracy (beside the automatic figures" in flat and "┃ accuracy ┃" in flat
    line = next(row for row in table.stdout.splitlines() if row.startswith(f"│{TIER} "))
    cells = [c.strip() for c in line.strip("│").split("│")]
    assert cells[1:3] == [f"{100 * acc.automatic_accuracy:.1f}%", f"{100 * acc.reviewed_accuracy:.1f}%"]
    assert cells[4] == str(acc.n_overturned)
    assert acc.overturns_by_reason  # the fixture overturns verdicts for two reasons
    overturns = next(row for row in table.stdout.splitlines() if row.startswith(f"  overturns of {TIER}:"))
    for code, count in acc.overturns_by_reason.items():
        assert f"{code} {count}" in overturns
    data = json.loads(_callbench("show", str(run), "-f", "json", cwd=run.parent).stdout)
    assert data["tiers"][TIER]["accuracy"] == pytest.approx(acc.automatic_accuracy)  # never replaced
    reviewed = data["reviews"]["reviewed_accuracy"][TIER]
    assert reviewed["reviewed_accuracy"] == pytest.approx(acc.reviewed_accuracy)
    assert reviewed["n_overturned"] == acc.n_overturned
    assert sum(reviewed["overturns_by_reason"].values()) == acc.n_overturned
