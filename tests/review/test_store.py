"""The review store: append-only reviewer files, validation, staleness and reviewed accuracy."""

from __future__ import annotations

from pathlib import Path

import pytest

from callbench.review.store import (
    ReviewError,
    append_review,
    current_records,
    latest_entries,
    new_entry,
    read_reviews,
    record_hash,
    reviewed_accuracy,
    stale_entries,
)
from callbench.types.records import CaseRecord
from callbench.types.review import ReviewEntry, Rubric
from callbench.types.verdict import Verdict

TIER = "native-function-contract"
RUBRIC = Rubric.model_validate(
    {
        "criteria": [
            {"id": "facts", "description": "facts", "scale": {"levels": ["wrong", "partly", "right"]}},
            {"id": "tools", "description": "tools", "scale": {"min": 0, "max": 2}},
        ]
    }
)


def _record(case_id: str, passed: bool | None, trial: int = 1) -> CaseRecord:
    record = CaseRecord(
        key=f"s:{case_id}",
        suite="s",
        case_id=case_id,
        category="c",
        trial=trial,
        harness_mode="production-parity",
    )
    if passed is None:  # a manual case: its verdicts are not applicable
        record.scoring, record.rubric = "manual", RUBRIC
        record.verdicts = {TIER: Verdict(scorer=TIER, passed=False, applicable=False)}
    else:
        record.verdicts = {TIER: Verdict(scorer=TIER, passed=passed)}
    return record


def _write(run_dir: Path, records: list[CaseRecord], mode: str = "w") -> None:
    with (run_dir / "records.jsonl").open(mode, encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    # a, b, c, d pass, e, f fail automatically; m is a manual case
    _write(tmp_path, [_record(k, k in "abcd") for k in "abcdef"] + [_record("m", None)])
    return tmp_path


def _review(run_dir: Path, reviewer: str, case_id: str, decision: str, **kw) -> ReviewEntry:
    scorer = kw.pop("scorer", "rubric" if case_id == "m" else TIER)
    entry = new_entry(run_dir, reviewer, f"s:{case_id}", 1, scorer, decision, **kw)
    append_review(run_dir, entry)
    return entry


def test_record_hash_is_the_hash_of_the_written_line(run_dir: Path) -> None:
    records = current_records(run_dir)
    line = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert records[("s:a", 1)].hash == record_hash(line) == record_hash(records[("s:a", 1)].record)
    assert len(records[("s:a", 1)].hash) == 64 and records[("s:a", 1)].line == 1


def test_append_and_read_back(run_dir: Path) -> None:
    entry = _review(run_dir, "ann", "e", "overturn_pass", reason="equivalent_call", note="same tool")
    path = run_dir / "reviews" / "ann.jsonl"
    assert path.read_text(encoding="utf-8") == entry.model_dump_json() + "\n"
    _review(run_dir, "ann", "e", "agree")  # a later entry in the same slot replaces it when read
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2  # append-only: both kept
    entries = read_reviews(run_dir)
    assert [e.decision for e in entries] == ["overturn_pass", "agree"]
    assert [e.decision for e in latest_entries(entries).values()] == ["agree"]


@pytest.mark.parametrize("name", ["../evil", "a/b", ".hidden", "", "x" * 65, "ann bob"])
def test_unsafe_reviewer_names_are_refused(run_dir: Path, name: str) -> None:
    with pytest.raises(ReviewError, match="is not allowed"):
        new_entry(run_dir, name, "s:a", 1, TIER, "agree")
    assert not (run_dir / "reviews").exists() and not (run_dir.parent / "evil.jsonl").exists()


def test_unknown_decision_or_reason_code(run_dir: Path) -> None:
    with pytest.raises(
        ReviewError, match=r"review of s:a trial 1 \(native-function-contract\): decision: Input"
    ):
        new_entry(run_dir, "ann", "s:a", 1, TIER, "maybe")  # type: ignore[arg-type]
    with pytest.raises(ReviewError, match="reason: Input should be 'scorer_too_strict'"):
        new_entry(run_dir, "ann", "s:e", 1, TIER, "overturn_pass", reason="looked_fine")  # type: ignore[arg-type]
    with pytest.raises(ReviewError, match="'overturn_pass' needs a reason code"):
        new_entry(run_dir, "ann", "s:e", 1, TIER, "overturn_pass")


def test_reviews_that_do_not_fit_the_run(run_dir: Path) -> None:
    with pytest.raises(ReviewError, match=r"^review of s:zzz trial 1: no such record in the run$"):
        new_entry(run_dir, "ann", "s:zzz", 1, TIER, "agree")
    with pytest.raises(ReviewError, match="no such record"):
        new_entry(run_dir, "ann", "s:a", 2, TIER, "agree")
    with pytest.raises(ReviewError, match="has no verdict of scorer 'state-match'"):
        new_entry(run_dir, "ann", "s:a", 1, "state-match", "agree")
    with pytest.raises(ReviewError, match="'overturn_pass' on a verdict that already passed"):
        new_entry(run_dir, "ann", "s:a", 1, TIER, "overturn_pass", reason="other")
    with pytest.raises(ReviewError, match="a manual case is reviewed with scorer 'rubric'"):
        new_entry(run_dir, "ann", "s:m", 1, TIER, "agree")
    with pytest.raises(ReviewError, match="'tools' is not scored"):
        new_entry(run_dir, "ann", "s:m", 1, "rubric", "scored", scores={"facts": "right"})
    with pytest.raises(ReviewError, match="a rubric review's decision is 'scored' or 'unsure'"):
        new_entry(run_dir, "ann", "s:m", 1, "rubric", "agree")


def test_stale_after_the_record_changed(run_dir: Path) -> None:
    old = _review(run_dir, "ann", "e", "overturn_pass", reason="scorer_too_strict")
    assert reviewed_accuracy(run_dir)[TIER].overturned_to_pass == 1
    _write(run_dir, [_record("e", True)], mode="a")  # the case was re-run: a new line for s:e
    records = current_records(run_dir)
    assert records[("s:e", 1)].hash != old.record_hash
    assert stale_entries(read_reviews(run_dir), records) == [old]
    row = reviewed_accuracy(run_dir)[TIER]
    assert (row.n_stale, row.n_overturned, row.n_reviewed, row.automatic_passed) == (1, 0, 0, 5)
    with pytest.raises(ReviewError, match="the record changed since it was reviewed"):
        append_review(run_dir, old)  # an old entry cannot be stored against the new record


def test_bad_json_line_names_file_and_line(run_dir: Path) -> None:
    _review(run_dir, "ann", "a", "agree")
    path = run_dir / "reviews" / "ann.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    with pytest.raises(ReviewError, match=rf"^{path}:2: bad review line: not valid JSON$"):
        read_reviews(run_dir)
    path.write_text('{"reviewer": "bob"}\n', encoding="utf-8")
    with pytest.raises(ReviewError, match=rf"^{path}:1: bad review line: key: Field required$"):
        read_reviews(run_dir)


def test_reviewed_accuracy_with_two_reviewers(run_dir: Path) -> None:
    # e: both overturn to pass (agreed overturn); f: they disagree (disputed, keeps its fail);
    # a: ann overturns to fail, bob agrees, the consensus entry settles it as fail;
    # b: ann is unsure only; c: bob agrees; d: nobody reviewed it.
    _review(run_dir, "ann", "e", "overturn_pass", reason="equivalent_call")
    _review(run_dir, "bob", "e", "overturn_pass", reason="scorer_too_strict")
    _review(run_dir, "ann", "f", "overturn_pass", reason="gold_wrong")
    _review(run_dir, "bob", "f", "agree")
    _review(run_dir, "ann", "a", "overturn_fail", reason="scorer_too_lenient")
    _review(run_dir, "bob", "a", "agree")
    _review(run_dir, "consensus", "a", "overturn_fail", reason="scorer_too_lenient")
    _review(run_dir, "ann", "b", "unsure", reason="ambiguous_instruction")
    _review(run_dir, "bob", "c", "agree")
    # the manual case: both score it; ann's scores pass the default rule, bob's fail -> disputed
    _review(run_dir, "ann", "m", "scored", scores={"facts": "right", "tools": 2})
    _review(run_dir, "bob", "m", "scored", scores={"facts": "wrong", "tools": 1})
    rows = reviewed_accuracy(run_dir)
    tier = rows[TIER]
    assert (tier.n, tier.automatic_passed, tier.automatic_accuracy) == (6, 4, 4 / 6)
    # a -> fail, e -> pass, f stays fail: 4 - 1 + 1
    assert (tier.reviewed_passed, tier.reviewed_accuracy) == (4, 4 / 6)
    assert (tier.n_reviewed, tier.n_agreed, tier.n_overturned) == (3, 1, 2)
    assert (tier.overturned_to_pass, tier.overturned_to_fail) == (1, 1)
    assert (tier.n_disputed, tier.n_unsure, tier.n_awaiting, tier.n_stale) == (1, 1, 1, 0)
    # e's deciding entry is ann's (first by name), a's the consensus entry
    assert tier.overturns_by_reason == {"equivalent_call": 1, "scorer_too_lenient": 1}
    rubric = rows["rubric"]
    assert (rubric.n, rubric.n_reviewed, rubric.n_disputed, rubric.reviewed_accuracy) == (1, 0, 1, None)
    assert rubric.automatic_accuracy is None
    _review(run_dir, "consensus", "m", "scored", scores={"facts": "partly", "tools": 1})
    rubric = reviewed_accuracy(run_dir)["rubric"]
    assert (rubric.n_reviewed, rubric.reviewed_passed, rubric.reviewed_accuracy) == (1, 1, 1.0)
    # automatic verdicts and records are never rewritten by reviews
    assert current_records(run_dir)[("s:a", 1)].record.verdicts[TIER].passed is True
