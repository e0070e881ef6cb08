"""Judge audit: how far a judge's verdicts agree with a deterministic verdict of the same cases.

:mod:`callbench.review.judge_sources` finds the pairs (ComplexEval's response judge against its
call-level success, a scorer's ``details.judge_pair``, human review decisions against each tier);
this module turns each audit's pairs into figures (``callbench audit-judge RUN`` and the report's
"Judge audit" section show them; ``docs/statistics.md`` defines them):

* **flags first**: no reply of the judge parsed; the judge gave one verdict to every case (κ is then
  reported as undefined: against a constant rater it is 0 by construction, or 0/0, and says nothing
  about the judge); the strict tier gave one verdict to every case (the same); fewer than two cases;
  replies that did not parse (their count and share: they are left out of the figures, never
  counted as fails);
* Cohen's κ with its 95% interval (:func:`callbench.review.agreement.cohen_kappa`: statsmodels'
  asymptotic variance; when a case has several trials, a seeded bootstrap over cases instead, so
  the trials of one case move together; without statsmodels, the ``review`` extra, the same
  bootstrap and κ of the 2×2 counts, so the report never needs it);
* observed agreement, the judge's and the strict tier's pass rates;
* the confusion table (rows: the judge's pass / fail; columns: the strict tier's);
* the judge's bias: judge pass where the strict tier fails and the reverse, as counts, as shares of
  all cases and of the strict tier's fails (passes), with an exact McNemar p-value;
* the disagreeing cases (and the unparsed ones), for links.

Only each (case, trial)'s latest record counts. Nothing here reads the network or writes files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from callbench.review.agreement import MIN_ITEMS, AgreementResult, cohen_kappa
from callbench.review.judge_sources import (
    JudgeSource,
    Observation,
    RecordSource,
    judge_sources,
)
from callbench.review.store import REVIEWS_DIR, current_records
from callbench.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, mcnemar_exact
from callbench.types.records import CaseRecord

CONFIDENCE = 0.95
AuditId = tuple[str, str, str]
CaseRef = tuple[str, int]


@dataclass(frozen=True)
class Flag:
    """A warning shown before an audit's figures."""

    code: str
    """``no_parsed_verdict``, ``constant_judge``, ``constant_strict``, ``too_few`` or ``unparsed``."""
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass
class JudgeAudit:
    """The figures of one audit: one judge against one strict verdict over one run's cases."""

    source: str
    judge: str
    strict: str
    both_pass: int = 0
    judge_pass_strict_fail: int = 0
    judge_fail_strict_pass: int = 0
    both_fail: int = 0
    kappa: AgreementResult | None = None
    mcnemar_p: float | None = None
    unparsed: dict[str, int] = field(default_factory=dict)
    """Replies that gave no verdict, by status (``judge_failed``...)."""
    not_judged: dict[str, int] = field(default_factory=dict)
    """Cases the judge was not asked about, by status (not part of any figure)."""
    flags: list[Flag] = field(default_factory=list)
    judge_only_cases: list[CaseRef] = field(default_factory=list)
    """Judge pass, strict fail."""
    strict_only_cases: list[CaseRef] = field(default_factory=list)
    """Judge fail, strict pass."""
    unparsed_cases: list[CaseRef] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Cases with both verdicts (what every figure is computed on)."""
        return self.both_pass + self.judge_pass_strict_fail + self.judge_fail_strict_pass + self.both_fail

    @property
    def n_unparsed(self) -> int:
        return sum(self.unparsed.values())

    @property
    def n_not_judged(self) -> int:
        return sum(self.not_judged.values())

    @property
    def unparsed_share(self) -> float | None:
        """Unparsed replies over all replies the judge was asked for."""
        asked = self.n + self.n_unparsed
        return self.n_unparsed / asked if asked else None

    @property
    def observed_agreement(self) -> float | None:
        return (self.both_pass + self.both_fail) / self.n if self.n else None

    @property
    def judge_pass_rate(self) -> float | None:
        return (self.both_pass + self.judge_pass_strict_fail) / self.n if self.n else None

    @property
    def strict_pass_rate(self) -> float | None:
        return (self.both_pass + self.judge_fail_strict_pass) / self.n if self.n else None

    @property
    def strict_fails(self) -> int:
        return self.judge_pass_strict_fail + self.both_fail

    @property
    def strict_passes(self) -> int:
        return self.both_pass + self.judge_fail_strict_pass

    @property
    def confusion(self) -> list[list[int]]:
        """Rows judge pass / fail, columns strict pass / fail: ``[[a, b], [c, d]]``."""
        return [
            [self.both_pass, self.judge_pass_strict_fail],
            [self.judge_fail_strict_pass, self.both_fail],
        ]

    @property
    def title(self) -> str:
        return f"{self.source} ({self.judge}) vs {self.strict}"

    def bias(self) -> dict[str, Any]:
        """Judge pass where the strict tier fails, and the reverse: counts and shares."""
        return {
            "judge_pass_strict_fail": self.judge_pass_strict_fail,
            "judge_pass_strict_fail_share": _share(self.judge_pass_strict_fail, self.n),
            "judge_pass_of_strict_fails": _share(self.judge_pass_strict_fail, self.strict_fails),
            "judge_fail_strict_pass": self.judge_fail_strict_pass,
            "judge_fail_strict_pass_share": _share(self.judge_fail_strict_pass, self.n),
            "judge_fail_of_strict_passes": _share(self.judge_fail_strict_pass, self.strict_passes),
            "net": self.judge_pass_strict_fail - self.judge_fail_strict_pass,
            "mcnemar_p": self.mcnemar_p,
        }

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (flags first; ``None`` for what is undefined, never NaN)."""
        return {
            "flags": [f.as_dict() for f in self.flags],
            "source": self.source,
            "judge": self.judge,
            "strict": self.strict,
            "n": self.n,
            "kappa": self.kappa.as_dict() if self.kappa is not None else None,
            "observed_agreement": self.observed_agreement,
            "judge_pass_rate": self.judge_pass_rate,
            "strict_pass_rate": self.strict_pass_rate,
            "confusion": {
                "rows": "judge pass, judge fail",
                "columns": "strict pass, strict fail",
                "table": self.confusion,
            },
            "bias": self.bias(),
            "n_unparsed": self.n_unparsed,
            "unparsed_share": self.unparsed_share,
            "unparsed": dict(self.unparsed),
            "n_not_judged": self.n_not_judged,
            "not_judged": dict(self.not_judged),
            "disagreements": {
                "judge_pass_strict_fail": [_ref(c) for c in self.judge_only_cases],
                "judge_fail_strict_pass": [_ref(c) for c in self.strict_only_cases],
            },
            "unparsed_cases": [_ref(c) for c in self.unparsed_cases],
        }


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def _ref(case: CaseRef) -> dict[str, Any]:
    return {"key": case[0], "trial": case[1]}


# --- the statistics ------------------------------------------------------------------------------


def audit(
    observations: Iterable[Observation],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> JudgeAudit:
    """The figures of one audit's observations (all with the same source, judge and strict labels).

    Raises:
        ValueError: no observation, or observations of different audits.
    """
    obs = list(observations)
    ids = {o.audit_id for o in obs}
    if len(ids) != 1:
        raise ValueError(f"one audit at a time: got {len(ids)} (source, judge, strict) combinations")
    source, judge, strict = ids.pop()
    result = JudgeAudit(source=source, judge=judge, strict=strict)
    unparsed: Counter[str] = Counter()
    not_judged: Counter[str] = Counter()
    pairs: list[Observation] = []
    for o in sorted(obs, key=lambda o: (o.key, o.trial)):
        ref = (o.key, o.trial)
        if o.kind == "unparsed":
            unparsed[o.status or "unparsed"] += 1
            result.unparsed_cases.append(ref)
        elif o.kind == "not_judged" or o.judge_pass is None:
            not_judged[o.status or "not judged"] += 1
        else:
            pairs.append(o)
            if o.judge_pass and o.strict_pass:
                result.both_pass += 1
            elif o.judge_pass:
                result.judge_pass_strict_fail += 1
                result.judge_only_cases.append(ref)
            elif o.strict_pass:
                result.judge_fail_strict_pass += 1
                result.strict_only_cases.append(ref)
            else:
                result.both_fail += 1
    result.unparsed = dict(sorted(unparsed.items()))
    result.not_judged = dict(sorted(not_judged.items()))
    result.flags = _flags(result)
    result.kappa = _kappa(result, pairs, confidence=confidence, resamples=resamples, seed=seed)
    if result.n:
        result.mcnemar_p = mcnemar_exact(result.judge_pass_strict_fail, result.judge_fail_strict_pass)
    return result


def _flags(a: JudgeAudit) -> list[Flag]:
    flags: list[Flag] = []
    n = a.n
    if n == 0 and a.n_unparsed:
        flags.append(
            Flag(
                "no_parsed_verdict",
                f"no reply of the judge parsed ({a.n_unparsed} of {a.n_unparsed}): no figures",
            )
        )
    elif n < MIN_ITEMS:
        flags.append(Flag("too_few", f"only {n} case with both verdicts; κ needs at least {MIN_ITEMS}"))
    else:
        judged_pass = a.both_pass + a.judge_pass_strict_fail
        if judged_pass in (0, n):
            verdict = "pass" if judged_pass else "fail"
            flags.append(
                Flag(
                    "constant_judge",
                    f"κ undefined: the judge gave one verdict to every case ({verdict} on all {n}); "
                    "check its configuration and replies",
                )
            )
        if a.strict_passes in (0, n):
            verdict = "pass" if a.strict_passes else "fail"
            flags.append(
                Flag(
                    "constant_strict",
                    f"κ undefined: the strict tier gave one verdict to every case ({verdict} on all {n})",
                )
            )
    if a.n_unparsed and n:
        share = a.unparsed_share or 0.0
        flags.append(
            Flag(
                "unparsed",
                f"{a.n_unparsed} of {n + a.n_unparsed} judge replies did not parse ({share:.1%}); "
                "they are left out of every figure, not counted as fails",
            )
        )
    return flags


def _kappa(
    a: JudgeAudit, pairs: Sequence[Observation], *, confidence: float, resamples: int, seed: int
) -> AgreementResult:
    constant = next((f for f in a.flags if f.code in ("constant_judge", "constant_strict")), None)
    if constant is not None or a.n < MIN_ITEMS:
        reason = (
            constant.message.removeprefix("κ undefined: ")
            if constant is not None
            else f"only {a.n} case{'s' if a.n != 1 else ''} with both verdicts; need at least {MIN_ITEMS}"
        )
        return AgreementResult(
            statistic="cohen_kappa",
            label="Cohen's κ",
            estimate=None,
            low=None,
            high=None,
            method="undefined",
            n=a.n,
            confidence=confidence,
            observed_agreement=a.observed_agreement,
            reason=reason,
        )
    if not have_statsmodels():
        # statsmodels comes with the `review` extra; the report must not need it. κ of the 2×2 counts
        # and the bootstrap over cases need only numpy (a core dependency).
        estimate = float(
            kappa_of_counts(a.both_pass, a.judge_pass_strict_fail, a.judge_fail_strict_pass, a.both_fail)
        )
        low, high, method = _case_bootstrap(pairs, estimate, confidence, resamples, seed)
        return AgreementResult(
            statistic="cohen_kappa",
            label="Cohen's κ",
            estimate=estimate,
            low=low,
            high=high,
            method=method + " (statsmodels not installed: no asymptotic interval)",
            n=a.n,
            confidence=confidence,
            observed_agreement=a.observed_agreement,
        )
    judge = [o.judge_pass for o in pairs]
    strict = [o.strict_pass for o in pairs]
    result = cohen_kappa(judge, strict, categories=[False, True], confidence=confidence)
    per_case = Counter(o.key for o in pairs)
    if result.estimate is not None and max(per_case.values()) > 1:
        low, high, method = _case_bootstrap(pairs, result.estimate, confidence, resamples, seed)
        result = replace(result, low=low, high=high, method=method, std_error=None)
    return result


def have_statsmodels() -> bool:
    """Whether statsmodels (the ``review`` extra) can be imported, without importing it."""
    from importlib.util import find_spec

    try:
        return find_spec("statsmodels") is not None
    except (ImportError, ValueError):
        return False


def kappa_of_counts(both_pass: Any, judge_only: Any, strict_only: Any, both_fail: Any) -> Any:
    """Cohen's κ of 2×2 counts (numbers or numpy arrays; NaN where expected agreement is 1)."""
    import numpy as np

    n = both_pass + judge_only + strict_only + both_fail
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (both_pass + both_fail) / n
        pj = (both_pass + judge_only) / n
        ps = (both_pass + strict_only) / n
        expected = pj * ps + (1 - pj) * (1 - ps)
        return np.where(expected < 1 - 1e-12, (observed - expected) / (1 - expected), np.nan)


def _case_bootstrap(
    pairs: Sequence[Observation], estimate: float, confidence: float, resamples: int, seed: int
) -> tuple[float, float, str]:
    """Percentile interval of κ over cases drawn with replacement (every trial of a drawn case)."""
    import numpy as np

    cells: dict[str, list[int]] = {}
    for o in pairs:
        row = cells.setdefault(o.key, [0, 0, 0, 0])
        row[(0 if o.judge_pass else 2) + (0 if o.strict_pass else 1)] += 1
    table = np.asarray(list(cells.values()), dtype=float)
    m = table.shape[0]
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    chunk = max(1, min(resamples, 500_000 // max(m, 1)))
    done = 0
    while done < resamples:
        size = min(chunk, resamples - done)
        sums = table[rng.integers(0, m, size=(size, m))].sum(axis=1)
        values.append(kappa_of_counts(sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]))
        done += size
    drawn = np.concatenate(values)
    defined = drawn[np.isfinite(drawn)]
    together = " (their trials together)" if table.sum(axis=1).max() > 1 else ""
    method = f"bootstrap over {m} cases{together}, {resamples} resamples, seed {seed}"
    if len(defined) < resamples:
        method += f", {resamples - len(defined)} undefined resamples skipped"
    if not len(defined):
        return -1.0, 1.0, method
    tail = (1 - confidence) / 2
    low, high = (float(x) for x in np.quantile(defined, [tail, 1 - tail]))
    return max(-1.0, min(low, estimate)), min(1.0, max(high, estimate)), method


# --- a run's audits -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLine:
    """What one source found in a run: one line each in the output."""

    name: str
    looks_for: str
    found: str

    def text(self) -> str:
        return f"{self.looks_for}: {self.found}"

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "looks_for": self.looks_for, "found": self.found}


@dataclass
class RunAudit:
    """Every audit of one run, and what each source found."""

    run: str
    audits: list[JudgeAudit]
    sources: list[SourceLine]

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "sources": [s.as_dict() for s in self.sources],
            "audits": [a.as_dict() for a in self.audits],
        }

    def nothing_line(self) -> str:
        """The one line of a run without any judge verdict (naming what was looked for)."""
        looked = "; ".join(s.text() for s in self.sources)
        return (
            f"{self.run}: nothing to audit: no judge verdict beside a deterministic one (looked for {looked})"
        )


class JudgeTally:
    """A run's observations, fed one record at a time (the report's stream), then the run folder."""

    def __init__(self, sources: Sequence[JudgeSource] | None = None) -> None:
        chosen = list(sources) if sources is not None else judge_sources()
        self.sources = chosen
        self._record_sources = [s for s in chosen if isinstance(s, RecordSource)]
        self._run_sources = [s for s in chosen if s not in self._record_sources]
        self.observed: dict[str, dict[tuple[AuditId, str, int], Observation]] = {s.name: {} for s in chosen}

    def add(self, record: CaseRecord) -> None:
        """Observe one record (a later record of the same case and trial replaces the earlier)."""
        for source in self._record_sources:
            found = self.observed[source.name]
            for o in source.observe(record):
                found[(o.audit_id, o.key, o.trial)] = o

    def add_run(self, run_dir: str | Path, records: Mapping[tuple[str, int], Any] | None = None) -> None:
        """Let the run-folder sources (human review) observe the run; ``records`` are its current
        records (:func:`callbench.review.store.current_records`, read only when reviews exist)."""
        if not self._run_sources:
            return
        if records is None:
            if not (Path(run_dir) / REVIEWS_DIR).is_dir():
                return
            records = current_records(run_dir)
        for source in self._run_sources:
            found = self.observed[source.name]
            for o in source.observe_run(Path(run_dir), records):  # type: ignore[union-attr]
                found[(o.audit_id, o.key, o.trial)] = o

    def result(self, run: str) -> RunAudit:
        """The audits (each with at least one reply of the judge) and one line per source."""
        audits: list[JudgeAudit] = []
        lines: list[SourceLine] = []
        for source in self.sources:
            groups: dict[AuditId, list[Observation]] = {}
            for o in self.observed[source.name].values():
                groups.setdefault(o.audit_id, []).append(o)
            kept = [audit(obs) for _, obs in sorted(groups.items())]
            asked = [a for a in kept if a.n or a.n_unparsed]
            audits += asked
            lines.append(SourceLine(source.name, source.looks_for, _found(kept, asked)))
        return RunAudit(run=run, audits=audits, sources=lines)


def _found(kept: list[JudgeAudit], asked: list[JudgeAudit]) -> str:
    if asked:
        verdicts = sum(a.n for a in asked)
        unparsed = sum(a.n_unparsed for a in asked)
        text = f"{len(asked)} audit{'s' if len(asked) != 1 else ''}, {verdicts} judged cases"
        return text + (f", {unparsed} unparsed" if unparsed else "")
    if not kept:
        return "none found"
    reasons: Counter[str] = Counter()
    for a in kept:
        reasons.update(a.not_judged)
    listed = ", ".join(f"{why} {count}" for why, count in reasons.most_common())
    return f"{sum(reasons.values())} cases, none judged ({listed})"


def audit_run(run_dir: str | Path, *, label: str | None = None) -> RunAudit:
    """Every judge audit of a run folder (its latest record of each case and trial).

    Raises:
        ReviewError: ``records.jsonl`` unreadable or holding a bad line (one line naming it).
    """
    records = current_records(run_dir)
    tally = JudgeTally()
    for current in records.values():
        tally.add(current.record)
    tally.add_run(run_dir, records)
    return tally.result(label or str(run_dir))


def page_judge_audit(labels: Sequence[str], tallies: Sequence[JudgeTally]) -> list[dict[str, Any]]:
    """The report page's data: per run with at least one audit, ``{run, label, audits, sources}``."""
    out = []
    for index, (label, tally) in enumerate(zip(labels, tallies, strict=True)):
        result = tally.result(label)
        if result.audits:
            out.append({**result.as_dict(), "run": index, "label": label})
    return out


__all__ = [
    "Flag",
    "JudgeAudit",
    "JudgeTally",
    "RunAudit",
    "SourceLine",
    "audit",
    "audit_run",
    "kappa_of_counts",
    "page_judge_audit",
]
