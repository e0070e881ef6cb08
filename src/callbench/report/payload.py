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

The page is built one record at a time (:class:`PageBuilder`): the static report streams each
``records.jsonl`` (:meth:`PageBuilder.read_run`), keeps of a record only what the overview and the
breakdowns count (:class:`~callbench.report.overview.RunFacts`,
:class:`~callbench.report.breakdowns.RunTally`) and writes its row and its gzipped record to
temporary files (:class:`Spool`) that are copied into the page at the end. The record the page
shows is the line as written (parsed once, with orjson), never a re-serialised model: a 3 x 10,000
record report is written in seconds in under 300 MB instead of 37 s in 1.7 GB.
"""

from __future__ import annotations

import base64
import datetime as _dt
import gzip
import hashlib
import json
import re
import shutil
import tempfile
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import pydantic_core
from pydantic import BaseModel, ValidationError

from callbench.errors import UserError
from callbench.harness.runfolder import (
    RECORDS_FILE,
    SUMMARY_FILE,
    RunFolder,
    TornRecordWarning,
    bulk_load,
    read_header,
    read_run,
    read_summary,
)
from callbench.report.breakdowns import RunTally, breakdowns_payload
from callbench.report.breakdowns import diagnostic_scorers as header_diagnostic_scorers
from callbench.report.fingerprints import FailureTally, failures_payload
from callbench.report.overview import RunFacts, overview_payload
from callbench.review.judge_audit import JudgeTally, page_judge_audit
from callbench.review.tables import page_reviews
from callbench.stats import statistics_summary
from callbench.types.jsoncodec import load_model
from callbench.types.records import CaseRecord
from callbench.types.summary import Statistics
from callbench.types.trace import KEEP_COPIES
from callbench.types.verdict import Verdict

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib is the fallback
    _orjson = None  # type: ignore[assignment]

MAX_TEXT = 4000
"""Long tool results and texts are cut in the report (the run directory keeps them whole)."""


def record_payload(record: CaseRecord) -> dict[str, Any]:
    """The page's JSON for one record: the fields the record was written with (a record of an older
    schema keeps its shape, so the page's fallbacks still apply), very long strings shortened.

    The one place records become page data, for the static report and the live view alike.
    """
    return _shorten_in_place(record_dump(record))


def record_dump(record: CaseRecord) -> dict[str, Any]:
    """The record's fields as written (the keys it was set with), as JSON data, nothing cut."""
    # every copy: a browser reads it, and a final text stored once is the last round's text there
    return record.model_dump(mode="json", exclude_unset=True, fallback=str, context={KEEP_COPIES: True})


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
    """Everything the page script needs, as JSON-able data (rows and records packed, see above),
    from runs already in memory (the live view; the static report streams, :class:`PageBuilder`)."""
    with PageBuilder(runs, live=live) as builder, bulk_load():  # one JSON tree per record
        for index, run in enumerate(runs):
            for record in run.records:
                builder.add(index, record, record_dump(record))
        return builder.payload()


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


def loads(line: bytes) -> Any:
    """A JSON line as Python data: pydantic-core's reader (as fast as orjson, and exact for integers
    past 64 bits, which orjson reads as floats), the stdlib for what it refuses (lone surrogates)."""
    try:
        return pydantic_core.from_json(line)
    except ValueError:
        return json.loads(line)


# A string longer than MAX_TEXT leaves a run of more than MAX_TEXT bytes after its opening quote
# once each escaped quote is one byte: lines without such a run need no walk (most of them).
_LONG_RUN = re.compile(b'"[^"]{%d}' % (MAX_TEXT + 1))


def _may_hold_long_text(line: bytes) -> bool:
    return len(line) > MAX_TEXT and _LONG_RUN.search(line.replace(b'\\"', b"'")) is not None


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON of JSON data (the same value as :func:`_compact`; orjson when it can)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value, default=str)
        except TypeError:  # orjson.JSONEncodeError: integers past 64 bits, lone surrogates
            pass
    try:
        return _compact(value).encode()
    except UnicodeEncodeError:  # a lone surrogate: written as its JSON escape
        return json.dumps(value, separators=(",", ":"), default=str).encode()


_SCRIPT_BYTES: tuple[tuple[bytes, bytes], ...] = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def script_bytes(data: bytes) -> bytes:
    """UTF-8 JSON made safe inside ``<script>``: the escapes of ``html.script_json``, on bytes."""
    for old, new in _SCRIPT_BYTES:
        if old in data:
            data = data.replace(old, new)
    return data


def _digest(data: bytes) -> bytes:
    # 16-byte keys instead of the texts: 100,000 distinct cases stay a few MB of index.
    return hashlib.blake2b(data, digest_size=16).digest()


class Spool:
    """The elements of one big JSON array of the page (JSON texts, script-safe), kept in an
    anonymous temporary file as they come and copied into the page at the end."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile()
        self.count = 0

    def add(self, item: bytes) -> None:
        if self.count:
            self._file.write(b",")
        self._file.write(item)
        self.count += 1

    def write_array(self, out: IO[bytes]) -> None:
        """Write ``[item,item...]`` to ``out``."""
        out.write(b"[")
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, 1 << 20)
        self._file.seek(0, 2)
        out.write(b"]")

    def items(self) -> list[Any]:
        """The elements as Python data."""
        self._file.seek(0)
        data = self._file.read()
        self._file.seek(0, 2)
        return list(json.loads(b"[" + data + b"]"))

    def close(self) -> None:
        self._file.close()


def _packed_chunk(items: list[bytes]) -> bytes:
    # mtime=0: the same runs give the same report bytes.
    return b'"' + base64.b64encode(gzip.compress(b"[" + b",".join(items) + b"]", 9, mtime=0)) + b'"'


_COMPRESSOR: ThreadPoolExecutor | None = None


def _compressor() -> ThreadPoolExecutor:
    # zlib lets go of the GIL: chunks are compressed on a second core while records are read.
    global _COMPRESSOR
    if _COMPRESSOR is None:
        _COMPRESSOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callbench-gzip")
    return _COMPRESSOR


class ChunkPacker:
    """:func:`pack_chunks` one item at a time: items (compact JSON) gzipped ``chunk`` at a time
    (in a background thread, a few chunks ahead at most) into a :class:`Spool` of base64 texts."""

    AHEAD = 4
    """Chunks compressing at once (each holds its items, about 500 KB)."""

    def __init__(self, chunk: int = DETAIL_CHUNK) -> None:
        self.chunk = chunk
        self.count = 0
        self.spool = Spool()
        self._items: list[bytes] = []
        self._pending: deque[Future[bytes]] = deque()

    def add(self, item: bytes) -> None:
        self._items.append(item)
        self.count += 1
        if len(self._items) == self.chunk:
            self._submit()

    def _submit(self) -> None:
        self._pending.append(_compressor().submit(_packed_chunk, self._items))
        self._items = []
        while len(self._pending) > self.AHEAD:
            self.spool.add(self._pending.popleft().result())

    def flush(self) -> None:
        """Pack the items of a last, partial chunk and wait for every chunk."""
        if self._items:
            self._submit()
        while self._pending:
            self.spool.add(self._pending.popleft().result())

    def head(self) -> dict[str, int]:
        """The keys of the packed form besides its chunks."""
        return {"chunk": self.chunk, "count": self.count}


class SharedParts:
    """The per-case fields of records (:data:`SHARED_FIELDS`), each distinct set stored once."""

    def __init__(self) -> None:
        self.packer = ChunkPacker()
        self._index: dict[bytes, int] = {}

    def split(self, detail: dict[str, Any]) -> dict[str, Any]:
        """``detail`` without its shared fields, naming their entry under :data:`SHARED_REF` (in place)."""
        part = {k: detail.pop(k) for k in SHARED_FIELDS if k in detail}
        text = dumps(part)
        key = _digest(text)
        at = self._index.get(key)
        if at is None:
            at = self._index[key] = len(self._index)
            self.packer.add(text)
        detail[SHARED_REF] = at
        return detail


def pack_chunks(items: Sequence[Any], chunk: int = DETAIL_CHUNK) -> dict[str, Any]:
    """``items`` as ``{"chunk": n, "count": len, "chunks": [base64(gzip(JSON list of n items))...]}``."""
    packer = ChunkPacker(chunk)
    try:
        for item in items:
            packer.add(dumps(item))
        packer.flush()
        return packer.head() | {"chunks": packer.spool.items()}
    finally:
        packer.spool.close()


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
        self.cases = Spool()
        """The cases as script-safe JSON texts."""
        self._strings: dict[str, int] = {}
        self._cases: dict[bytes, int] = {}

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
        text = dumps(values)
        key = _digest(text)
        at = self._cases.get(key)
        if at is None:
            at = self._cases[key] = len(self._cases)
            self.cases.add(script_bytes(text))
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
    steps: dict[str, list[dict[str, Any]]] = {}
    notes = suite_steps(run, steps)
    for record in run.records:
        if not record.expected and record.key in steps:
            record.expected = [dict(step) for step in steps[record.key]]
    return notes


def suite_steps(run: RunFolder, steps: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Fill ``steps`` with each case's expected steps (``suite:id`` -> steps) from the run's suites
    that still load with the hash in ``run.json``; notes on those that do not."""
    from callbench.suites.resolve import load_suite

    notes: list[str] = []
    if run.header is None:
        return notes
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


# --- building the page one record at a time -------------------------------------------------

_RECORD_FIELDS = frozenset(CaseRecord.model_fields)
_DEFAULT_DROPPED = {"scoring": "auto", "rubric": None}
"""Fields a record's dump leaves out at these values (``exclude_if``): dropped from a written line too."""


def _as_written(detail: dict[str, Any]) -> dict[str, Any]:
    """A parsed line as :func:`record_payload` would give its record: unknown top-level keys and the
    fields left out at their defaults dropped (in place)."""
    for name in detail.keys() - _RECORD_FIELDS:
        del detail[name]
    for name, value in _DEFAULT_DROPPED.items():
        if name in detail and detail[name] == value:
            del detail[name]
    return detail


class PageBuilder:
    """The page data of :func:`build_payload`, built one record at a time.

    ``runs`` give the headers, summaries and labels (their ``records`` are not read: feed them with
    :meth:`add`, or let :meth:`read_run` stream a run folder's ``records.jsonl``). Rows, records and
    shared parts go to temporary files as they come; what stays in memory per record is what the
    overview and the breakdowns count. Use as a context manager (the temporary files are closed).
    """

    def __init__(self, runs: Sequence[RunFolder], *, live: bool = False) -> None:
        self.runs = list(runs)
        self.live = live
        self.rows = RowPacker()
        self.shared = SharedParts()
        skip = frozenset(header_diagnostic_scorers(self.runs))  # diagnostic scorers report no pairing
        self.facts = [RunFacts() for _ in self.runs]
        self.tallies = [RunTally(skip) for _ in self.runs]
        self.failures = [FailureTally(run.header) for run in self.runs]  # "Failures by tool"
        self.judges = [JudgeTally() for _ in self.runs]  # "Judge audit" (review/judge_audit.py)
        self.row_spools = [Spool() for _ in self.runs]
        self.details = [ChunkPacker() for _ in self.runs]

    def __enter__(self) -> PageBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the temporary files."""
        for spool in (self.rows.cases, self.shared.packer.spool, *self.row_spools):
            spool.close()
        for packer in self.details:
            packer.spool.close()

    def add(self, run_index: int, record: CaseRecord, detail: dict[str, Any], *, cut: bool = True) -> None:
        """Add the run's next record; ``detail`` is its JSON (:func:`record_payload`'s shape), a
        fresh tree this call cuts (unless ``cut`` is false: it holds no long text) and splits in place."""
        self.facts[run_index].add(record)
        self.tallies[run_index].add(record)
        self.failures[run_index].add(record)
        self.judges[run_index].add(record)
        self.row_spools[run_index].add(script_bytes(dumps(self.rows.pack(record_row(record)))))
        trace = detail.get("trace")
        if isinstance(trace, dict):
            trace.pop("final_state", None)  # the page never shows the executor's snapshot
            if "final_text" in trace and trace["final_text"] is None:  # stored once: the last round's
                trace["final_text"] = record.trace.final_text
        if cut:
            _shorten_in_place(detail)
        self.details[run_index].add(dumps(self.shared.split(detail)))

    def read_run(self, run_index: int) -> None:
        """Stream the run's ``records.jsonl`` into the page (the records :func:`read_run` keeps, in
        its order, with their expected steps attached as :func:`load_runs` does).

        Raises:
            UserError: a line that is not a valid record (file, line and field named).
        """
        run = self.runs[run_index]
        expected = _ExpectedSteps(run)
        path = run.path / RECORDS_FILE
        for number, line in _latest_lines(path, run):
            detail = _record_json(line)
            cut = _may_hold_long_text(line)
            if expected.wanted(detail):
                cut |= expected.attach(detail)
            record = _validated(detail, line, path, number)
            if record is None:  # only pydantic's own JSON reading takes the line: its record decides
                record = load_model(CaseRecord, line)
                expected.attach_record(record)
                detail = record_dump(record)
            self.add(run_index, record, _as_written(detail), cut=cut)

    def statistics(self) -> list[Statistics]:
        """Each run's statistics: from ``summary.json`` when present, else from its records."""
        return [
            run.summary.statistics
            if run.summary is not None and run.summary.statistics is not None
            else Statistics.model_validate(statistics_summary(facts.views))
            for run, facts in zip(self.runs, self.facts, strict=True)
        ]

    def data(self, big: Callable[[Spool], Any]) -> dict[str, Any]:
        """The page data, each big array given as ``big(spool)`` (its items, or a placeholder)."""
        stats = self.statistics()
        self.shared.packer.flush()
        for packer in self.details:
            packer.flush()
        page_runs = [
            {
                "id": f"run{i}",
                "label": run.label,
                "header": _shorten(header_payload(run)),
                "statistics": statistics_payload(st),
                "records": big(self.row_spools[i]),
                "details": self.details[i].head() | {"chunks": big(self.details[i].spool)},
                "offset": run.offset,
            }
            for i, (run, st) in enumerate(zip(self.runs, stats, strict=True))
        ]
        shared = self.shared.packer
        return {
            "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "live": self.live,
            "packed": {
                "strings": self.rows.strings,
                "cases": big(self.rows.cases),
                "shared": shared.head() | {"chunks": big(shared.spool)},
            },
            "runs": page_runs,
            **overview_payload(self.runs, stats, self.facts),
            "breakdowns": breakdowns_payload(self.runs, stats, self.tallies),
            "failures": failures_payload(self.runs, self.failures),
            "reviews": page_reviews(self.runs),
            "judge_audit": self.judge_audit(),
        }

    def judge_audit(self) -> list[dict[str, Any]]:
        """The "Judge audit" section's data: the records' judge verdicts, then each run folder's
        reviews (:func:`callbench.review.judge_audit.page_judge_audit`)."""
        for run, tally in zip(self.runs, self.judges, strict=True):
            tally.add_run(run.path)
        return page_judge_audit([run.label for run in self.runs], self.judges)

    def payload(self) -> dict[str, Any]:
        """The page data as Python data (:func:`build_payload`)."""
        return self.data(Spool.items)


def open_runs(run_dirs: Sequence[str | Path]) -> list[RunFolder]:
    """The run folders' headers and summaries, labels made unique, records left on disk (for
    :meth:`PageBuilder.read_run`).

    Raises:
        UserError: no folder given, or one unreadable.
    """
    if not run_dirs:
        raise UserError("give at least one run directory")
    runs = []
    for run_dir in run_dirs:
        path = Path(run_dir)
        if not path.is_dir():
            raise UserError(f"{path}: no such run directory")
        header = read_header(path)
        if not (path / RECORDS_FILE).exists():
            raise UserError(f"{path / RECORDS_FILE}: missing (the run wrote no records)")
        summary = read_summary(path) if (path / SUMMARY_FILE).is_file() else None
        runs.append(RunFolder(path=path, header=header, records=[], summary=summary))
    dedupe_labels(runs)
    return runs


class _RecordId(BaseModel):
    """The identity of a line (the rest of it is skipped, not built)."""

    key: str
    trial: int = 1


# Lines callbench writes start with these fields, in this order: their identity without a parse.
_ID_PREFIX = re.compile(
    rb'\{\s*"schema_version"\s*:\s*\d+\s*,\s*"key"\s*:\s*("(?:[^"\\]|\\.)*")\s*,'
    rb'\s*"suite"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"case_id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,'
    rb'\s*"category"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"trial"\s*:\s*(\d+)\s*[,}]'
)


def _invalid(path: Path, number: int, line: bytes) -> UserError:
    """The error :class:`~callbench.harness.runfolder.RecordTail` gives for an invalid line."""
    try:
        load_model(CaseRecord, line)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        return UserError(f"{path}:{number}: invalid record: {where + ': ' if where else ''}{error['msg']}")
    return UserError(f"{path}:{number}: invalid record")  # pragma: no cover - only called on failures


def _identity(line: bytes, path: Path, number: int) -> tuple[str, int]:
    match = _ID_PREFIX.match(line)
    if match is not None:
        return json.loads(match.group(1)), int(match.group(2))
    try:
        ident = load_model(_RecordId, line)
    except ValidationError:
        raise _invalid(path, number, line) from None
    return ident.key, ident.trial


def _latest_lines(path: Path, run: RunFolder) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of the records :func:`read_run` keeps, in its order: the last record of
    each (key, trial), at the place of the first. Sets ``run.offset`` as the reader does.

    A first pass reads only each line's identity; a torn last line is skipped with the reader's
    :class:`TornRecordWarning`, any other invalid line is a :class:`UserError` (superseded lines
    are checked too, as the reader checks every line).
    """
    slots: dict[tuple[str, int], tuple[int, int, int]] = {}
    offset = number = 0
    with path.open("rb") as handle, path.open("rb") as again:
        for raw in handle:
            number += 1
            if not raw.strip():
                offset += len(raw)
                continue
            if not raw.endswith(b"\n"):  # the last line, cut: a record only if it is whole
                try:
                    record = load_model(CaseRecord, raw)
                except ValidationError:
                    warnings.warn(
                        TornRecordWarning(
                            f"{path}:{number}: skipped a torn last line ({len(raw)} bytes, a record cut "
                            "off when the run was killed); the file is unchanged; "
                            "`callbench run --resume` re-runs that case"
                        ),
                        stacklevel=3,
                    )
                    break
                ident = record.record_id
            else:
                ident = _identity(raw, path, number)
            earlier = slots.get(ident)
            if earlier is not None:  # superseded (a resumed error): still a line to check
                again.seek(earlier[1])
                _check(again.read(earlier[2]), path, earlier[0])
            slots[ident] = (number, offset, len(raw))
            offset += len(raw)
        run.offset = offset
        for at, start, size in slots.values():
            if handle.tell() != start:
                handle.seek(start)
            yield at, handle.read(size)


def _record_json(line: bytes) -> Any:
    try:
        return loads(line)
    except ValueError:
        return None  # not JSON: the validation names the problem


def _validated(detail: Any, line: bytes, path: Path, number: int) -> CaseRecord | None:
    """The typed record of a parsed line; ``None`` when only pydantic's own JSON reading accepts
    the line (the caller then reads it that way). Raises the reader's error for an invalid line."""
    try:
        return CaseRecord.model_validate(detail)
    except ValidationError:
        _check(line, path, number)
    return None


def _check(line: bytes, path: Path, number: int) -> None:
    """Raise the reader's error when ``line`` is not a valid record."""
    try:
        load_model(CaseRecord, line)
    except ValidationError:
        raise _invalid(path, number, line) from None


class _ExpectedSteps:
    """:func:`attach_expected` one record at a time: the run's suites are loaded at the first record
    that names expected tools without their steps."""

    def __init__(self, run: RunFolder) -> None:
        self.run = run
        self.steps: dict[str, list[dict[str, Any]]] | None = None

    def wanted(self, detail: Any) -> bool:
        return (
            self.run.header is not None
            and isinstance(detail, dict)
            and not detail.get("expected")
            and bool(detail.get("expected_tools") or self.steps)
        )

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        if self.steps is None:
            self.steps = {}
            suite_steps(self.run, self.steps)
        return self.steps

    def attach(self, detail: dict[str, Any]) -> bool:
        """Attach the case's steps to the line's JSON; whether there were any."""
        steps = self._load().get(str(detail.get("key")))
        if steps is None:
            return False
        detail["expected"] = [dict(step) for step in steps]
        return True

    def attach_record(self, record: CaseRecord) -> None:
        if self.run.header is not None and not record.expected and (record.expected_tools or self.steps):
            steps = self._load().get(record.key)
            if steps is not None:
                record.expected = [dict(step) for step in steps]
