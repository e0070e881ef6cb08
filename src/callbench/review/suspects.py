"""Closing the review loop: which scorer rule or which case the reviews point at.

When current reviews overturn automatic verdicts for the same reason on several cases, the scorer
rule behind that reason is *suspect*: overturned verdicts are grouped by (scorer, the automatic
verdict's first reason code, what the expected argument the reason names is — ``$ref``,
``$pattern``, ``$one_of``, ``$any``, ``$default`` or a plain literal —, suite), and a group of at
least ``threshold`` distinct cases becomes a :class:`Suspect` such as
``4 overturns of `argument_mismatch` on `$ref` arguments in suite genomics (scorer_too_strict ×3,
equivalent_call ×1)``. A single case that every reviewer who decided on it overturned with
``gold_wrong`` has a suspect gold path.

A verdict counts as overturned the way :func:`callbench.review.store.reviewed_accuracy` settles
it: a current ``consensus`` entry decides; otherwise every reviewer who decided (``unsure`` does not
decide) must imply the same outcome, and that outcome differs from the automatic verdict. Its review
reason is the deciding entry's (the consensus entry, else the alphabetically first reviewer's).
Stale entries (made against an older record line) never count.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from callbench.review.store import CurrentRecord, current_records, is_stale, latest_entries, read_reviews
from callbench.types.records import CaseRecord
from callbench.types.review import CONSENSUS_REVIEWER, RUBRIC_SCORER, ReviewEntry

DEFAULT_THRESHOLD = 3
"""Distinct cases a group of same-reason overturns needs before its rule is named suspect."""

PASSED_CODE = "passed"
"""The reason code shown for overturns of verdicts that passed (a pass has no failure reason)."""

ArgumentKind = Literal["$ref", "$pattern", "$one_of", "$any", "$default", "literal"]
_OPERATORS: tuple[ArgumentKind, ...] = ("$ref", "$pattern", "$one_of", "$any", "$default")
_PARAMETER = re.compile(r"parameter '([^']+)'")
_PATH_TOKEN = re.compile(r"[^.\[\]]+|\[(\d+)\]")


@dataclass(frozen=True)
class Overturn:
    """One automatic verdict the current reviews overturned."""

    key: str
    trial: int
    suite: str
    scorer: str
    automatic_passed: bool
    reason_code: str
    """The automatic verdict's first reason code (:data:`PASSED_CODE` for a verdict that passed)."""
    argument: str | None
    """The argument path the reason message names (``parameter 'x'``), if any."""
    argument_kind: ArgumentKind | None
    """What the expected value of that argument is (``None`` when no argument is named or found)."""
    review_reason: str
    """The deciding entry's reason code (``unspecified`` when it gave none)."""


@dataclass(frozen=True)
class Suspect:
    """A scorer rule (``kind="rule"``) or a case's gold path (``kind="gold"``) the reviews point at."""

    kind: Literal["rule", "gold"]
    text: str
    """One line for people (see the module docstring)."""
    scorer: str | None
    reason_code: str | None
    """The automatic reason code of the overturned verdicts (rule suspects)."""
    suite: str
    keys: tuple[str, ...]
    """The cases involved (sorted)."""
    argument_kind: ArgumentKind | None = None
    count: int = 0
    """Overturned verdicts (rule) or reviewers (gold) behind the suspicion."""
    review_reasons: dict[str, int] = field(default_factory=dict)
    """Review reason codes of the overturns (rule) or of the reviewers (gold), with counts."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "kind": self.kind,
            "text": self.text,
            "scorer": self.scorer,
            "reason_code": self.reason_code,
            "suite": self.suite,
            "keys": list(self.keys),
            "argument_kind": self.argument_kind,
            "count": self.count,
            "review_reasons": dict(self.review_reasons),
        }


def argument_kind(value: Any) -> ArgumentKind:
    """The DSL operator of an expected argument value (its outermost one), or ``literal``."""
    if isinstance(value, dict):
        for op in _OPERATORS:
            if op in value:
                return op
    return "literal"


def _expected_value(record: CaseRecord, step: str | None, path: str) -> tuple[bool, Any]:
    """The expected value at ``path`` in the arguments of expected step ``step``.

    Walks the path (``a.b[0]``) and stops early at a DSL operator, whose kind is then the answer
    (a ``$one_of`` or ``$ref`` holds no plain sub-keys to walk into).
    """
    steps = [s for s in record.expected if isinstance(s, dict) and (step is None or s.get("id") == step)]
    if not steps:
        return False, None
    value: Any = steps[0].get("arguments", {})
    for match in _PATH_TOKEN.finditer(path):
        if isinstance(value, dict) and any(op in value for op in _OPERATORS):
            return True, value
        index = match.group(1)
        if index is not None and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        elif index is None and isinstance(value, dict) and match.group(0) in value:
            value = value[match.group(0)]
        else:
            return False, None
    return True, value


def _classify(record: CaseRecord, scorer: str) -> tuple[str, str | None, ArgumentKind | None]:
    """(reason code, argument path, argument kind) of a record's automatic verdict of ``scorer``."""
    verdict = record.verdicts[scorer]
    if verdict.passed or not verdict.reasons:
        return PASSED_CODE if verdict.passed else "unspecified", None, None
    first = verdict.reasons[0]
    found = _PARAMETER.search(first.message)
    if found is None:
        return first.code, None, None
    path = found.group(1)
    ok, value = _expected_value(record, first.step, path)
    return first.code, path, (argument_kind(value) if ok else None)


def _outcome(entry: ReviewEntry, automatic: bool) -> bool | None:
    if entry.decision == "agree":
        return automatic
    if entry.decision in ("overturn_pass", "overturn_fail"):
        return entry.decision == "overturn_pass"
    return None


def _decider(entries: list[ReviewEntry], automatic: bool) -> ReviewEntry | None:
    """The entry that settles a verdict against its automatic value, if the reviews overturn it."""
    decided = [e for e in entries if _outcome(e, automatic) is not None]
    consensus = [e for e in decided if e.reviewer == CONSENSUS_REVIEWER]
    if consensus:
        pick = consensus[-1]
    elif decided and len({_outcome(e, automatic) for e in decided}) == 1:
        pick = min(decided, key=lambda e: e.reviewer)
    else:
        return None
    return pick if _outcome(pick, automatic) != automatic else None


def _current_by_verdict(
    entries: Iterable[ReviewEntry], records: Mapping[tuple[str, int], CurrentRecord]
) -> dict[tuple[str, int, str], list[ReviewEntry]]:
    out: dict[tuple[str, int, str], list[ReviewEntry]] = {}
    for entry in latest_entries(entries).values():
        if not is_stale(entry, records):
            out.setdefault((entry.key, entry.trial, entry.scorer), []).append(entry)
    return out


def overturns(
    entries: Iterable[ReviewEntry], records: Mapping[tuple[str, int], CurrentRecord]
) -> list[Overturn]:
    """Every automatic verdict the current reviews overturn, in record order."""
    by_verdict = _current_by_verdict(entries, records)
    out = []
    for (key, trial, scorer), group in sorted(by_verdict.items()):
        current = records.get((key, trial))
        if current is None or scorer == RUBRIC_SCORER:
            continue
        record = current.record
        verdict = record.verdicts.get(scorer)
        if verdict is None or not verdict.applicable or record.scoring == "manual":
            continue
        decider = _decider(group, verdict.passed)
        if decider is None:
            continue
        code, path, kind = _classify(record, scorer)
        out.append(
            Overturn(
                key,
                trial,
                record.suite,
                scorer,
                verdict.passed,
                code,
                path,
                kind,
                decider.reason or "unspecified",
            )
        )
    return out


def _counts_text(counter: Counter[str]) -> str:
    return ", ".join(f"{name} ×{n}" for name, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _rule_text(
    n: int, code: str, kind: ArgumentKind | None, suite: str, scorer: str, reasons: Counter[str]
) -> str:
    what = "passes" if code == PASSED_CODE else f"`{code}`"
    on = "" if kind is None else (" on literal arguments" if kind == "literal" else f" on `{kind}` arguments")
    return f"{n} overturns of {what}{on} in suite {suite} by scorer {scorer} ({_counts_text(reasons)})"


def rule_suspects(found: Iterable[Overturn], threshold: int = DEFAULT_THRESHOLD) -> list[Suspect]:
    """Groups of same-reason overturns on at least ``threshold`` distinct cases, largest first."""
    groups: dict[tuple[str, str, ArgumentKind | None, str], list[Overturn]] = {}
    for o in found:
        groups.setdefault((o.scorer, o.reason_code, o.argument_kind, o.suite), []).append(o)
    out = []
    for (scorer, code, kind, suite), items in groups.items():
        keys = tuple(sorted({o.key for o in items}))
        if len(keys) < threshold:
            continue
        reasons = Counter(o.review_reason for o in items)
        out.append(
            Suspect(
                kind="rule",
                text=_rule_text(len(items), code, kind, suite, scorer, reasons),
                scorer=scorer,
                reason_code=code,
                suite=suite,
                keys=keys,
                argument_kind=kind,
                count=len(items),
                review_reasons=dict(sorted(reasons.items())),
            )
        )
    out.sort(key=lambda s: (-s.count, s.suite, s.scorer or "", s.reason_code or ""))
    return out


def gold_suspects(
    entries: Iterable[ReviewEntry],
    records: Mapping[tuple[str, int], CurrentRecord],
    min_reviewers: int = 1,
) -> list[Suspect]:
    """Cases that every reviewer who decided on them overturned with ``gold_wrong``.

    A reviewer *decided on* a case with any current non-``unsure`` entry of any scorer or trial of
    it; the ``consensus`` pseudo-reviewer is not a person and is not counted.
    """
    decided: dict[str, set[str]] = {}
    gold: dict[str, set[str]] = {}
    for (key, _trial, _scorer), group in _current_by_verdict(entries, records).items():
        for e in group:
            if e.reviewer == CONSENSUS_REVIEWER or e.decision == "unsure":
                continue
            decided.setdefault(key, set()).add(e.reviewer)
            if e.decision.startswith("overturn") and e.reason == "gold_wrong":
                gold.setdefault(key, set()).add(e.reviewer)
    out = []
    for key in sorted(gold):
        people = decided[key]
        if gold[key] != people or len(people) < min_reviewers:
            continue
        n = len(people)
        who = f"{n} of {n} reviewer{'s' if n != 1 else ''}"
        suite = key.split(":", 1)[0]
        out.append(
            Suspect(
                kind="gold",
                text=f"case {key}: gold path suspect ({who}: gold_wrong)",
                scorer=None,
                reason_code=None,
                suite=suite,
                keys=(key,),
                count=n,
                review_reasons={"gold_wrong": n},
            )
        )
    return out


def find_suspects(
    run_dir: Any,
    *,
    threshold: int = DEFAULT_THRESHOLD,
    entries: Iterable[ReviewEntry] | None = None,
    records: Mapping[tuple[str, int], CurrentRecord] | None = None,
) -> list[Suspect]:
    """Rule suspects (largest first), then gold-path suspects, from a run folder's current reviews.

    ``entries`` / ``records`` default to the run's (:func:`read_reviews`, :func:`current_records`).
    """
    records = current_records(run_dir) if records is None else records
    entries = list(read_reviews(run_dir) if entries is None else entries)
    return rule_suspects(overturns(entries, records), threshold) + gold_suspects(entries, records)
