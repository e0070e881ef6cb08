"""Aggregation: strict accuracy per scorer (tier), suite and category; partial scores apart; QC flags.

Tiers and harness modes are never combined into one figure: each scorer is aggregated on its own
and a set of records spanning several harness modes is refused. The result is the typed
:class:`~callbench.types.summary.Summary` written to ``summary.json``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping

from callbench.errors import PoolingError
from callbench.harness.usage import UsageTally
from callbench.scoring.base import Aggregator
from callbench.scoring.serving import serving_facts
from callbench.stats import statistics_summary
from callbench.types.records import TOOL_BUG, CaseRecord, RunHeader
from callbench.types.summary import (
    SUMMARY_SCHEMA_VERSION,
    Figures,
    QCFlag,
    RunUsage,
    ScorerAggregate,
    ServingFaults,
    Statistics,
    Summary,
    TierFigures,
)
from callbench.types.verdict import TIERS

SERVING_PARSE_FLAG = "serving_parse_suspected"
"""QC flag of a case with an answer whose text holds a call the server did not return as one."""


def ensure_single_mode(records: Iterable[CaseRecord], what: str = "summary") -> str | None:
    """The one harness mode of ``records``; mixing modes raises ``PoolingError``."""
    return check_modes({r.harness_mode for r in records}, what)


def check_modes(modes: set[str], what: str = "summary") -> str | None:
    """The one harness mode in ``modes``; several raise ``PoolingError``."""
    if len(modes) > 1:
        raise PoolingError(
            f"refusing to pool harness modes {sorted(modes)} in one {what}: "
            "figures from different modes measure different things"
        )
    return next(iter(modes), None)


def build_summary(
    header: RunHeader,
    records: list[CaseRecord],
    scorers: Mapping[str, Aggregator] | None = None,
    requests: Mapping[str, int] | None = None,
    superseded: Iterable[CaseRecord] = (),
) -> Summary:
    """The ``summary.json`` content for one run.

    Args:
        header: The run's header.
        records: The latest record of each (case, trial), full or slimmed.
        scorers: Scorer name -> scorer, whose ``aggregate`` adds run-level figures.
        requests: The model wrapper's counters, recorded when given and not empty.
        superseded: Records later ones replaced (a resumed error): their tokens go into the cost
            only (``usage.superseded``), as :func:`~callbench.harness.summary_stream.stream_summary`
            counts them.
    """
    mode = ensure_single_mode(records) or header.harness_mode
    completed = [r for r in records if r.status == "completed"]
    errors = [r for r in records if r.status == "error"]
    scorer_names = sorted({name for r in completed for name in r.verdicts})
    summary = Summary(
        schema_version=SUMMARY_SCHEMA_VERSION,
        run_id=header.run_id,
        model=header.model,
        harness_mode=mode,
        harness_assistance=header.harness_assistance,
        n_records=len(records),
        n_completed=len(completed),
        n_error=len(errors),
        errors_by_type=dict(Counter(r.error.type for r in errors if r.error)),
        tiers={name: _tier_row(header, name, completed, len(errors)) for name in scorer_names},
        retrieval_recall=_mean(r.retrieval_recall for r in completed if r.retrieval_recall is not None),
        qc_flags=qc_flags(completed) + tool_bug_flags(errors),
        # manual cases are decided by reviewers: no scorer's run-level figures count them
        scorer_aggregates=_scorer_aggregates(scorers or {}, [r for r in completed if r.scoring != "manual"]),
        # CIs, trials (pass@k, flip rate) per tier and mode
        statistics=Statistics.model_validate(statistics_summary(records)),
        # tokens, cost, latency p50/p95
        usage=_usage(header, records, superseded),
    )
    if requests:
        summary.requests = dict(requests)
    serving = ServingTally()
    for r in completed:
        serving.add(r)
    if serving.faults.any():  # set only then: summaries of runs without any keep their keys
        summary.serving = serving.result()
    manual = sum(r.scoring == "manual" for r in completed)
    if manual:  # set only then: summaries of runs without manual cases keep their keys
        summary.n_manual = manual
    return summary


def _usage(header: RunHeader, records: list[CaseRecord], superseded: Iterable[CaseRecord]) -> RunUsage:
    tally = UsageTally()
    for record in records:
        tally.add(record)
    for record in superseded:
        tally.add_superseded(record)
    return tally.result(header.options.get("price_table"), diagnostic=header.diagnostic_scorers)


def _tier_row(header: RunHeader, name: str, completed: list[CaseRecord], n_error: int) -> TierFigures:
    figures = tier_figures(name, completed, n_error)
    if name in header.diagnostic_scorers:  # set only then: summaries of other runs keep their keys
        figures.diagnostic = True
    return figures


def tier_figures(name: str, completed: list[CaseRecord], n_error: int) -> TierFigures:
    """Strict accuracy (over completed cases) with its breakdowns, and the diagnostic partial mean;
    with cases cut at the output limit or overflowing the context, accuracy without them beside."""
    verdicts = [r for r in completed if name in r.verdicts]
    scored = [r for r in verdicts if r.verdicts[name].applicable]
    figures = TierFigures(
        **_figures(scored, name).model_dump(),
        n_not_applicable=len(verdicts) - len(scored),
        n_error_excluded=n_error,
        by_suite={k: _figures(v, name) for k, v in sorted(_group(scored, lambda r: r.suite).items())},
        by_category={k: _figures(v, name) for k, v in sorted(_group(scored, lambda r: r.category).items())},
    )
    limited = [r for r in scored if serving_facts(r.trace).limited]
    set_serving_limits(figures, len(limited), sum(r.verdicts[name].passed for r in limited))
    return figures


def set_serving_limits(figures: TierFigures, n_limited: int, passed_limited: int) -> None:
    """Set the serving-limit figures on a tier's row, only when some scored case met a limit (so
    summaries of other runs keep their keys)."""
    if not n_limited:
        return
    figures.n_serving_limited = n_limited
    rest = figures.n - n_limited
    figures.accuracy_without_serving_limits = (figures.passed - passed_limited) / rest if rest else None


class ServingTally:
    """Counts :class:`~callbench.types.summary.ServingFaults` over completed records, one at a time."""

    def __init__(self) -> None:
        self.faults = ServingFaults()

    def add(self, record: CaseRecord) -> bool:
        """Count one completed record; True when it met a run limit (output cut, context full)."""
        facts = serving_facts(record.trace)
        faults = self.faults
        if facts.text_calls:
            faults.text_call_answers += len(facts.text_calls)
            faults.text_call_cases += 1
            formats = Counter(faults.text_call_formats) + Counter(fmt for _round, fmt in facts.text_calls)
            faults.text_call_formats = dict(sorted(formats.items()))
        if facts.recovered_calls:
            faults.recovered_calls += facts.recovered_calls
            faults.recovered_cases += 1
        faults.format_error_cases += bool(facts.format_errors)
        faults.output_truncated += bool(facts.truncated)
        faults.context_overflow += facts.context_overflow is not None
        return facts.limited

    def result(self) -> ServingFaults | None:
        """The counts (every field written, zeros too), or ``None`` when all are zero."""
        return ServingFaults.model_validate(self.faults.model_dump()) if self.faults.any() else None


def _figures(records: list[CaseRecord], name: str) -> Figures:
    passed = sum(r.verdicts[name].passed for r in records)
    partials = [r.verdicts[name].partial for r in records if r.verdicts[name].partial is not None]
    return Figures(
        n=len(records),
        passed=passed,
        accuracy=passed / len(records) if records else None,
        mean_partial_diagnostic=_mean(partials),
    )


BLOCKED_LOOP_FLAG = "blocked_event_loop"
"""QC flag of a case that held callbench's event loop past the watchdog's threshold."""


def qc_flags(records: list[CaseRecord]) -> list[QCFlag]:
    """Anomalies worth a manual look (from the methods' quality control)."""
    flags = []
    for r in records:
        ok_exec = any(c.execution == "ok" for c in r.trace.calls)
        for name, verdict in r.verdicts.items():
            if not verdict.applicable:
                continue
            if verdict.partial == 0 and ok_exec:
                flags.append(
                    QCFlag(
                        key=r.key,
                        trial=str(r.trial),
                        scorer=name,
                        flag="zero_partial_with_successful_execution",
                    )
                )
            if verdict.passed and not r.trace.calls and r.expected_tools and name in TIERS:
                flags.append(
                    QCFlag(key=r.key, trial=str(r.trial), scorer=name, flag="pass_without_structured_call")
                )
        if r.retrieval_recall is not None and r.retrieval_recall < 1.0:
            flags.append(QCFlag(key=r.key, trial=str(r.trial), scorer="", flag="expected_tools_not_offered"))
        if serving_facts(r.trace).text_calls:  # a call the server's parser probably failed to return
            flags.append(QCFlag(key=r.key, trial=str(r.trial), scorer="", flag=SERVING_PARSE_FLAG))
        if r.trace.loop_stall_s:  # the case blocked callbench's event loop (harness/watchdog.py)
            flags.append(QCFlag(key=r.key, trial=str(r.trial), scorer="", flag=BLOCKED_LOOP_FLAG))
    return flags


def tool_bug_flags(errors: list[CaseRecord]) -> list[QCFlag]:
    """Error records of a tool implementation that crashed: a harness fault that needs a person (the
    record keeps the traceback); never the model's failure."""
    return [
        QCFlag(key=r.key, trial=str(r.trial), scorer="", flag="tool_implementation_error")
        for r in errors
        if r.error is not None and r.error.type.startswith(TOOL_BUG + ":")
    ]


def _scorer_aggregates(
    scorers: Mapping[str, Aggregator], completed: list[CaseRecord]
) -> dict[str, ScorerAggregate]:
    out = {}
    for name, scorer in scorers.items():
        aggregate = scorer.aggregate([r for r in completed if name in r.verdicts])
        if aggregate is not None:
            out[name] = ScorerAggregate.of(aggregate)
    return out


def _group(records: list[CaseRecord], key: Callable[[CaseRecord], str]) -> dict[str, list[CaseRecord]]:
    groups: dict[str, list[CaseRecord]] = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    return groups


def _mean(values: Iterable[float | None]) -> float | None:
    items = [v for v in values if v is not None]
    return sum(items) / len(items) if items else None
