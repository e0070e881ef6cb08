"""The review queue: which cases of one or more runs need a person, and why.

A case is queued for each of these reasons (``docs/review.md`` lists them):

* ``qc_flag``: ``summary.json`` flags it (e.g. ``zero_partial_with_successful_execution``, the
  methods' "zero points although execution data indicates successful tool usage").
* ``ok_calls_yet_failed``: it made at least one call, every call was a known tool with valid
  arguments that executed ``ok``, the model gave its final answer, and still a strict tier failed.
* ``completion_pass_execution_fail``: the lenient completion tier passes, the execution tier fails
  (the allowance that separates them decides the case: a person says which tier is right).
* ``contract_pass_execution_fail``: the calls are exactly the expected ones, yet one failed to execute
  (the expected call itself fails: gold, tool or harness is suspect).
* ``stricter_tier_passed``: a stricter tier passes where the completion tier fails (the tiers are
  nested; an inversion points at a scorer).
* ``strict_pass_state_fail``: every strict tier passes but the diagnostic ``state-match`` fails (the
  expected calls do not reach the gold path's state).
* ``runs_disagree``: among the given runs, the same (key, trial) passes a tier in one run and fails it
  in another.
* ``manual_case``: a ``scoring: manual`` case, scored against its rubric.

Error records are never queued (there is no verdict; they are re-run), nor are not-applicable
verdicts. Only each run's current record of a (key, trial) counts (the last line wins).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.harness.summary import qc_flags
from callbench.review.store import CurrentRecord, current_records, is_stale, latest_entries, read_reviews
from callbench.types.records import CaseRecord
from callbench.types.review import RUBRIC_SCORER, ReviewEntry
from callbench.types.verdict import TIERS, Verdict

QC_FLAG = "qc_flag"
OK_CALLS_YET_FAILED = "ok_calls_yet_failed"
COMPLETION_PASS_EXECUTION_FAIL = "completion_pass_execution_fail"
CONTRACT_PASS_EXECUTION_FAIL = "contract_pass_execution_fail"
STRICTER_TIER_PASSED = "stricter_tier_passed"
STRICT_PASS_STATE_FAIL = "strict_pass_state_fail"
RUNS_DISAGREE = "runs_disagree"
MANUAL_CASE = "manual_case"
REASON_CODES = (
    QC_FLAG,
    OK_CALLS_YET_FAILED,
    COMPLETION_PASS_EXECUTION_FAIL,
    CONTRACT_PASS_EXECUTION_FAIL,
    STRICTER_TIER_PASSED,
    STRICT_PASS_STATE_FAIL,
    RUNS_DISAGREE,
    MANUAL_CASE,
)
"""Why a case is queued, in the order the page lists them."""

CONTRACT, EXECUTION, COMPLETION = TIERS
STATE_MATCH = "state-match"


@dataclass(frozen=True)
class QueueReason:
    """One reason a case needs a person; ``scorer`` is empty when it concerns the whole case."""

    code: str
    scorer: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "scorer": self.scorer, "detail": self.detail}


@dataclass
class QueueItem:
    """A case (one trial of one run) that needs a person, with the reviewer's own current entries."""

    run: int
    """Index of the run folder in the list given."""
    run_dir: Path
    key: str
    trial: int
    suite: str
    category: str
    manual: bool
    scorers: list[str]
    """What the reviewer can judge: the applicable verdicts' scorers, or ``["rubric"]``."""
    reasons: list[QueueReason] = field(default_factory=list)
    own: dict[str, ReviewEntry] = field(default_factory=dict)
    """The reviewer's latest entry per scorer (stale ones included; see :attr:`stale_scorers`)."""
    stale_scorers: list[str] = field(default_factory=list)

    @property
    def focus(self) -> list[str]:
        """The scorers the reasons name (every reviewable scorer when none is named)."""
        named = [r.scorer for r in self.reasons if r.scorer in self.scorers]
        return sorted(set(named), key=self.scorers.index) or list(self.scorers)

    @property
    def reviewed(self) -> bool:
        """The reviewer has a current (non-stale) entry for every scorer in :attr:`focus`."""
        return all(s in self.own and s not in self.stale_scorers for s in self.focus)

    @property
    def stale(self) -> bool:
        """Some latest entry of the reviewer judged an older line of this record."""
        return bool(self.stale_scorers)

    def to_json(self) -> dict[str, Any]:
        """The page's JSON for this item."""
        return {
            "run": self.run,
            "key": self.key,
            "trial": self.trial,
            "suite": self.suite,
            "category": self.category,
            "manual": self.manual,
            "scorers": self.scorers,
            "focus": self.focus,
            "reasons": [r.to_json() for r in self.reasons],
            "reviewed": self.reviewed,
            "stale": self.stale,
            "own": {
                s: dict(e.model_dump(mode="json"), stale=s in self.stale_scorers) for s, e in self.own.items()
            },
        }


def tier_reasons(record: CaseRecord) -> list[QueueReason]:
    """The suspicious tier disagreements of one completed automatic record (see the module doc)."""
    if record.status != "completed" or record.scoring == "manual":
        return []
    verdicts = {name: v for name, v in record.verdicts.items() if v.applicable}
    strict = {name: verdicts[name] for name in TIERS if name in verdicts}
    out = [
        QueueReason(OK_CALLS_YET_FAILED, name, _ok_calls_detail(record, v))
        for name, v in strict.items()
        if not v.passed and _calls_all_ok(record)
    ]
    out += _pair_reasons(verdicts)
    state = verdicts.get(STATE_MATCH)
    if state is not None and not state.passed and strict and all(v.passed for v in strict.values()):
        out.append(QueueReason(STRICT_PASS_STATE_FAIL, STATE_MATCH, _first_reason(state, "state differs")))
    return out


def _pair_reasons(verdicts: Mapping[str, Verdict]) -> list[QueueReason]:
    contract, execution, completion = (verdicts.get(name) for name in TIERS)
    out = []
    if completion is not None and execution is not None and completion.passed and not execution.passed:
        detail = f"{COMPLETION} passes; {EXECUTION}: {_first_reason(execution, 'fails')}"
        out.append(QueueReason(COMPLETION_PASS_EXECUTION_FAIL, EXECUTION, detail))
    if contract is not None and execution is not None and contract.passed and not execution.passed:
        detail = f"{CONTRACT} passes; {EXECUTION}: {_first_reason(execution, 'fails')}"
        out.append(QueueReason(CONTRACT_PASS_EXECUTION_FAIL, EXECUTION, detail))
    if completion is not None and not completion.passed:
        for name, verdict in ((CONTRACT, contract), (EXECUTION, execution)):
            if verdict is not None and verdict.passed:
                detail = f"{name} passes; {COMPLETION}: {_first_reason(completion, 'fails')}"
                out.append(QueueReason(STRICTER_TIER_PASSED, COMPLETION, detail))
    return out


def _calls_all_ok(record: CaseRecord) -> bool:
    calls = record.trace.calls
    return (
        bool(calls)
        and record.trace.stop_reason == "answer"
        and all(
            c.known_tool and c.parse_error is None and c.schema_valid and c.execution == "ok" for c in calls
        )
    )


def _ok_calls_detail(record: CaseRecord, verdict: Verdict) -> str:
    n = len(record.trace.calls)
    return f"{n} call(s), all executed ok, answer given; {_first_reason(verdict, 'fails')}"


def _first_reason(verdict: Verdict, default: str) -> str:
    if verdict.reasons:
        first = verdict.reasons[0]
        return f"{first.code}: {first.message}" if first.message else first.code
    return verdict.rationale or default


def qc_reasons(
    run_dir: Path, records: Mapping[tuple[str, int], CurrentRecord]
) -> dict[tuple[str, int], list[QueueReason]]:
    """``summary.json``'s QC flags by (key, trial); computed from the records when there is no summary
    yet (a run still in progress). Flags of records that are not current completed ones are dropped."""
    path = run_dir / "summary.json"
    flags: list[dict[str, Any]]
    if path.is_file():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        flags = (
            [f for f in (raw.get("qc_flags") or []) if isinstance(f, dict)] if isinstance(raw, dict) else []
        )
    else:
        completed = [c.record for c in records.values() if c.record.status == "completed"]
        flags = [f.model_dump() for f in qc_flags(completed)]
    out: dict[tuple[str, int], list[QueueReason]] = {}
    for flag in flags:
        key, trial = str(flag.get("key", "")), _trial(flag.get("trial"))
        current = records.get((key, trial))
        if current is None or current.record.status != "completed":
            continue
        reason = QueueReason(QC_FLAG, str(flag.get("scorer") or ""), str(flag.get("flag", "")))
        out.setdefault((key, trial), []).append(reason)
    return out


def _trial(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def disagreement_reasons(
    runs: Sequence[Mapping[tuple[str, int], CurrentRecord]], labels: Sequence[str]
) -> dict[tuple[int, str, int], list[QueueReason]]:
    """For each run and (key, trial) held by two or more runs: the tiers passing in one run and failing
    in another (both verdicts applicable, automatic cases only). Keyed by (run index, key, trial)."""
    outcomes: dict[tuple[str, int], dict[str, dict[int, bool]]] = {}
    for index, records in enumerate(runs):
        for rid, current in records.items():
            record = current.record
            if record.status != "completed" or record.scoring == "manual":
                continue
            for name, verdict in record.verdicts.items():
                if verdict.applicable:
                    outcomes.setdefault(rid, {}).setdefault(name, {})[index] = verdict.passed
    out: dict[tuple[int, str, int], list[QueueReason]] = {}
    for (key, trial), by_scorer in sorted(outcomes.items()):
        for name, by_run in sorted(by_scorer.items()):
            if len(set(by_run.values())) < 2:
                continue
            passing = ", ".join(labels[i] for i, ok in sorted(by_run.items()) if ok)
            failing = ", ".join(labels[i] for i, ok in sorted(by_run.items()) if not ok)
            detail = f"passes in {passing}; fails in {failing}"
            for index in by_run:
                out.setdefault((index, key, trial), []).append(QueueReason(RUNS_DISAGREE, name, detail))
    return out


def build_queue(run_dirs: Sequence[str | Path], reviewer: str | None = None) -> list[QueueItem]:
    """Every case of the runs that needs a person, in run order then (key, trial) order.

    ``reviewer``'s latest entries are attached to each item (``reviewed``/``stale``); without one no
    item is reviewed.

    Raises:
        UserError: a folder without ``records.jsonl``, or unreadable records, summary or reviews.
    """
    paths = [Path(d) for d in run_dirs]
    for path in paths:
        if not (path / "records.jsonl").is_file():
            raise UserError(f"{path}: not a run folder (no records.jsonl)")
    runs = [current_records(p) for p in paths]
    labels = run_labels(paths)
    disagreements = disagreement_reasons(runs, labels)
    items: list[QueueItem] = []
    for index, (path, records) in enumerate(zip(paths, runs, strict=True)):
        qc = qc_reasons(path, records)
        own = _own_entries(path, reviewer, records)
        for (key, trial), current in sorted(records.items()):
            record = current.record
            if record.status != "completed":
                continue
            reasons = _reasons_of(
                record, qc.get((key, trial), []), disagreements.get((index, key, trial), [])
            )
            if not reasons:
                continue
            item = _item(index, path, record, reasons)
            item.own = {s: e for s, (e, _) in own.get((key, trial), {}).items()}
            item.stale_scorers = [s for s, (_, stale) in own.get((key, trial), {}).items() if stale]
            items.append(item)
    return items


def _reasons_of(record: CaseRecord, qc: list[QueueReason], runs: list[QueueReason]) -> list[QueueReason]:
    if record.scoring == "manual":
        rubric = QueueReason(MANUAL_CASE, RUBRIC_SCORER, "scored by reviewers against its rubric")
        # a manual case's per-verdict checks are moot (no verdict applies); case-level QC flags stay
        return [rubric] + [r for r in qc if not r.scorer]
    return qc + tier_reasons(record) + runs


def _item(index: int, path: Path, record: CaseRecord, reasons: list[QueueReason]) -> QueueItem:
    manual = record.scoring == "manual"
    scorers = [RUBRIC_SCORER] if manual else [n for n, v in record.verdicts.items() if v.applicable]
    if manual:  # a manual case is reviewed as a whole: every reason belongs to the rubric
        reasons = [QueueReason(r.code, RUBRIC_SCORER, r.detail) for r in reasons]
    return QueueItem(
        index, path, record.key, record.trial, record.suite, record.category, manual, scorers, reasons
    )


def _own_entries(
    path: Path, reviewer: str | None, records: Mapping[tuple[str, int], CurrentRecord]
) -> dict[tuple[str, int], dict[str, tuple[ReviewEntry, bool]]]:
    if reviewer is None:
        return {}
    out: dict[tuple[str, int], dict[str, tuple[ReviewEntry, bool]]] = {}
    for (name, key, trial, scorer), entry in latest_entries(read_reviews(path)).items():
        if name == reviewer:
            out.setdefault((key, trial), {})[scorer] = (entry, is_stale(entry, records))
    return out


def run_labels(paths: Sequence[Path]) -> list[str]:
    """Folder names, made unique with a ``#n`` suffix (two runs may share a folder name)."""
    names = [p.name or str(p) for p in paths]
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]
