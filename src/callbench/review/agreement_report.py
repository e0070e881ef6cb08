"""Agreement of a run's reviews: between reviewers, and of each reviewer with the automatic verdicts.

This module gathers labels from the review store (:mod:`callbench.review.store`) and hands them to
:mod:`callbench.review.agreement`, which computes every coefficient. Label rules:

* **Automatic scorers (tiers).** A reviewer's label of a verdict is the verdict they end with:
  ``agree`` → the automatic pass/fail, ``overturn_pass`` → ``pass``, ``overturn_fail`` → ``fail``.
  ``unsure`` is *left out* (it decides nothing, as in reviewed accuracy; counted in ``n_unsure``).
* **Manual cases** (``rubric``): the pass/fail outcome of a ``scored`` entry by the case's pass rule,
  and, per criterion (grouped by criterion id and scale), the level given, compared with weighted
  kappa in scale order (linear weights by default).
* Only each reviewer's latest, current entry counts: stale entries (their record was re-run or
  re-scored) are left out and counted in ``n_stale``. The reserved reviewer ``consensus`` is not a
  rater.

Two raters: Cohen's kappa (weighted for rubric criteria) and raw agreement. More than two: Fleiss'
kappa when every item has every rater's label, else Krippendorff's alpha (nominal, or ordinal for
rubric criteria), plus raw agreement of each pair. Each reviewer against the automatic verdict:
Cohen's kappa and raw agreement.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

from callbench.errors import ConfigError
from callbench.review.agreement import (
    AgreementResult,
    Weights,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    raw_agreement,
)
from callbench.review.store import (
    CurrentRecord,
    append_review,
    current_records,
    is_stale,
    latest_entries,
    new_entry,
    read_reviews,
)
from callbench.review.suspects import DEFAULT_THRESHOLD, Suspect, find_suspects
from callbench.types.records import CaseRecord
from callbench.types.review import CONSENSUS_REVIEWER, RUBRIC_SCORER, ReviewEntry, Scale

DEFAULT_RESAMPLES = 500
"""Bootstrap resamples of the report's intervals (fewer than the library's default: a report has
dozens of coefficients, and a perfect-agreement kappa falls back to the bootstrap)."""

Format = Literal["text", "md", "json"]
FORMATS: tuple[str, ...] = ("text", "md", "json")
PASS_FAIL = ["fail", "pass"]

Slot = tuple[str, int, str]
"""(key, trial, scorer) of one reviewed verdict."""


class AgreementReportError(ConfigError):
    """Bad input to ``review agreement`` (no reviews, unknown reviewer...): one line."""


@dataclass
class Section:
    """The agreement figures of one scorer, of the manual cases' pass/fail, or of one rubric criterion."""

    name: str
    kind: Literal["verdict", "rubric_outcome", "criterion"]
    n_items: int
    """Items (verdicts, or manual records) that at least one chosen reviewer labelled."""
    between: list[AgreementResult] = field(default_factory=list)
    """Between reviewers: the chance-corrected coefficient, then raw agreement (of each pair if >2)."""
    between_pairs: list[str] = field(default_factory=list)
    """For each result in ``between``, who it compares (``ann vs bob``, or ``ann, bob, cy``)."""
    with_automatic: dict[str, list[AgreementResult]] = field(default_factory=dict)
    """Per reviewer: Cohen's kappa and raw agreement with the automatic verdict (tiers only)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "name": self.name,
            "kind": self.kind,
            "n_items": self.n_items,
            "between": [
                {"raters": who, **r.as_dict()}
                for who, r in zip(self.between_pairs, self.between, strict=True)
            ],
            "with_automatic": {name: [r.as_dict() for r in rs] for name, rs in self.with_automatic.items()},
        }


@dataclass
class Disagreement:
    """A verdict (or manual record) on which the chosen reviewers' labels differ."""

    key: str
    trial: int
    scorer: str
    automatic: str | None
    """``pass`` / ``fail`` of the automatic verdict; ``None`` for a manual case."""
    entries: dict[str, ReviewEntry]
    """Each chosen reviewer's current entry (``unsure`` ones included, for the record)."""
    consensus: ReviewEntry | None = None
    """The current consensus entry, once recorded."""

    @property
    def slot(self) -> Slot:
        return (self.key, self.trial, self.scorer)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "key": self.key,
            "trial": self.trial,
            "scorer": self.scorer,
            "automatic": self.automatic,
            "reviews": {name: _entry_dict(e) for name, e in self.entries.items()},
            "consensus": None if self.consensus is None else _entry_dict(self.consensus),
        }


@dataclass
class AgreementReport:
    """Everything ``callbench review agreement`` prints for one run folder."""

    run_dir: Path
    reviewers: list[str]
    """The raters compared (chosen with ``--reviewers``, else every reviewer but ``consensus``)."""
    n_stale: int
    n_unsure: int
    n_consensus: int
    sections: list[Section]
    disagreements: list[Disagreement]
    suspects: list[Suspect]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (no NaN anywhere)."""
        return {
            "run": str(self.run_dir),
            "reviewers": self.reviewers,
            "n_stale": self.n_stale,
            "n_unsure": self.n_unsure,
            "n_consensus": self.n_consensus,
            "notes": self.notes,
            "sections": [s.as_dict() for s in self.sections],
            "disagreements": [d.as_dict() for d in self.disagreements],
            "suspects": [s.as_dict() for s in self.suspects],
        }

    def render(self, fmt: str = "text") -> str:
        """The report as ``text``, ``md`` or ``json``."""
        if fmt == "json":
            return json.dumps(self.as_dict(), indent=2, allow_nan=False)
        if fmt == "md":
            return _render_md(self)
        if fmt == "text":
            return _render_text(self)
        raise AgreementReportError(f"--format must be text, md or json, not {fmt!r}")


# --- gathering -----------------------------------------------------------------------------------


def _entry_dict(e: ReviewEntry) -> dict[str, Any]:
    return {"decision": e.decision, "reason": e.reason, "note": e.note, "scores": dict(e.scores), "at": e.at}


def _outcome_label(entry: ReviewEntry, record: CaseRecord) -> str | None:
    """``pass`` / ``fail`` the entry ends with, or ``None`` (unsure, or nothing to decide)."""
    if entry.scorer == RUBRIC_SCORER:
        if entry.decision != "scored" or record.rubric is None:
            return None
        return "pass" if record.rubric.passes(dict(entry.scores)) else "fail"
    verdict = record.verdicts.get(entry.scorer)
    if verdict is None:
        return None
    if entry.decision == "agree":
        return "pass" if verdict.passed else "fail"
    if entry.decision == "overturn_pass":
        return "pass"
    if entry.decision == "overturn_fail":
        return "fail"
    return None


def _scale_text(scale: Scale) -> str:
    if scale.levels is not None:
        return " < ".join(scale.levels)
    return f"{scale.min}..{scale.max}"


@dataclass
class _Gathered:
    """Current entries of the chosen reviewers by verdict, and the label tables built from them."""

    current: dict[Slot, dict[str, ReviewEntry]]
    consensus: dict[Slot, ReviewEntry]
    n_stale: int
    n_unsure: int


def _gather(
    entries: list[ReviewEntry], records: dict[tuple[str, int], CurrentRecord], reviewers: Sequence[str]
) -> _Gathered:
    chosen = set(reviewers)
    current: dict[Slot, dict[str, ReviewEntry]] = {}
    consensus: dict[Slot, ReviewEntry] = {}
    n_stale = n_unsure = 0
    for entry in latest_entries(entries).values():
        if entry.reviewer != CONSENSUS_REVIEWER and entry.reviewer not in chosen:
            continue
        if is_stale(entry, records):
            n_stale += 1
            continue
        slot = (entry.key, entry.trial, entry.scorer)
        if entry.reviewer == CONSENSUS_REVIEWER:
            consensus[slot] = entry
            continue
        n_unsure += entry.decision == "unsure"
        current.setdefault(slot, {})[entry.reviewer] = entry
    return _Gathered(current, consensus, n_stale, n_unsure)


def _between(
    labels: dict[str, list[Hashable | None]],
    reviewers: Sequence[str],
    *,
    categories: Sequence[Hashable],
    ordinal: bool,
    weights: Weights,
    resamples: int,
) -> tuple[list[AgreementResult], list[str]]:
    """Coefficients between the reviewers over aligned label lists (``None``: not labelled)."""
    if len(reviewers) < 2:
        return [], []
    if len(reviewers) == 2:
        a, b = (labels[r] for r in reviewers)
        pair = f"{reviewers[0]} vs {reviewers[1]}"
        kappa = cohen_kappa(
            a, b, categories=categories, weights=weights if ordinal else None, resamples=resamples
        )
        return [kappa, raw_agreement(a, b)], [pair, pair]
    rows = [labels[r] for r in reviewers]
    items = [list(col) for col in zip(*rows, strict=True)]
    every = all(all(v is not None for v in item) for item in items)
    out: list[AgreementResult]
    if every and not ordinal:
        out = [fleiss_kappa(items, categories=categories, resamples=resamples)]
    else:
        out = [
            krippendorff_alpha(
                rows, level="ordinal" if ordinal else "nominal", categories=categories, resamples=resamples
            )
        ]
    who = [", ".join(reviewers)]
    for x, y in combinations(reviewers, 2):
        out.append(raw_agreement(labels[x], labels[y]))
        who.append(f"{x} vs {y}")
    return out, who


def _verdict_section(
    scorer: str,
    slots: list[tuple[Slot, CaseRecord]],
    gathered: _Gathered,
    reviewers: Sequence[str],
    resamples: int,
) -> Section:
    labels: dict[str, list[Hashable | None]] = {r: [] for r in reviewers}
    automatic: list[Hashable | None] = []
    for slot, record in slots:
        mine = gathered.current.get(slot, {})
        for r in reviewers:
            labels[r].append(_outcome_label(mine[r], record) if r in mine else None)
        automatic.append("pass" if record.verdicts[scorer].passed else "fail")
    between, who = _between(
        labels, reviewers, categories=PASS_FAIL, ordinal=False, weights="linear", resamples=resamples
    )
    with_auto = {
        r: [
            cohen_kappa(labels[r], automatic, categories=PASS_FAIL, resamples=resamples),
            raw_agreement(labels[r], automatic),
        ]
        for r in reviewers
    }
    return Section(scorer, "verdict", len(slots), between, who, with_auto)


def _rubric_sections(
    manual: list[tuple[Slot, CaseRecord]],
    gathered: _Gathered,
    reviewers: Sequence[str],
    weights: Weights,
    resamples: int,
) -> list[Section]:
    outcome: dict[str, list[Hashable | None]] = {r: [] for r in reviewers}
    # criterion (id, scale levels) -> scale, and per reviewer the levels over that criterion's items
    scales: dict[tuple[str, tuple[Any, ...]], Scale] = {}
    levels: dict[tuple[str, tuple[Any, ...]], dict[str, list[Hashable | None]]] = {}
    for slot, record in manual:
        mine = gathered.current.get(slot, {})
        for r in reviewers:
            outcome[r].append(_outcome_label(mine[r], record) if r in mine else None)
        assert record.rubric is not None
        for criterion in record.rubric.criteria:
            ident = (criterion.id, tuple(criterion.scale.values()))
            scales[ident] = criterion.scale
            column = levels.setdefault(ident, {r: [] for r in reviewers})
            for r in reviewers:
                e = mine.get(r)
                column[r].append(
                    e.scores.get(criterion.id) if e is not None and e.decision == "scored" else None
                )
    between, who = _between(
        outcome, reviewers, categories=PASS_FAIL, ordinal=False, weights=weights, resamples=resamples
    )
    out = [Section(f"{RUBRIC_SCORER} (pass rule)", "rubric_outcome", len(manual), between, who)]
    for ident in sorted(scales, key=lambda i: (i[0], str(i[1]))):
        column = levels[ident]
        n = sum(any(v is not None for v in item) for item in zip(*column.values(), strict=True))
        between, who = _between(
            column,
            reviewers,
            categories=scales[ident].values(),
            ordinal=True,
            weights=weights,
            resamples=resamples,
        )
        name = f"{RUBRIC_SCORER} · {ident[0]} ({_scale_text(scales[ident])})"
        out.append(Section(name, "criterion", n, between, who))
    return out


def _disagreements(gathered: _Gathered, records: dict[tuple[str, int], CurrentRecord]) -> list[Disagreement]:
    out = []
    for slot, mine in sorted(gathered.current.items()):
        current = records.get(slot[:2])
        if current is None:
            continue
        record = current.record
        if slot[2] == RUBRIC_SCORER:
            labels = {json.dumps(e.scores, sort_keys=True) for e in mine.values() if e.decision == "scored"}
            automatic = None
        else:
            labels = {lab for e in mine.values() if (lab := _outcome_label(e, record)) is not None}
            automatic = "pass" if record.verdicts[slot[2]].passed else "fail"
        if len(labels) > 1:
            out.append(
                Disagreement(
                    slot[0],
                    slot[1],
                    slot[2],
                    automatic,
                    dict(sorted(mine.items())),
                    gathered.consensus.get(slot),
                )
            )
    return out


def run_reviewers(entries: Sequence[ReviewEntry]) -> list[str]:
    """The people who reviewed the run (every reviewer but ``consensus``), sorted."""
    return sorted({e.reviewer for e in entries if e.reviewer != CONSENSUS_REVIEWER})


def _choose(run_dir: Path, entries: Sequence[ReviewEntry], wanted: Sequence[str] | None) -> list[str]:
    everyone = run_reviewers(entries)
    if not everyone:
        raise AgreementReportError(
            f"{run_dir}: no reviews yet (reviews/<reviewer>.jsonl); record some with "
            f"'callbench review {run_dir} --reviewer NAME'"
        )
    if not wanted:
        return everyone
    unknown = [w for w in wanted if w not in everyone]
    if unknown:
        raise AgreementReportError(
            f"--reviewers: no reviews by {', '.join(map(repr, unknown))} in {run_dir} "
            f"(its reviewers: {', '.join(everyone)})"
        )
    return list(dict.fromkeys(wanted))


def agreement_report(
    run_dir: str | Path,
    reviewers: Sequence[str] | None = None,
    *,
    weights: Weights = "linear",
    resamples: int = DEFAULT_RESAMPLES,
    threshold: int = DEFAULT_THRESHOLD,
) -> AgreementReport:
    """The agreement figures, disagreements and suspects of a run folder's reviews.

    Args:
        run_dir: A run folder with ``reviews/``.
        reviewers: The raters to compare (default: every reviewer but ``consensus``).
        weights: Weighting of the rubric criteria's kappa (``linear`` or ``quadratic``).
        resamples: Bootstrap resamples where an interval is bootstrapped.
        threshold: Distinct cases a group of same-reason overturns needs to be named suspect.

    Raises:
        AgreementReportError: no reviews, or a name in ``reviewers`` that did not review the run.
        ReviewError: an unreadable review line (naming the file and line) or records file.
    """
    run_dir = Path(run_dir)
    records = current_records(run_dir)
    entries = read_reviews(run_dir)
    chosen = _choose(run_dir, entries, reviewers)
    gathered = _gather(entries, records, chosen)
    done = [c.record for c in records.values() if c.record.status == "completed"]
    tiers: dict[str, list[tuple[Slot, CaseRecord]]] = {}
    manual: list[tuple[Slot, CaseRecord]] = []
    for record in sorted(done, key=lambda r: r.record_id):
        if record.scoring == "manual":
            manual.append(((record.key, record.trial, RUBRIC_SCORER), record))
            continue
        for name, verdict in record.verdicts.items():
            if verdict.applicable:
                tiers.setdefault(name, []).append(((record.key, record.trial, name), record))
    sections = []
    for name in sorted(tiers):
        reviewed = [(s, r) for s, r in tiers[name] if s in gathered.current]
        if reviewed:
            sections.append(_verdict_section(name, reviewed, gathered, chosen, resamples))
    reviewed_manual = [(s, r) for s, r in manual if s in gathered.current]
    if reviewed_manual:
        sections.extend(_rubric_sections(reviewed_manual, gathered, chosen, weights, resamples))
    notes = []
    if len(chosen) < 2:
        notes.append(
            f"agreement between reviewers needs two; only {chosen[0]} reviewed this run "
            "(agreement with the automatic verdict is shown)"
        )
    return AgreementReport(
        run_dir=run_dir,
        reviewers=chosen,
        n_stale=gathered.n_stale,
        n_unsure=gathered.n_unsure,
        n_consensus=len(gathered.consensus),
        sections=sections,
        disagreements=_disagreements(gathered, records),
        suspects=find_suspects(run_dir, threshold=threshold, entries=entries, records=records),
        notes=notes,
    )


# --- consensus -----------------------------------------------------------------------------------


@dataclass
class ConsensusResult:
    """What ``--consensus NAME`` did."""

    recorded: list[ReviewEntry]
    already: int
    """Disagreements that already had a current consensus entry (left as they are)."""
    skipped: list[str]
    """Disagreements NAME did not decide (``key trial N (scorer)``), left unsettled."""


def _decision_text(e: ReviewEntry) -> str:
    if e.decision == "scored":
        return "scored " + ", ".join(f"{k}={v}" for k, v in e.scores.items())
    return e.decision + (f" ({e.reason})" if e.reason else "")


def record_consensus(report: AgreementReport, name: str) -> ConsensusResult:
    """Record ``name``'s decision as the consensus of every unsettled disagreement of ``report``.

    Each entry goes to the reserved reviewer ``consensus`` (``reviews/consensus.jsonl``) with a note
    saying whose decision it took and what the others decided. Disagreements that already have a
    current consensus entry are left alone, so running it twice writes nothing the second time.

    Raises:
        AgreementReportError: ``name`` is not one of the report's reviewers.
    """
    if name == CONSENSUS_REVIEWER or name not in report.reviewers:
        raise AgreementReportError(
            f"--consensus: {name!r} is not a reviewer of {report.run_dir} "
            f"(its reviewers: {', '.join(report.reviewers)}); "
            "name the reviewer whose decision the panel agreed on"
        )
    records = current_records(report.run_dir)
    recorded: list[ReviewEntry] = []
    already, skipped = 0, []
    for d in report.disagreements:
        if d.consensus is not None:
            already += 1
            continue
        chosen = d.entries.get(name)
        if chosen is None or chosen.decision == "unsure":
            skipped.append(f"{d.key} trial {d.trial} ({d.scorer})")
            continue
        others = "; ".join(f"{r}: {_decision_text(e)}" for r, e in d.entries.items() if r != name)
        note = f"consensus: took {name}'s decision ({_decision_text(chosen)}); others: {others}"
        entry = new_entry(
            report.run_dir,
            CONSENSUS_REVIEWER,
            d.key,
            d.trial,
            d.scorer,
            chosen.decision,
            reason=chosen.reason,
            note=note[:4000],
            scores=chosen.scores,
            records=records,
        )
        append_review(report.run_dir, entry, records)
        d.consensus = entry
        recorded.append(entry)
    return ConsensusResult(recorded, already, skipped)


# --- rendering -----------------------------------------------------------------------------------


def _header_lines(report: AgreementReport) -> list[str]:
    lines = [
        f"reviewers: {', '.join(report.reviewers)}; consensus entries: {report.n_consensus}",
        f"labels: the verdict each reviewer ends with (agree = the automatic verdict); "
        f"'unsure' is left out ({report.n_unsure} unsure entr{'y' if report.n_unsure == 1 else 'ies'})",
        f"stale entries left out (their record was re-run or re-scored): {report.n_stale}",
    ]
    return lines + report.notes


def _section_lines(s: Section) -> list[str]:
    lines = [f"{who}: {r.describe()}" for who, r in zip(s.between_pairs, s.between, strict=True)]
    for reviewer, results in s.with_automatic.items():
        lines.extend(f"{reviewer} vs automatic: {r.describe()}" for r in results)
    if s.kind == "rubric_outcome":
        lines.append("no automatic verdict: manual cases are decided by reviewers only")
    return lines


def _disagreement_lines(d: Disagreement) -> tuple[str, list[str]]:
    auto = f" (automatic: {d.automatic})" if d.automatic is not None else " (manual case)"
    head = f"{d.key} trial {d.trial} · {d.scorer}{auto}"
    lines = []
    for reviewer, e in d.entries.items():
        note = f' "{" ".join(e.note.split())}"' if e.note else ""
        lines.append(f"{reviewer}: {_decision_text(e)}{note}")
    if d.consensus is not None:
        lines.append(f"consensus: {_decision_text(d.consensus)}")
    return head, lines


def _render_text(report: AgreementReport) -> str:
    out = [f"Review agreement · {report.run_dir}", *(f"  {line}" for line in _header_lines(report))]
    for s in report.sections:
        out.append(f"\n{s.name}  ({s.n_items} item{'s' if s.n_items != 1 else ''} reviewed)")
        out.extend(f"  {line}" for line in _section_lines(s))
    out.append(f"\nDisagreements ({len(report.disagreements)})")
    for d in report.disagreements:
        head, lines = _disagreement_lines(d)
        out.append(f"  {head}")
        out.extend(f"    {line}" for line in lines)
    out.append(f"\nSuspects ({len(report.suspects)})")
    out.extend(f"  {s.text}" for s in report.suspects)
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _render_md(report: AgreementReport) -> str:
    out = [
        f"## Review agreement: {_md(str(report.run_dir))}\n",
        *(f"- {_md(x)}" for x in _header_lines(report)),
    ]
    for s in report.sections:
        out.append(f"\n### {_md(s.name)} ({s.n_items} reviewed)\n")
        out.extend(f"- {_md(line)}" for line in _section_lines(s))
    out.append(f"\n### Disagreements ({len(report.disagreements)})\n")
    for d in report.disagreements:
        head, lines = _disagreement_lines(d)
        out.append(f"- **{_md(head)}**")
        out.extend(f"  - {_md(line)}" for line in lines)
    out.append(f"\n### Suspects ({len(report.suspects)})\n")
    out.extend(f"- {_md(s.text)}" for s in report.suspects)
    return "\n".join(out) + "\n"
