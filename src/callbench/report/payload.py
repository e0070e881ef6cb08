"""The report page's data: what each run contributes, built from run folders.

Records reach the page in two shapes: a *row* (:func:`record_row`), the few fields the case table,
filters, charts and tables read, for every record; and the *record* itself (:func:`record_payload`),
what the case panel shows, loaded when a case is opened.

Both are packed to keep a 3-run, 10,000-case report near 20 MB (the page expands them, ``data.js``):
rows become arrays whose repeated strings are indexes into one string table and whose per-case
fields (key, instruction, expected tools...) point into one case table shared by all runs; the
records (:func:`record_detail`: without ``trace.final_state``, which the page never shows) are
gzipped in chunks of :data:`DETAIL_CHUNK`, base64 in the JSON, their instruction, offered tools
and expected steps stored once per case for every run. :func:`unpack_rows` and
:func:`unpack_details` give back the plain shapes in Python (tests, tools).
"""

from __future__ import annotations

import base64
import datetime as _dt
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.harness.runfolder import RunFolder, bulk_load, read_run
from callbench.report.breakdowns import breakdowns_payload
from callbench.report.overview import overview_payload
from callbench.report.reviews import page_reviews
from callbench.stats import statistics_summary
from callbench.types.records import CaseRecord
from callbench.types.summary import Statistics
from callbench.types.verdict import Verdict

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


def _row_verdict(verdict: Verdict) -> dict[str, Any]:
    row: dict[str, Any] = {
        "passed": verdict.passed,
        "partial": verdict.partial,
        "reasons": [{"code": c} for c in verdict.codes],
    }
    if not verdict.applicable:  # judged nothing (a manual case, a state check without state): n/a
        row["applicable"] = False
    return row


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
        "verdicts": {tier: _row_verdict(v) for tier, v in record.verdicts.items()},
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
    """Everything the page script needs, as JSON-able data (rows and records packed, see above)."""
    stats = [run_statistics(r) for r in runs]
    rows = RowPacker()
    shared = SharedParts()
    page_runs = []
    for i, (run, st) in enumerate(zip(runs, stats, strict=True)):
        with bulk_load():  # one JSON tree per record
            details = [shared.split(record_detail(r)) for r in run.records]
        page_runs.append(
            {
                "id": f"run{i}",
                "label": run.label,
                "header": _shorten(header_payload(run)),
                "statistics": statistics_payload(st),
                "records": [rows.pack(record_row(r)) for r in run.records],
                "details": pack_chunks(details),
                "offset": run.offset,
            }
        )
    return {
        "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "live": live,
        "packed": {"strings": rows.strings, "cases": rows.cases, "shared": pack_chunks(shared.parts)},
        "runs": page_runs,
        **overview_payload(runs, stats),
        "breakdowns": breakdowns_payload(runs, stats),
        "reviews": page_reviews(runs),
    }


# --- packing: what keeps the page small ------------------------------------------------------

DETAIL_CHUNK = 100
"""Records per gzip chunk: opening a case inflates one chunk (about 500 KB of JSON). Bigger chunks
compress no better (gzip's window is 32 KB, a few records)."""
SHARED_FIELDS = ("instruction", "offered_tools", "expected_tools", "expected")
"""Record fields that are the same for a case in every run and trial: stored once per case."""
SHARED_REF = "@shared"
"""The key of a packed record naming its entry in the shared parts."""
CASE_FIELDS = ("key", "suite", "case_id", "category", "instruction", "expected_tools")
"""Row fields that belong to the case (the packed row names the case by index)."""


def _outcome_code(verdict: dict[str, Any]) -> int:
    """A row verdict's outcome as one number: 1 pass, 0 fail, -1 not applicable (judged nothing)."""
    return -1 if verdict.get("applicable") is False else int(verdict["passed"])


def _verdict_of_code(code: int, partial: Any, reasons: list[dict[str, Any]]) -> dict[str, Any]:
    verdict: dict[str, Any] = {"passed": code == 1, "partial": partial, "reasons": reasons}
    if code == -1:
        verdict["applicable"] = False
    return verdict


def record_detail(record: CaseRecord) -> dict[str, Any]:
    """What the case panel receives: :func:`record_payload` without ``trace.final_state`` (the page
    never shows the executor's snapshot; the state-match verdict carries the parts that differ)."""
    payload = record_payload(record)
    trace = payload.get("trace")
    if isinstance(trace, dict):
        trace.pop("final_state", None)
    return payload


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class SharedParts:
    """The per-case fields of records (:data:`SHARED_FIELDS`), each distinct set stored once."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}

    def split(self, detail: dict[str, Any]) -> dict[str, Any]:
        """``detail`` without its shared fields, naming their entry under :data:`SHARED_REF` (in place)."""
        part = {k: detail.pop(k) for k in SHARED_FIELDS if k in detail}
        text = _compact(part)
        at = self._index.get(text)
        if at is None:
            at = self._index[text] = len(self.parts)
            self.parts.append(part)
        detail[SHARED_REF] = at
        return detail


def pack_chunks(items: Sequence[Any], chunk: int = DETAIL_CHUNK) -> dict[str, Any]:
    """``items`` as ``{"chunk": n, "count": len, "chunks": [base64(gzip(JSON list of n items))...]}``."""
    chunks = [
        # mtime=0: the same runs give the same report bytes.
        base64.b64encode(gzip.compress(_compact(items[i : i + chunk]).encode(), 9, mtime=0)).decode("ascii")
        for i in range(0, len(items), chunk)
    ]
    return {"chunk": chunk, "count": len(items), "chunks": chunks}


def unpack_chunks(packed: dict[str, Any]) -> list[Any]:
    """The items :func:`pack_chunks` packed."""
    items: list[Any] = []
    for text in packed["chunks"]:
        items.extend(json.loads(gzip.decompress(base64.b64decode(text))))
    return items


class RowPacker:
    """Rows as arrays (the page's ``data.js`` expands them back to :func:`record_row`'s shape).

    A case is ``[key, suite, case_id, category, instruction, expected_tools]`` (key null when it
    is ``suite:case_id``). A packed row is ``[case, trial, status, harness_mode, retrieval_recall,
    duration_ms, verdicts, tools, final_text, stop_reason, error, agent]``: ``case`` indexes
    :attr:`cases`, strings that repeat (status, mode, tiers, reason codes, tools, stop
    reasons, error types, agent outcomes) index :attr:`strings`, ``verdicts`` is
    ``[[tier, outcome 1 pass|0 fail|-1 n/a, partial, [code...]]...]``, ``error`` is
    ``[type, message]`` or null,
    ``agent`` is ``[outcome, message]`` or null.
    """

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.cases: list[list[Any]] = []
        self._strings: dict[str, int] = {}
        self._cases: dict[str, int] = {}

    def _s(self, value: str | None) -> int | None:
        if value is None:
            return None
        at = self._strings.get(value)
        if at is None:
            at = self._strings[value] = len(self.strings)
            self.strings.append(value)
        return at

    def _case(self, row: dict[str, Any]) -> int:
        values = [row[k] for k in CASE_FIELDS]
        if values[0] == f"{values[1]}:{values[2]}":
            values[0] = None  # the usual key, suite:case_id, is rebuilt by the page
        text = _compact(values)
        at = self._cases.get(text)
        if at is None:
            at = self._cases[text] = len(self.cases)
            self.cases.append(values)
        return at

    def pack(self, row: dict[str, Any]) -> list[Any]:
        """The packed form of a :func:`record_row` row."""
        trace = row["trace"]
        error, agent = row.get("error"), trace.get("agent")
        return [
            self._case(row),
            row["trial"],
            self._s(row["status"]),
            self._s(row["harness_mode"]),
            row["retrieval_recall"],
            row["duration_ms"],
            [
                [self._s(tier), _outcome_code(v), v["partial"], [self._s(r["code"]) for r in v["reasons"]]]
                for tier, v in row["verdicts"].items()
            ],
            [self._s(c["tool"]) for c in trace["calls"]],
            trace["final_text"],
            self._s(trace["stop_reason"]),
            None if error is None else [self._s(error["type"]), error["message"]],
            None if agent is None else [self._s(agent["outcome"]), agent["message"]],
        ]


def unpack_rows(payload: dict[str, Any], run_index: int) -> list[dict[str, Any]]:
    """A run's rows in :func:`record_row`'s shape, from a :func:`build_payload` payload."""
    strings, cases = payload["packed"]["strings"], payload["packed"]["cases"]

    def s(i: int | None) -> str | None:
        return None if i is None else strings[i]

    rows = []
    for p in payload["runs"][run_index]["records"]:
        case, trial, status, mode, recall, duration, verdicts, tools, text, stop, error, agent = p
        key, suite, case_id, category = cases[case][:4]
        row = {"key": f"{suite}:{case_id}" if key is None else key, "suite": suite, "case_id": case_id}
        row["category"] = category
        row.update(trial=trial, status=s(status), harness_mode=s(mode))
        row.update(instruction=cases[case][4], expected_tools=cases[case][5])
        row.update(retrieval_recall=recall, duration_ms=duration)
        row["verdicts"] = {
            s(t): _verdict_of_code(ok, part, [{"code": s(c)} for c in codes])
            for t, ok, part, codes in verdicts
        }
        row["trace"] = {"calls": [{"tool": s(t)} for t in tools], "final_text": text, "stop_reason": s(stop)}
        if error is not None:
            row["error"] = {"type": s(error[0]), "message": error[1]}
        if agent is not None:
            row["trace"]["agent"] = {"outcome": s(agent[0]), "message": agent[1]}
        rows.append(row)
    return rows


def unpack_details(payload: dict[str, Any], run_index: int) -> list[dict[str, Any]]:
    """A run's records as :func:`record_detail` gives them, from a :func:`build_payload` payload."""
    shared = unpack_chunks(payload["packed"]["shared"])
    records = []
    for detail in unpack_chunks(payload["runs"][run_index]["details"]):
        records.append({**shared[detail.pop(SHARED_REF)], **detail})
    return records


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


def load_runs(run_dirs: Sequence[str | Path]) -> list[RunFolder]:
    """Read the run folders as the HTML report does (expected steps attached, labels unique).

    Raises:
        UserError: no folder given, or one unreadable.
    """
    if not run_dirs:
        raise UserError("give at least one run directory")
    runs = [read_run(d) for d in run_dirs]
    for run in runs:
        attach_expected(run)
    dedupe_labels(runs)
    return runs
