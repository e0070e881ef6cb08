"""Judge sources: where a run holds a judge's verdict beside a deterministic verdict of the same case.

The judge audit (:mod:`callbench.review.judge_audit`) compares the two. A *source* turns a run into
:class:`Observation` s, one per (case, trial) it finds, each naming the audit it belongs to (source,
judge and strict labels); observations with the same three labels form one audit. Sources are kept in
a small registry (:func:`register_judge_source`, :func:`judge_sources`); the built-in ones:

* ``complexeval`` (:class:`ComplexEvalResponseJudge`): ComplexEval's response judge (the
  ``completeness`` and ``correctness`` scores, 0-2, in ``verdicts.complexeval.details.response``)
  against the call-level ``success`` of the same verdict (every gold call completed). **The judge
  passes a response when both scores are 2** (complete and correct: the top of both scales, the
  analogue of a success, which needs every gold call). A reply with no valid score (``judge_failed``:
  unparsable, or an outage) is *not parsed*, never a fail; a case the judge was not asked about (no
  final answer, no judge configured, an offline score, an infrastructure error) is *not judged*.
* ``verdict-field`` (:class:`VerdictJudgeField`): the generic hook. Any scorer that asks a judge
  beside a deterministic check records ``details["judge_pair"]`` in its verdict (one object or a
  list)::

      {"source": "NL assertions", "judge": "openai:gpt-4o", "judge_passed": true | false | null,
       "status": "unparsable reply", "strict": "database state", "strict_passed": false}

  ``judge_passed: null`` is a reply that did not parse, unless ``status`` starts with ``"not
  judged"`` (the judge was not asked); ``strict_passed`` defaults to the verdict's ``passed``. A
  future τ² natural-language-assertion judge (today such tasks are refused) plugs in this way, with
  no change here. τ²'s *audit judge* (``details.audit_judge``) judges the simulated user, not the
  agent, and only where no rule charged the user, so it has no deterministic counterpart to agree
  with and is not a source.
* ``review`` (:class:`HumanReview`): human review decisions (``reviews/*.jsonl``) against each
  strict tier: the reviewers are the "judge". The settled decision counts (a ``consensus`` entry,
  else the outcome every deciding reviewer shares: ``agree`` = the tier's verdict, ``overturn_pass``
  = pass, ``overturn_fail`` = fail); a disputed or ``unsure``-only verdict is *not judged*; stale
  reviews (their record was re-run or re-scored) and manual cases (no strict verdict) are left out.

A plugin adds a source with :func:`register_judge_source` (a :class:`RecordSource` looks at one
record at a time; a :class:`RunSource` at the run folder).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from callbench.types.records import CaseRecord

Kind = Literal["verdict", "unparsed", "not_judged"]
"""``verdict``: the judge gave a pass/fail; ``unparsed``: it was asked and gave nothing usable;
``not_judged``: it was not asked (or, for reviews, did not decide)."""


@dataclass(frozen=True)
class Observation:
    """One case (and trial) with a judge's verdict, or its absence, and the strict verdict."""

    source: str
    """What was audited, for people (``ComplexEval response judge``)."""
    judge: str
    """Who judged (the judge model, or the reviewers)."""
    strict: str
    """The deterministic verdict compared with (``complexeval success (improved)``, a tier name)."""
    key: str
    trial: int
    strict_pass: bool
    judge_pass: bool | None = None
    """The judge's verdict; ``None`` unless ``kind`` is ``verdict``."""
    kind: Kind = "verdict"
    status: str = ""
    """Why there is no verdict (``judge_failed``, ``no_answer``, ``disputed``...), for the counts."""

    @property
    def audit_id(self) -> tuple[str, str, str]:
        """The audit it belongs to: (source, judge, strict)."""
        return (self.source, self.judge, self.strict)


@runtime_checkable
class RecordSource(Protocol):
    """A source that reads one record at a time (the report feeds it as it streams the records)."""

    name: str
    looks_for: str
    """What it looks for, said in the "nothing to audit" line."""

    def observe(self, record: CaseRecord) -> Iterable[Observation]: ...


@runtime_checkable
class RunSource(Protocol):
    """A source that reads the run folder itself (given the run's current records)."""

    name: str
    looks_for: str

    def observe_run(self, run_dir: Path, records: Mapping[tuple[str, int], Any]) -> Iterable[Observation]:
        """Observations of the run; ``records`` maps (key, trial) to
        :class:`~callbench.review.store.CurrentRecord` (the latest line and its hash)."""
        ...


JudgeSource = RecordSource | RunSource

_SOURCES: dict[str, JudgeSource] = {}


def register_judge_source(source: JudgeSource) -> None:
    """Add (or replace, by ``name``) a judge source."""
    if not isinstance(source, RecordSource | RunSource):
        raise TypeError(f"{source!r} is neither a RecordSource nor a RunSource")
    _SOURCES[source.name] = source


def judge_sources() -> list[JudgeSource]:
    """The registered sources, in registration order (the built-ins first)."""
    return list(_SOURCES.values())


def record_sources() -> list[RecordSource]:
    return [s for s in _SOURCES.values() if isinstance(s, RecordSource)]


def run_sources() -> list[RunSource]:
    return [s for s in _SOURCES.values() if isinstance(s, RunSource) and not isinstance(s, RecordSource)]


# --- ComplexEval --------------------------------------------------------------------------------


class ComplexEvalResponseJudge:
    """ComplexEval's response judge (both scores 2 = pass) against the verdict's call-level success."""

    name = "complexeval"
    scorer = "complexeval"
    looks_for = "ComplexEval response-judge scores (verdicts.complexeval.details.response)"
    source = "ComplexEval response judge"
    rule = "judge pass = completeness 2 and correctness 2"

    def observe(self, record: CaseRecord) -> Iterator[Observation]:
        verdict = record.verdicts.get(self.scorer) if record.status == "completed" else None
        if verdict is None or not verdict.applicable:
            return
        details = verdict.details or {}
        response = details.get("response")
        if not isinstance(response, dict):
            return
        success = details.get("success")
        strict_pass = success if isinstance(success, bool) else verdict.passed
        mode = details.get("mode")
        strict = f"complexeval success ({mode})" if mode else "complexeval success"
        judge = str(details.get("judge_model") or details.get("judge") or "unknown judge")
        observe = partial(Observation, self.source, judge, strict, record.key, record.trial, strict_pass)
        status = str(response.get("status") or "")
        scores = (response.get("completeness"), response.get("correctness"))
        if details.get("infra"):
            yield observe(kind="not_judged", status="infrastructure error")
        elif status == "scored" and all(_is_score(s) for s in scores):
            yield observe(judge_pass=all(s == 2 for s in scores))
        elif status in ("judge_failed", "scored"):  # "scored" without two valid scores: malformed
            yield observe(kind="unparsed", status=status or "no score")
        else:  # no_answer, skipped: no judge configured, not judged (offline score)
            yield observe(kind="not_judged", status=status or "no status")


def _is_score(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in (0, 1, 2)


# --- the generic verdict field ------------------------------------------------------------------


JUDGE_PAIR_FIELD = "judge_pair"


class VerdictJudgeField:
    """Any verdict's ``details["judge_pair"]``: a judge's pass beside a deterministic one."""

    name = "verdict-field"
    looks_for = f"a verdict field details.{JUDGE_PAIR_FIELD} (any scorer)"

    def observe(self, record: CaseRecord) -> Iterator[Observation]:
        if record.status != "completed":
            return
        for scorer, verdict in record.verdicts.items():
            raw = (verdict.details or {}).get(JUDGE_PAIR_FIELD)
            for item in raw if isinstance(raw, list) else [raw]:
                if isinstance(item, dict):
                    yield self._observation(record, scorer, verdict.passed, item)

    @staticmethod
    def _observation(record: CaseRecord, scorer: str, passed: bool, item: dict[str, Any]) -> Observation:
        strict_pass = item.get("strict_passed")
        verdict = item.get("judge_passed")
        status = str(item.get("status") or "")
        if isinstance(verdict, bool):
            kind: Kind = "verdict"
        elif status.startswith("not judged"):
            kind, verdict = "not_judged", None
        else:
            kind, verdict, status = "unparsed", None, status or "no verdict"
        return Observation(
            source=str(item.get("source") or f"{scorer} judge"),
            judge=str(item.get("judge") or "unknown judge"),
            strict=str(item.get("strict") or scorer),
            key=record.key,
            trial=record.trial,
            strict_pass=strict_pass if isinstance(strict_pass, bool) else passed,
            judge_pass=verdict,
            kind=kind,
            status=status,
        )


# --- human review -------------------------------------------------------------------------------


class HumanReview:
    """The settled human review decision on each reviewed verdict against that tier's verdict."""

    name = "review"
    looks_for = "human review decisions (reviews/*.jsonl)"
    source = "Human review"

    def observe_run(self, run_dir: Path, records: Mapping[tuple[str, int], Any]) -> Iterator[Observation]:
        from callbench.review.store import REVIEWS_DIR, is_stale, latest_entries, read_reviews
        from callbench.types.review import CONSENSUS_REVIEWER, RUBRIC_SCORER

        if not (Path(run_dir) / REVIEWS_DIR).is_dir():
            return
        by_verdict: dict[tuple[str, int, str], list[Any]] = {}
        for entry in latest_entries(read_reviews(run_dir)).values():
            if entry.scorer != RUBRIC_SCORER and not is_stale(entry, records):
                by_verdict.setdefault((entry.key, entry.trial, entry.scorer), []).append(entry)
        reviewers: dict[str, set[str]] = {}
        for (_, _, scorer), entries in by_verdict.items():
            reviewers.setdefault(scorer, set()).update(
                e.reviewer for e in entries if e.reviewer != CONSENSUS_REVIEWER
            )
        for (key, trial, scorer), entries in sorted(by_verdict.items()):
            record = records[(key, trial)].record
            verdict = record.verdicts.get(scorer)
            if record.status != "completed" or verdict is None or not verdict.applicable:
                continue
            names = sorted(reviewers[scorer]) or [CONSENSUS_REVIEWER]
            judge = "reviewers " + ", ".join(names)
            observe = partial(Observation, self.source, judge, scorer, key, trial, verdict.passed)
            outcome, status = _settled(entries, verdict.passed, CONSENSUS_REVIEWER)
            if outcome is None:
                yield observe(kind="not_judged", status=status)
            else:
                yield observe(judge_pass=outcome)


def _settled(entries: list[Any], automatic: bool, consensus: str) -> tuple[bool | None, str]:
    """The reviewed pass/fail of one verdict (as :func:`callbench.review.store.reviewed_accuracy`
    settles it) or ``None`` and why: ``disputed`` or ``unsure``."""
    decided = {e.reviewer: _outcome(e.decision, automatic) for e in entries}
    decided = {name: value for name, value in decided.items() if value is not None}
    if consensus in decided:
        return decided[consensus], ""
    outcomes = set(decided.values())
    if len(outcomes) == 1:
        return outcomes.pop(), ""
    return None, "disputed" if outcomes else "unsure"


def _outcome(decision: str, automatic: bool) -> bool | None:
    return {"agree": automatic, "overturn_pass": True, "overturn_fail": False}.get(decision)


for _source in (ComplexEvalResponseJudge(), VerdictJudgeField(), HumanReview()):
    register_judge_source(_source)
