"""The report page's data: what each run contributes, built from run folders.

Records reach the page in two shapes: a *row* (:func:`record_row`), the few fields the case table,
filters, charts and tables read, for every record; and the *record* itself (:func:`record_payload`),
what the case panel shows, loaded when a case is opened.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

from callbench.harness.runfolder import RunFolder, bulk_load
from callbench.report.breakdowns import breakdowns_payload
from callbench.report.overview import overview_payload
from callbench.stats import statistics_summary
from callbench.types.records import CaseRecord
from callbench.types.summary import Statistics

MAX_TEXT = 4000
"""Long tool results and texts are cut in the report (the run directory keeps them whole)."""


def record_payload(record: CaseRecord) -> dict[str, Any]:
    """The page's JSON for one record: the fields the record was written with (a record of an older
    schema keeps its shape, so the page's fallbacks still apply), very long strings shortened.

    The one place records become page data, for the static report and the live view alike.
    """
    return _shorten_in_place(record.model_dump(mode="json", exclude_unset=True, fallback=str))


ROW_TEXT = 300
"""Characters of the instruction, final text and error message a row keeps (for search and the table)."""


def record_row(record: CaseRecord) -> dict[str, Any]:
    """The page's row for one record: the same shape as :func:`record_payload`, only the fields
    the case table, its filters, the charts and the cross-run tables read."""
    trace = record.trace
    row: dict[str, Any] = {
        "key": record.key,
        "suite": record.suite,
        "case_id": record.case_id,
        "category": record.category,
        "trial": record.trial,
        "status": record.status,
        "harness_mode": record.harness_mode,
        "instruction": record.instruction[:ROW_TEXT],
        "expected_tools": record.expected_tools,
        "retrieval_recall": record.retrieval_recall,
        "duration_ms": record.duration_ms,
        "verdicts": {
            tier: {"passed": v.passed, "partial": v.partial, "reasons": [{"code": c} for c in v.codes]}
            for tier, v in record.verdicts.items()
        },
        "trace": {
            "calls": [{"tool": c.tool} for c in trace.calls],
            "final_text": (trace.final_text or "")[:ROW_TEXT],
            "stop_reason": trace.stop_reason,
        },
    }
    if record.error is not None:
        row["error"] = {"type": record.error.type, "message": record.error.message[:ROW_TEXT]}
    if trace.agent is not None:
        agent = trace.agent
        row["trace"]["agent"] = {"outcome": agent.outcome, "message": (agent.message or "")[:ROW_TEXT]}
    return row


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… [{len(text) - MAX_TEXT} more chars]"


def _shorten(value: Any) -> Any:
    """A copy of ``value`` with its long strings cut."""
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def _shorten_in_place(value: Any) -> Any:
    """Cut the long strings of a fresh JSON tree in place (no copy: 10,000-record reports stay fast)."""
    items = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    for key, item in items:
        kind = type(item)
        if kind is str:
            if len(item) > MAX_TEXT:
                value[key] = _cut(item)
        elif kind is dict or kind is list:
            _shorten_in_place(item)
    return value


def run_statistics(run: RunFolder) -> Statistics:
    """The run's statistics: those in ``summary.json`` when present, else computed from the records."""
    if run.summary is not None and run.summary.statistics is not None:
        return run.summary.statistics
    return compute_statistics(run.records)


def compute_statistics(records: list[CaseRecord]) -> Statistics:
    """Statistics of records (the latest of each (case, trial)), as in ``summary.json``."""
    return Statistics.model_validate(statistics_summary(records))


def statistics_payload(statistics: Statistics) -> dict[str, Any]:
    """The page's JSON for a run's statistics (the keys they were computed or stored with)."""
    return statistics.model_dump(mode="json", exclude_unset=True)


def build_payload(runs: Sequence[RunFolder], *, live: bool = False) -> dict[str, Any]:
    """Everything the page script needs, as plain JSON-able data."""
    stats = [run_statistics(r) for r in runs]
    with bulk_load():  # one JSON tree per record
        records = [[record_payload(r) for r in run.records] for run in runs]
    return {
        "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "live": live,
        "runs": [
            {
                "id": f"run{i}",
                "label": run.label,
                "header": _shorten(header_payload(run)),
                "statistics": statistics_payload(st),
                "records": [record_row(r) for r in run.records],
                "details": page_records,
                "offset": run.offset,
            }
            for i, (run, st, page_records) in enumerate(zip(runs, stats, records, strict=True))
        ],
        **overview_payload(runs, stats),
        "breakdowns": breakdowns_payload(runs),
    }


def header_payload(run: RunFolder) -> dict[str, Any]:
    """The run header's JSON (the keys ``run.json`` holds; empty before the run wrote it)."""
    return {} if run.header is None else run.header.model_dump(mode="json", exclude_unset=True, fallback=str)


def attach_expected(run: RunFolder) -> list[str]:
    """Give each record its case's expected steps (tool + arguments), read from the run's suites.

    Records written before records carried their expected steps only name the expected tools; the
    report's argument diff needs the arguments too. A suite is used only when it still loads with
    the hash recorded in ``run.json``, so the expectations shown are the ones the run was scored
    against.

    Returns:
        Notes on suites that could not be used (shown nowhere else; the report still works).
    """
    if run.header is None or all(r.expected or not r.expected_tools for r in run.records):
        return []  # records written since records carry their expected steps need no suite
    from callbench.suites.resolve import load_suite

    steps: dict[str, list[dict[str, Any]]] = {}
    notes = []
    for info in run.header.suites:
        try:
            suite = load_suite(info.spec or info.name, data=info.data)
        except Exception as exc:  # noqa: BLE001 (any loader failure only costs the argument diff)
            notes.append(f"{info.spec}: not loaded ({exc})")
            continue
        if info.hash and suite.hash != info.hash:
            notes.append(f"{info.spec}: changed since the run (hash differs); expected arguments not shown")
            continue
        for case in suite.cases:
            steps[f"{suite.name}:{case.id}"] = [s.model_dump(mode="json") for s in case.expected]
    for record in run.records:
        if not record.expected and record.key in steps:
            record.expected = [dict(step) for step in steps[record.key]]
    return notes


def dedupe_labels(runs: Sequence[RunFolder]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        count = seen.get(run.label, 0)
        seen[run.label] = count + 1
        if count:
            run.label = f"{run.label} #{count + 1}"
