"""The review store: ``reviews/<reviewer>.jsonl`` in a run folder, append-only, beside the automatic
verdicts (which are never rewritten); read by the report and the review page alike. See
``docs/review.md``.

Each line is a :class:`~callbench.types.review.ReviewEntry` carrying the :func:`record_hash` of the
record line it judged; a case that was re-run or re-scored has a new line, so earlier reviews of it
become *stale* and no longer count. :func:`reviewed_accuracy` puts each scorer's automatic accuracy
beside its accuracy with current reviewers' decisions in place of the automatic verdicts.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from callbench.errors import ConfigError
from callbench.harness.runlock import refuse_if_busy
from callbench.types.jsoncodec import load_model, model_json_bytes
from callbench.types.records import CaseRecord
from callbench.types.review import (
    CONSENSUS_REVIEWER,
    REVIEWER_PATTERN,
    RUBRIC_SCORER,
    Decision,
    Level,
    ReviewedAccuracy,
    ReviewEntry,
    ReviewReason,
)

REVIEWS_DIR = "reviews"
RECORDS_FILE = "records.jsonl"


class ReviewError(ConfigError):
    """A review that cannot be stored or read; the message is one line naming what and where."""


@dataclass(frozen=True)
class CurrentRecord:
    """The latest record of a (key, trial) in ``records.jsonl`` with the hash of its line."""

    record: CaseRecord
    hash: str
    line: int


def record_hash(record: CaseRecord | str | bytes) -> str:
    """SHA-256 (hex) of a record's line as written to ``records.jsonl`` (without its newline).

    A ``CaseRecord`` is hashed as the writer serialises it; a line read from the file is hashed as it
    is. Any change to the record (a re-run, a re-score) changes the hash.
    """
    if isinstance(record, CaseRecord):
        record = model_json_bytes(record)
    data = record.encode("utf-8") if isinstance(record, str) else record
    return hashlib.sha256(data.rstrip(b"\r\n")).hexdigest()


def current_records(run_dir: str | Path) -> dict[tuple[str, int], CurrentRecord]:
    """The latest record line of every (key, trial) of a run, with its hash (the last line wins).

    A torn last line (a run killed mid-write) is ignored; any other unreadable line raises
    :class:`ReviewError` naming the file and line.
    """
    path = Path(run_dir) / RECORDS_FILE
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReviewError(f"{path}: cannot read the run's records ({exc.strerror or exc})") from None
    lines = raw.split(b"\n")
    out: dict[tuple[str, int], CurrentRecord] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = load_model(CaseRecord, line)
        except ValidationError:
            if number == len(lines):  # no newline after it: a torn tail, not a bad record
                continue
            raise ReviewError(f"{path}:{number}: not a valid record line") from None
        out[record.record_id] = CurrentRecord(record, record_hash(line), number)
    return out


def check_reviewer(name: str) -> str:
    """``name`` when it is a safe reviewer name (it becomes a file name), else :class:`ReviewError`."""
    if not isinstance(name, str) or not REVIEWER_PATTERN.fullmatch(name):
        raise ReviewError(
            f"reviewer name {name!r} is not allowed: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def review_file(run_dir: str | Path, reviewer: str) -> Path:
    """``<run_dir>/reviews/<reviewer>.jsonl`` (the name is checked first)."""
    return Path(run_dir) / REVIEWS_DIR / f"{check_reviewer(reviewer)}.jsonl"


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_entry(
    run_dir: str | Path,
    reviewer: str,
    key: str,
    trial: int,
    scorer: str,
    decision: Decision,
    *,
    reason: ReviewReason | None = None,
    note: str = "",
    scores: Mapping[str, Level] | None = None,
    records: Mapping[tuple[str, int], CurrentRecord] | None = None,
) -> ReviewEntry:
    """A review of the run's current record of (``key``, ``trial``), stamped with its hash and the time,
    validated against that record (see :func:`validate_entry`) but not yet stored."""
    check_reviewer(reviewer)
    records = current_records(run_dir) if records is None else records
    current = _record_of(records, key, trial)
    try:
        entry = ReviewEntry(
            reviewer=reviewer,
            key=key,
            trial=trial,
            record_hash=current.hash,
            scorer=scorer,
            decision=decision,
            reason=reason,
            note=note,
            scores=dict(scores or {}),
            at=now_iso(),
        )
    except ValidationError as exc:
        raise ReviewError(f"review of {key} trial {trial} ({scorer}): {_first_error(exc)}") from None
    validate_entry(entry, records)
    return entry


def validate_entry(entry: ReviewEntry, records: Mapping[tuple[str, int], CurrentRecord]) -> None:
    """Check an entry against the run's current records; :class:`ReviewError` says what is wrong.

    The record must exist, be completed and be the one reviewed (same hash); the scorer must be one of
    its verdicts (``rubric`` for a manual case, whose scores must fit its rubric); an overturn must
    change the automatic verdict.
    """
    where = f"review of {entry.key} trial {entry.trial} ({entry.scorer})"
    current = _record_of(records, entry.key, entry.trial)
    if entry.record_hash != current.hash:
        raise ReviewError(f"{where}: the record changed since it was reviewed (stale record hash)")
    record = current.record
    if record.status != "completed":
        raise ReviewError(f"{where}: the record is an error record; there is no verdict to review")
    if record.scoring == "manual":
        if entry.scorer != RUBRIC_SCORER:
            raise ReviewError(f"{where}: a manual case is reviewed with scorer '{RUBRIC_SCORER}'")
        if entry.decision == "scored":
            if record.rubric is None:
                raise ReviewError(f"{where}: the record carries no rubric")
            try:
                record.rubric.check_scores(dict(entry.scores))
            except ValueError as exc:
                raise ReviewError(f"{where}: {exc}") from None
        return
    verdict = record.verdicts.get(entry.scorer)
    if verdict is None:
        known = ", ".join(sorted(record.verdicts)) or "none"
        raise ReviewError(f"{where}: the record has no verdict of scorer {entry.scorer!r} (it has: {known})")
    if not verdict.applicable:
        raise ReviewError(f"{where}: the verdict is not applicable; there is nothing to review")
    if entry.decision == "overturn_pass" and verdict.passed:
        raise ReviewError(f"{where}: 'overturn_pass' on a verdict that already passed")
    if entry.decision == "overturn_fail" and not verdict.passed:
        raise ReviewError(f"{where}: 'overturn_fail' on a verdict that already failed")


def append_review(
    run_dir: str | Path, entry: ReviewEntry, records: Mapping[tuple[str, int], CurrentRecord] | None = None
) -> Path:
    """Validate ``entry`` against the run and append it to its reviewer's file; returns the file.

    Files are only ever appended to: a later entry of the same (reviewer, key, trial, scorer)
    replaces an earlier one when read (:func:`latest_entries`), and the earlier stays on disk.
    """
    refuse_if_busy(Path(run_dir), "review")  # records still being written: review the finished run
    path = review_file(run_dir, entry.reviewer)
    validate_entry(entry, current_records(run_dir) if records is None else records)
    path.parent.mkdir(exist_ok=True)
    line = (entry.model_dump_json() + "\n").encode("utf-8")
    # One write on an O_APPEND descriptor: concurrent reviewers never interleave within a line.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def read_reviews(run_dir: str | Path) -> list[ReviewEntry]:
    """Every reviewer's entries, file by file (sorted by reviewer) in file order.

    Raises:
        ReviewError: for a file whose name is not a reviewer name, a bad line (naming the file and
            line), or an entry whose reviewer is not the file's.
    """
    folder = Path(run_dir) / REVIEWS_DIR
    if not folder.is_dir():
        return []
    entries: list[ReviewEntry] = []
    for path in sorted(folder.glob("*.jsonl")):
        reviewer = path.stem
        if not REVIEWER_PATTERN.fullmatch(reviewer):
            raise ReviewError(f"{path}: file name is not a valid reviewer name")
        entries.extend(_read_file(path, reviewer))
    return entries


def _read_file(path: Path, reviewer: str) -> Iterable[ReviewEntry]:
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entry = ReviewEntry.model_validate(json.loads(line))
            except (ValueError, ValidationError) as exc:
                detail = _first_error(exc) if isinstance(exc, ValidationError) else "not valid JSON"
                raise ReviewError(f"{path}:{number}: bad review line: {detail}") from None
            if entry.reviewer != reviewer:
                raise ReviewError(
                    f"{path}:{number}: entry of reviewer {entry.reviewer!r} in {reviewer}'s file"
                )
            yield entry


def latest_entries(entries: Iterable[ReviewEntry]) -> dict[tuple[str, str, int, str], ReviewEntry]:
    """The last entry of each (reviewer, key, trial, scorer), in the order the entries were read."""
    latest: dict[tuple[str, str, int, str], ReviewEntry] = {}
    for entry in entries:
        latest[entry.slot] = entry
    return latest


def is_stale(entry: ReviewEntry, records: Mapping[tuple[str, int], CurrentRecord]) -> bool:
    """True when the entry's record is gone from the run or was replaced by another line."""
    current = records.get((entry.key, entry.trial))
    return current is None or current.hash != entry.record_hash


def stale_entries(
    entries: Iterable[ReviewEntry], records: Mapping[tuple[str, int], CurrentRecord]
) -> list[ReviewEntry]:
    """The latest entries made against a record line the run no longer holds."""
    return [e for e in latest_entries(entries).values() if is_stale(e, records)]


@dataclass
class _Outcome:
    """How the current reviews settle one verdict."""

    passed: bool | None = None
    """The reviewed pass/fail; None when not settled (no review, only unsure, or a dispute)."""
    decider: ReviewEntry | None = None
    disputed: bool = False
    unsure: bool = False


def _settle(entries: list[ReviewEntry], outcome_of: dict[int, bool]) -> _Outcome:
    """Consensus entry if any; else the outcome every deciding reviewer shares; else disputed."""
    decided = [e for e in entries if id(e) in outcome_of]
    if not decided:
        return _Outcome(unsure=bool(entries))
    consensus = [e for e in decided if e.reviewer == CONSENSUS_REVIEWER]
    if consensus:
        return _Outcome(outcome_of[id(consensus[0])], consensus[0])
    outcomes = {outcome_of[id(e)] for e in decided}
    if len(outcomes) > 1:
        return _Outcome(disputed=True)
    first = min(decided, key=lambda e: e.reviewer)
    return _Outcome(outcomes.pop(), first)


def reviewed_accuracy(
    run_dir: str | Path,
    entries: Iterable[ReviewEntry] | None = None,
    records: Mapping[tuple[str, int], CurrentRecord] | None = None,
) -> dict[str, ReviewedAccuracy]:
    """Per scorer: automatic accuracy and reviewed accuracy over the run's current records.

    Automatic cases: each applicable verdict's automatic pass is replaced by the reviewed one where
    the current (non-stale, latest per reviewer) reviews settle it: a ``consensus`` entry decides;
    otherwise reviewers who decided (``unsure`` does not decide) must agree, else the verdict is
    *disputed* and keeps its automatic value. Each overturned verdict counts once under the reason
    of its deciding entry (the consensus entry, else the alphabetically first reviewer's).

    Manual cases (scorer ``rubric``): a ``scored`` entry passes by its rubric's pass rule; the same
    settling rule applies; accuracy is over settled records only (there is no automatic verdict).
    """
    records = current_records(run_dir) if records is None else records
    latest = latest_entries(read_reviews(run_dir) if entries is None else entries)
    by_verdict: dict[tuple[str, int, str], list[ReviewEntry]] = {}
    stale: Counter[str] = Counter()
    for entry in latest.values():
        if is_stale(entry, records):
            stale[entry.scorer] += 1
        else:
            by_verdict.setdefault((entry.key, entry.trial, entry.scorer), []).append(entry)
    done = [c.record for c in records.values() if c.record.status == "completed"]
    scorers = sorted({name for r in done if r.scoring != "manual" for name in r.verdicts})
    out = {name: _tier_row(name, done, by_verdict) for name in scorers}
    if any(r.scoring == "manual" for r in done):
        out[RUBRIC_SCORER] = _rubric_row(done, by_verdict)
    for name, row in out.items():
        row.n_stale = stale.get(name, 0)
    return out


def _tier_row(
    name: str, done: list[CaseRecord], by_verdict: dict[tuple[str, int, str], list[ReviewEntry]]
) -> ReviewedAccuracy:
    row = ReviewedAccuracy(scorer=name, automatic_passed=0)
    reasons: Counter[str] = Counter()
    for record in done:
        verdict = record.verdicts.get(name)
        if record.scoring == "manual" or verdict is None or not verdict.applicable:
            continue
        entries = by_verdict.get((record.key, record.trial, name), [])
        outcome_of = {id(e): _decision_outcome(e.decision, verdict.passed) for e in entries}
        settled = _settle(entries, {k: v for k, v in outcome_of.items() if v is not None})
        passed = verdict.passed if settled.passed is None else settled.passed
        row.n += 1
        row.automatic_passed = (row.automatic_passed or 0) + verdict.passed
        row.reviewed_passed += passed
        _count(row, settled)
        if settled.passed is not None and settled.passed != verdict.passed:
            row.n_overturned += 1
            if settled.passed:
                row.overturned_to_pass += 1
            else:
                row.overturned_to_fail += 1
            assert settled.decider is not None
            reasons[settled.decider.reason or "unspecified"] += 1
        elif settled.passed is not None:
            row.n_agreed += 1
    row.automatic_accuracy = (row.automatic_passed or 0) / row.n if row.n else None
    row.reviewed_accuracy = row.reviewed_passed / row.n if row.n else None
    row.overturns_by_reason = dict(sorted(reasons.items()))
    return row


def _rubric_row(
    done: list[CaseRecord], by_verdict: dict[tuple[str, int, str], list[ReviewEntry]]
) -> ReviewedAccuracy:
    row = ReviewedAccuracy(scorer=RUBRIC_SCORER)
    for record in done:
        if record.scoring != "manual":
            continue
        row.n += 1
        entries = by_verdict.get((record.key, record.trial, RUBRIC_SCORER), [])
        outcome_of = {
            id(e): record.rubric.passes(dict(e.scores))
            for e in entries
            if e.decision == "scored" and record.rubric is not None
        }
        settled = _settle(entries, outcome_of)
        _count(row, settled)
        if settled.passed is not None:
            row.reviewed_passed += settled.passed
    row.reviewed_accuracy = row.reviewed_passed / row.n_reviewed if row.n_reviewed else None
    return row


def _count(row: ReviewedAccuracy, settled: _Outcome) -> None:
    if settled.passed is not None:
        row.n_reviewed += 1
    elif settled.disputed:
        row.n_disputed += 1
    elif settled.unsure:
        row.n_unsure += 1
    if settled.passed is None:
        row.n_awaiting += not settled.disputed and not settled.unsure


def _decision_outcome(decision: Decision, automatic: bool) -> bool | None:
    """The pass/fail a decision on an automatic verdict stands for (None: no decision)."""
    if decision == "agree":
        return automatic
    if decision == "overturn_pass":
        return True
    if decision == "overturn_fail":
        return False
    return None


def _record_of(records: Mapping[tuple[str, int], CurrentRecord], key: str, trial: int) -> CurrentRecord:
    current = records.get((key, trial))
    if current is None:
        raise ReviewError(f"review of {key} trial {trial}: no such record in the run")
    return current


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{field}: {message}" if field else message
