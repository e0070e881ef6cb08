"""The run's ``summary.json`` built in streaming passes over ``records.jsonl``, in memory that does not
grow with the number of cases.

:func:`~callbench.harness.summary.build_summary` takes every record at once; a million records do
not fit. :func:`stream_summary` gives the same summary, figure for figure, holding only compact
numbers: counts and sums per tier, suite, category and stratum, one float per live request (the
latency percentiles), and, only when clusters can repeat (a run with several trials or templated
cases), a few bytes per record for the cluster bootstrap and pass@k.

Records are visited in the order :func:`~callbench.harness.runfolder.latest_records` gives (the
last line of a (key, trial) wins, at the place of its first line), so even float sums add up in the
same order. A first pass keeps one 64-bit hash per line to find (key, trial)s written more than once
(a resumed error); only those lines are then looked at again.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from callbench.errors import UserError
from callbench.harness.runfolder import RECORDS_FILE, bulk_load, slim_record
from callbench.harness.summary import ServingTally, check_modes, qc_flags, set_serving_limits, tool_bug_flags
from callbench.harness.usage import SMALL_ARRAY, UsageTally
from callbench.scoring.base import Aggregator
from callbench.stats import Interval, clustered_accuracy, template_of, trial_figures, wilson_interval
from callbench.types.jsoncodec import load_model
from callbench.types.records import CaseRecord, RunHeader
from callbench.types.summary import (
    SUMMARY_SCHEMA_VERSION,
    Figures,
    QCFlag,
    ScorerAggregate,
    Statistics,
    Summary,
    TierFigures,
)
from callbench.types.verdict import Verdict

if TYPE_CHECKING:
    import numpy as np


class _RecordId(BaseModel):
    """What the index pass reads of a line (the JSON parser skips the rest without building it)."""

    key: str
    trial: int = 1
    template: str | None = None
    metadata: dict[str, Any] = {}


@dataclass
class LatestIndex:
    """Which lines of ``records.jsonl`` are the latest of their (key, trial)."""

    n_lines: int
    """Whole records in the file (a torn last line is not one)."""
    skip: set[int] = field(default_factory=set)
    """Line numbers (0-based, blank lines not counted) superseded by a later line."""
    moved: dict[int, int] = field(default_factory=dict)
    """First line of a repeated (key, trial) -> byte offset of its last line, read in its place."""
    simple: bool = True
    """No trial above 1 and no template: every cluster is one record (Wilson intervals, no pass@k)."""


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(byte offset, bytes) of each non-blank line."""
    offset = 0
    with path.open("rb") as handle:
        for raw in handle:
            start, offset = offset, offset + len(raw)
            if raw.strip():
                yield start, raw


def _ids(path: Path) -> Iterator[tuple[int, _RecordId]]:
    """(byte offset, id) of each whole record; a torn last line ends the file, any other bad line is
    an error naming the file and line."""
    for number, (offset, raw) in enumerate(_lines(path), 1):
        try:
            yield offset, load_model(_RecordId, raw)
        except ValidationError as exc:
            if raw.endswith(b"\n"):
                raise UserError(f"{path}:{number}: invalid record: {exc.errors()[0]['msg']}") from None
            return


def _repeated_lines(hashes: array[int]) -> set[int]:
    """Line numbers whose hash occurs more than once: with sets for a run of ordinary size (no numpy
    import), with sorted int64 arrays past :data:`~callbench.harness.usage.SMALL_ARRAY` lines (8 bytes
    a line where a set holds about 60)."""
    if len(hashes) <= SMALL_ARRAY:
        seen: set[int] = set()
        repeats: set[int] = set()
        for value in hashes:
            (repeats if value in seen else seen).add(value)
        return {number for number, value in enumerate(hashes) if value in repeats} if repeats else set()
    import numpy as np

    values = np.frombuffer(hashes, dtype=np.int64)
    ordered = np.sort(values)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    del ordered
    if repeated.size == 0:
        return set()
    return set(np.nonzero(np.isin(values, repeated))[0].tolist())


def index_latest(path: Path) -> LatestIndex:
    """The first pass: 8 bytes per line, then a look at the few lines whose (key, trial) repeats."""
    hashes = array("q")
    simple = True
    for _offset, rid in _ids(path):
        # Python's hash is stable within the process; a collision only costs a second look below
        hashes.append(hash((rid.key, rid.trial)))
        simple = simple and rid.trial == 1 and not (rid.template or rid.metadata.get("template"))
    index = LatestIndex(n_lines=len(hashes), simple=simple)
    if len(hashes) < 2:
        return index
    wanted = _repeated_lines(hashes)
    if not wanted:
        return index
    places: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for number, (offset, rid) in enumerate(_ids(path)):
        if number in wanted:
            places.setdefault((rid.key, rid.trial), []).append((number, offset))
    for lines in places.values():
        if len(lines) > 1:
            index.moved[lines[0][0]] = lines[-1][1]
            index.skip.update(number for number, _offset in lines[1:])
    return index


def iter_latest(run_dir: Path, index: LatestIndex | None = None) -> Iterator[CaseRecord]:
    """The latest record of every (key, trial), slimmed, one at a time, in the order of
    :func:`~callbench.harness.runfolder.latest_records`."""
    path = Path(run_dir) / RECORDS_FILE
    if not path.is_file():
        return
    index = index if index is not None else index_latest(path)
    with path.open("rb") as other:
        for number, (_offset, raw) in enumerate(_lines(path)):
            if number >= index.n_lines:
                return
            if number in index.skip:
                continue
            if number in index.moved:
                other.seek(index.moved[number])
                raw = other.readline()
            yield slim_record(load_model(CaseRecord, raw))


def iter_superseded(run_dir: Path, index: LatestIndex) -> Iterator[CaseRecord]:
    """The records a later line of the same (key, trial) replaced (a resumed error), slimmed: every
    line of a repeated (key, trial) but its last."""
    path = Path(run_dir) / RECORDS_FILE
    if not path.is_file() or not index.moved:
        return
    last = set(index.moved.values())
    repeated = set(index.moved) | index.skip
    for number, (offset, raw) in enumerate(_lines(path)):
        if number >= index.n_lines:
            return
        if number in repeated and offset not in last:
            yield slim_record(load_model(CaseRecord, raw))


class _Mean:
    """A running mean that adds in the same order as ``sum(list)``."""

    __slots__ = ("count", "total")

    def __init__(self) -> None:
        self.total: float = 0
        self.count = 0

    def add(self, value: float) -> None:
        self.total += value
        self.count += 1

    def value(self) -> float | None:
        return self.total / self.count if self.count else None


class _FigureTally:
    """One :class:`Figures` row: applicable verdicts, passes and partial scores."""

    __slots__ = ("n", "partial", "passed")

    def __init__(self) -> None:
        self.n = 0
        self.passed = 0
        self.partial = _Mean()

    def add(self, verdict: Verdict) -> None:
        self.n += 1
        self.passed += verdict.passed
        if verdict.partial is not None:
            self.partial.add(verdict.partial)

    def figures(self) -> Figures:
        return Figures(
            n=self.n,
            passed=self.passed,
            accuracy=self.passed / self.n if self.n else None,
            mean_partial_diagnostic=self.partial.value(),
        )


class _TierTally:
    """A tier's row of ``summary.json`` → ``tiers``."""

    def __init__(self) -> None:
        self.n_verdicts = 0
        self.total = _FigureTally()
        self.by_suite: dict[str, _FigureTally] = {}
        self.by_category: dict[str, _FigureTally] = {}
        self.limited = 0
        self.limited_passed = 0

    def add(self, record: CaseRecord, verdict: Verdict, limited: bool = False) -> None:
        self.n_verdicts += 1
        if not verdict.applicable:
            return
        self.total.add(verdict)
        if limited:  # output cut or context full: counted apart
            self.limited += 1
            self.limited_passed += verdict.passed
        self.by_suite.setdefault(record.suite, _FigureTally()).add(verdict)
        self.by_category.setdefault(record.category, _FigureTally()).add(verdict)

    def figures(self, n_error: int, diagnostic: bool) -> TierFigures:
        figures = TierFigures(
            **self.total.figures().model_dump(),
            n_not_applicable=self.n_verdicts - self.total.n,
            n_error_excluded=n_error,
            by_suite={k: v.figures() for k, v in sorted(self.by_suite.items())},
            by_category={k: v.figures() for k, v in sorted(self.by_category.items())},
        )
        if diagnostic:  # set only then, as build_summary does
            figures.diagnostic = True
        set_serving_limits(figures, self.limited, self.limited_passed)
        return figures


class _Outcomes:
    """Per-record numbers a stratum keeps only when clusters can repeat: 21 bytes a record."""

    def __init__(self) -> None:
        self.cases = array("q")
        self.clusters = array("q")
        self.passed = array("b")
        self.category = array("i")
        self.suite = array("i")
        self.codes: dict[str, int] = {}

    def add(self, key: str, cluster: str, passed: bool, category: str, suite: str) -> None:
        self.cases.append(hash(key))
        self.clusters.append(hash(cluster))
        self.passed.append(passed)
        self.category.append(self.codes.setdefault(category, len(self.codes)))
        self.suite.append(self.codes.setdefault(suite, len(self.codes)))


def _cluster_interval(passed: np.ndarray, clusters: np.ndarray) -> Interval:
    """:func:`callbench.stats.accuracy_interval` over arrays (clusters as hashes of their labels)."""
    import numpy as np

    n, passes = int(passed.size), int(passed.sum())
    labels, first, inverse = np.unique(clusters, return_index=True, return_inverse=True)
    k = int(labels.size)
    if k == n or passes in (0, n):
        return clustered_accuracy(passes, n, k, None)
    rank = np.empty(k, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(k)  # cluster ids in first-seen order
    ids = rank[inverse.reshape(-1)]
    sums = np.bincount(ids, weights=passed.astype(float), minlength=k)
    counts = np.bincount(ids, minlength=k).astype(float)
    return clustered_accuracy(passes, n, k, (sums, counts))


class _StratumTally:
    """One (tier, harness mode) entry of ``summary.json`` → ``statistics.strata``."""

    def __init__(self, simple: bool) -> None:
        self.n = 0
        self.passed = 0
        self.partial = _Mean()
        self.recall = _Mean()
        self.groups: dict[str, dict[str, list[int]]] = {"category": {}, "suite": {}}
        self.outcomes = None if simple else _Outcomes()

    def add(self, record: CaseRecord, verdict: Verdict) -> None:
        flag = bool(verdict.passed)
        self.n += 1
        self.passed += flag
        if isinstance(verdict.partial, int | float):
            self.partial.add(float(verdict.partial))
        if isinstance(record.retrieval_recall, int | float):
            self.recall.add(float(record.retrieval_recall))
        category, suite = str(record.category or "-"), str(record.suite or "-")
        for name, value in (("category", category), ("suite", suite)):
            counts = self.groups[name].setdefault(value, [0, 0])
            counts[0] += 1
            counts[1] += flag
        if self.outcomes is not None:
            label = template_of({"template": record.template, "metadata": record.metadata}) or record.key
            self.outcomes.add(record.key, label, flag, category, suite)

    def figures(self, tier: str, mode: str, errors: int, flipping: dict[int, str]) -> dict[str, Any]:
        """The stratum's statistics; ``flipping`` maps case hashes to keys (filled by a later pass)."""
        groups = {name: self._groups(name) for name in ("category", "suite")}
        return {
            "tier": tier,
            "harness_mode": mode,
            "n": self.n,
            "cases": self._cases(),
            "passed": self.passed,
            "errors": errors,
            "accuracy": self._interval(None).as_dict(),
            "partial_mean_diagnostic": self.partial.value(),
            "by_category": groups["category"],
            "by_suite": groups["suite"],
            "trials": self.trials(flipping),
            "retrieval_recall": self.recall.value(),
        }

    def _groups(self, name: str) -> dict[str, dict[str, Any]]:
        return {
            value: {"n": n, "passed": passed, "accuracy": self._interval((name, value), n, passed).as_dict()}
            for value, (n, passed) in sorted(self.groups[name].items())
        }

    def _interval(self, group: tuple[str, str] | None, n: int = -1, passed: int = -1) -> Interval:
        if group is None:
            n, passed = self.n, self.passed
        if self.outcomes is None:
            return wilson_interval(passed, n)  # every cluster is one record
        import numpy as np

        flags = np.frombuffer(self.outcomes.passed, dtype=np.int8).astype(bool)
        clusters = np.frombuffer(self.outcomes.clusters, dtype=np.int64)
        if group is not None:
            column = self.outcomes.category if group[0] == "category" else self.outcomes.suite
            mask = np.frombuffer(column, dtype=np.int32) == self.outcomes.codes[group[1]]
            flags, clusters = flags[mask], clusters[mask]
        return _cluster_interval(flags, clusters)

    def _cases(self) -> int:
        if self.outcomes is None:
            return self.n
        import numpy as np

        return int(np.unique(np.frombuffer(self.outcomes.cases, dtype=np.int64)).size)

    def case_counts(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(trials, passes) of each case with several trials, in first-seen order; and the flipping
        ones' (case hash, first-seen rank)."""
        if self.outcomes is None:
            return [], []
        import numpy as np

        cases = np.frombuffer(self.outcomes.cases, dtype=np.int64)
        flags = np.frombuffer(self.outcomes.passed, dtype=np.int8)
        labels, first, inverse = np.unique(cases, return_index=True, return_inverse=True)
        trials = np.bincount(inverse.reshape(-1), minlength=labels.size)
        passes = np.bincount(inverse.reshape(-1), weights=flags, minlength=labels.size).astype(np.int64)
        counts, flipping = [], []
        for j in np.argsort(first, kind="stable").tolist():
            n, c = int(trials[j]), int(passes[j])
            if n >= 2:
                counts.append((n, c))
                if 0 < c < n:
                    flipping.append((int(labels[j]), j))
        return counts, flipping

    def trials(self, keys: dict[int, str]) -> dict[str, Any]:
        counts, flipping = self.case_counts()
        return trial_figures(self._cases(), counts, sorted(keys[h] for h, _j in flipping))


@dataclass
class SummaryTally:
    """Everything :func:`~callbench.harness.summary.build_summary` reads, one record at a time."""

    simple: bool = True
    modes: set[str] = field(default_factory=set)
    n_records: int = 0
    n_completed: int = 0
    n_error: int = 0
    n_manual: int = 0
    errors_by_type: Counter[str] = field(default_factory=Counter)
    tiers: dict[str, _TierTally] = field(default_factory=dict)
    recall: _Mean = field(default_factory=_Mean)
    flags: list[QCFlag] = field(default_factory=list)
    bug_flags: list[QCFlag] = field(default_factory=list)
    usage: UsageTally = field(default_factory=UsageTally)
    stat_tiers: dict[str, None] = field(default_factory=dict)
    errors_by_mode: Counter[str] = field(default_factory=Counter)
    strata: dict[tuple[str, str], _StratumTally] = field(default_factory=dict)
    serving: ServingTally = field(default_factory=ServingTally)

    def add(self, record: CaseRecord) -> None:
        """Count one latest record."""
        self.n_records += 1
        self.modes.add(record.harness_mode)
        self.usage.add(record)
        mode = record.harness_mode or "default"
        applicable = [(n, v) for n, v in record.verdicts.items() if v.applicable is not False]
        for name, _verdict in applicable:
            self.stat_tiers.setdefault(name, None)
        if record.status == "error":
            self.n_error += 1
            self.errors_by_mode[mode] += 1
            if record.error:
                self.errors_by_type[record.error.type] += 1
            self.bug_flags += tool_bug_flags([record])
            return
        self.n_completed += 1
        limited = self.serving.add(record)
        for name, verdict in record.verdicts.items():
            self.tiers.setdefault(name, _TierTally()).add(record, verdict, limited)
        for name, verdict in applicable:
            self.strata.setdefault((name, mode), _StratumTally(self.simple)).add(record, verdict)
        if record.retrieval_recall is not None:
            self.recall.add(record.retrieval_recall)
        self.flags += qc_flags([record])
        self.n_manual += record.scoring == "manual"

    def flipping_hashes(self) -> set[int]:
        """Case hashes whose keys the statistics print (flipping cases)."""
        return {h for tally in self.strata.values() for h, _j in tally.case_counts()[1]}

    def statistics(self, keys: dict[int, str]) -> dict[str, Any]:
        """``statistics_summary`` of the records counted."""
        names = set(self.strata) | {(t, m) for t in self.stat_tiers for m in self.errors_by_mode}
        strata = []
        for tier, mode in sorted(names):
            tally = self.strata.get((tier, mode)) or _StratumTally(True)
            strata.append(tally.figures(tier, mode, self.errors_by_mode.get(mode, 0), keys))
        return {"confidence": 0.95, "strata": strata}


def _case_keys(path: Path, wanted: set[int]) -> dict[int, str]:
    """Case hash -> key for the few cases whose keys the summary lists (one more light pass)."""
    keys: dict[int, str] = {}
    if wanted:
        for _offset, rid in _ids(path):
            if hash(rid.key) in wanted:
                keys[hash(rid.key)] = rid.key
    return keys


class _Completed:
    """The completed automatic records a scorer judged, re-read from disk on every iteration (a
    scorer's ``aggregate`` iterates once and keeps what it needs)."""

    def __init__(self, run_dir: Path, index: LatestIndex, keep: Callable[[CaseRecord], bool]) -> None:
        self.run_dir, self.index, self.keep = run_dir, index, keep

    def __iter__(self) -> Iterator[CaseRecord]:
        for record in iter_latest(self.run_dir, self.index):
            if self.keep(record):
                yield record


def _judged_by(name: str) -> Callable[[CaseRecord], bool]:
    # manual cases are decided by reviewers: no scorer's run-level figures count them
    return lambda r: r.status == "completed" and r.scoring != "manual" and name in r.verdicts


def stream_summary(
    run_dir: Path,
    header: RunHeader,
    scorers: Mapping[str, Aggregator] | None = None,
    requests: Mapping[str, int] | None = None,
) -> Summary:
    """The ``summary.json`` content of the run in ``run_dir``, equal to ``build_summary`` over
    ``latest_records(read_records(run_dir))`` slimmed, without holding the records."""
    path = Path(run_dir) / RECORDS_FILE
    index = index_latest(path) if path.is_file() else LatestIndex(0)
    tally = SummaryTally(simple=index.simple)
    with bulk_load():
        for record in iter_latest(run_dir, index):
            tally.add(record)
        for record in iter_superseded(run_dir, index):
            tally.usage.add_superseded(record)  # replaced records were paid for: in the cost
    mode = check_modes(tally.modes) or header.harness_mode
    aggregates: dict[str, ScorerAggregate] = {}
    for name, scorer in (scorers or {}).items():
        aggregate = scorer.aggregate(_Completed(Path(run_dir), index, _judged_by(name)))
        if aggregate is not None:
            aggregates[name] = ScorerAggregate.of(aggregate)
    summary = Summary(
        schema_version=SUMMARY_SCHEMA_VERSION,
        run_id=header.run_id,
        model=header.model,
        harness_mode=mode,
        harness_assistance=header.harness_assistance,
        n_records=tally.n_records,
        n_completed=tally.n_completed,
        n_error=tally.n_error,
        errors_by_type=dict(tally.errors_by_type),
        tiers={
            name: tally.tiers[name].figures(tally.n_error, name in header.diagnostic_scorers)
            for name in sorted(tally.tiers)
        },
        retrieval_recall=tally.recall.value(),
        qc_flags=tally.flags + tally.bug_flags,
        scorer_aggregates=aggregates,
        statistics=Statistics.model_validate(tally.statistics(_case_keys(path, tally.flipping_hashes()))),
        usage=tally.usage.result(header.options.get("price_table"), diagnostic=header.diagnostic_scorers),
    )
    if requests:
        summary.requests = dict(requests)
    if tally.serving.faults.any():  # set only then, as build_summary does
        summary.serving = tally.serving.result()
    if tally.n_manual:  # set only then: summaries of runs without manual cases keep their keys
        summary.n_manual = tally.n_manual
    return summary
