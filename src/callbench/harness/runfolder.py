"""Run folders on disk: ``run.json``, ``records.jsonl`` (appended as cases finish), ``summary.json``
and, while a run goes, ``live.json``.

This module is the one reader (and writer) of run folders: the engine, re-scoring, ``show``,
``compare``, the reports, the live view and ``load_records`` all read typed records through it.
:func:`read_run` loads a whole folder; :class:`RecordTail` follows ``records.jsonl`` as it grows.
"""

from __future__ import annotations

import gc
import json
import os
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from callbench.errors import UserError
from callbench.secrets import blank_url_credentials
from callbench.types.fields import set_fields
from callbench.types.jsoncodec import load_model, model_json, model_json_bytes
from callbench.types.records import CaseRecord, RunHeader
from callbench.types.summary import Summary

RUN_FILE, RECORDS_FILE, SUMMARY_FILE = "run.json", "records.jsonl", "summary.json"
TORN_FILE = "records.torn.jsonl"
"""Where a torn last line of ``records.jsonl`` (a run killed mid-write) is kept, byte for byte, when
a resume or a re-score drops it from ``records.jsonl``: one torn tail per line."""
LIVE_FILE = "live.json"
"""The cases in flight of a running run (written by the live-state observer, read by ``callbench view``)."""


class TornRecordWarning(UserWarning):
    """A torn last line of ``records.jsonl`` was skipped (or moved to :data:`TORN_FILE`)."""

    one_line = True
    """The CLI prints it as one ``callbench: warning:`` line."""


def _first_error(exc: ValidationError) -> str:
    """``field.path: message`` of a validation error's first problem."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


@contextmanager
def bulk_load() -> Iterator[None]:
    """Pause the cyclic garbage collector while many records are built.

    Thousands of new model objects trigger repeated full collections that scan every record loaded
    so far (10,000 records read in 1.3 s instead of 0.5 s). Records hold no reference cycles, so
    reference counting still frees them; the collector resumes as it was.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- run.json ---------------------------------------------------------------------------------


def write_header(run_dir: Path, header: RunHeader) -> None:
    """Write ``run.json`` atomically: a run killed meanwhile leaves the old header or the new one."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / (RUN_FILE + ".tmp")
    # A password in a base URL is not stored (resuming asks for the model again, prepare.resume_config).
    tmp.write_text(blank_url_credentials(header.model_dump_json(indent=2)), encoding="utf-8")
    os.replace(tmp, run_dir / RUN_FILE)


def read_header(run_dir: Path) -> RunHeader:
    """The run's header.

    Raises:
        UserError: when ``run.json`` is missing or invalid (the message names the file and field).
    """
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: not a run folder (no {RUN_FILE})")
    try:
        return RunHeader.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise UserError(f"{path}: invalid run header: {_first_error(exc)}") from None


# --- records.jsonl ----------------------------------------------------------------------------


class RecordTail:
    """Incremental reader of ``records.jsonl``: each read returns only the records appended since.

    A last line without its newline is a record still being written: it is left for the next
    read, unless the read is ``final`` (the run is over), when it is parsed if it is whole and
    skipped if it is torn (a killed run; resume re-runs that case) with a :class:`TornRecordWarning`
    naming the file and line. Any other bad line is an error.
    """

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = Path(path)
        self.offset = offset
        """Byte offset just past the last line read."""
        self._line = 0
        self.skipped: list[int] = []
        """Line numbers of torn last lines skipped by a ``final`` read."""

    def iter_new(self, *, final: bool = False) -> Iterator[tuple[int, CaseRecord]]:
        """Each new record with the byte offset just past its line, parsed one at a time."""
        if not self.path.is_file():
            return
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            for raw in handle:
                complete = raw.endswith(b"\n")
                if not complete and not final:
                    return  # still being written: read it next time
                self._line += 1
                if raw.strip():
                    record = self._parse(raw, torn_ok=not complete)
                    if record is None:
                        return
                    self.offset += len(raw)
                    yield self.offset, record
                else:
                    self.offset += len(raw)

    def read_new(self, *, final: bool = False) -> list[CaseRecord]:
        """The records appended since the last read."""
        return [record for _end, record in self.iter_new(final=final)]

    def read_new_with_offsets(self) -> list[tuple[int, CaseRecord]]:
        """Like :meth:`read_new`, each record paired with the byte offset just past its line."""
        return list(self.iter_new())

    def _parse(self, raw: bytes, *, torn_ok: bool) -> CaseRecord | None:
        try:
            return load_model(CaseRecord, raw)
        except ValidationError as exc:
            if torn_ok:
                self.skipped.append(self._line)
                warnings.warn(
                    TornRecordWarning(
                        f"{self.path}:{self._line}: skipped a torn last line ({len(raw)} bytes, a record "
                        "cut off when the run was killed); the file is unchanged; "
                        "`callbench run --resume` re-runs that case"
                    ),
                    stacklevel=2,
                )
                return None
            raise UserError(f"{self.path}:{self._line}: invalid record: {_first_error(exc)}") from None


def iter_records(run_dir: Path) -> Iterator[CaseRecord]:
    """Stream every record; a torn last line (a killed run) is ignored, any other bad line is an error."""
    for _end, record in RecordTail(Path(run_dir) / RECORDS_FILE).iter_new(final=True):
        yield record


def read_records(run_dir: Path) -> list[CaseRecord]:
    """Every record of the run, superseded ones included (see :func:`latest_records`)."""
    with bulk_load():
        return list(iter_records(run_dir))


def latest_records(records: Iterable[CaseRecord]) -> list[CaseRecord]:
    """One record per (key, trial): the last written wins (a resumed error overrides the earlier one)."""
    latest: dict[tuple[str, int], CaseRecord] = {}
    for record in records:
        latest[record.record_id] = record
    return list(latest.values())


def slim_record(record: CaseRecord) -> CaseRecord:
    """The record made light enough to keep thousands in memory (modified in place and returned).

    Drops what summaries never read: results, argument texts, verdict details and warnings, the
    instruction, the offered-tool list and the expected steps (kept on disk in ``records.jsonl``).
    """
    set_fields(record, instruction="", offered_tools=[], expected=[])
    for call in record.trace.calls:
        set_fields(call, result=None, arguments_raw="", arguments={} if call.arguments is not None else None)
    for round_info in record.trace.rounds:
        set_fields(round_info, text=round_info.text[:200])
    set_fields(record.trace, final_state=None, final_text=record.trace.final_text[:200])
    for verdict in record.verdicts.values():
        set_fields(verdict, details={}, warnings=[])
    return record


def set_aside_torn_tail(run_dir: Path, *, why: str) -> Path | None:
    """Move a torn last line of ``records.jsonl`` (no newline, not a whole record) to
    :data:`TORN_FILE`, so the file can be appended to or rewritten without losing those bytes.

    Says what was moved in one :class:`TornRecordWarning` (file, line, size, where the bytes went);
    ``why`` names the command. Returns the side file, or ``None`` when the last line was whole.
    """
    path = Path(run_dir) / RECORDS_FILE
    if not path.is_file():
        return None
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    try:
        load_model(CaseRecord, tail)
    except ValidationError:
        pass
    else:  # a whole record whose newline was cut: complete the line instead
        with path.open("ab") as handle:
            handle.write(b"\n")
        return None
    side = Path(run_dir) / TORN_FILE
    with side.open("ab") as handle:  # first the copy, flushed to disk; only then the cut
        handle.write(tail + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.truncate(path, start)
    line = data.count(b"\n", 0, start) + 1
    warnings.warn(
        TornRecordWarning(
            f"{path}:{line}: {why} set aside a torn last line ({len(tail)} bytes, a record cut off when "
            f"the run was killed); its bytes are kept in {side}; `callbench run --resume` re-runs that case"
        ),
        stacklevel=2,
    )
    return side


class RecordWriter:
    """Appends records, each in one unbuffered write, so a killed run loses only cases in flight."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / RECORDS_FILE
        set_aside_torn_tail(Path(run_dir), why="resuming")
        # Unbuffered bytes: the serializer's UTF-8 goes to the file as is (no str round trip, no
        # text-layer flush), the same bytes model_dump_json() would give.
        self.handle = self.path.open("ab", buffering=0)

    def write(self, record: CaseRecord) -> None:
        self.write_json(model_json_bytes(record))

    def write_json(self, line: bytes) -> None:
        """Append one record already serialised (its JSON, without the line end)."""
        data = memoryview(line + b"\n")
        while data:  # a raw write may take fewer bytes than given (a signal, a full pipe)
            data = data[self.handle.write(data) or 0 :]

    def close(self) -> None:
        self.handle.close()


def rewrite_records(run_dir: Path, records: Iterable[CaseRecord]) -> None:
    """Replace ``records.jsonl`` atomically (re-scoring): readers see the old file or the new one."""
    path = Path(run_dir) / RECORDS_FILE
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(model_json(record) + "\n")
    os.replace(tmp, path)


# --- summary.json -----------------------------------------------------------------------------


def write_summary(run_dir: Path, summary: Summary) -> None:
    text = blank_url_credentials(json.dumps(summary.to_json_dict(), indent=2))
    (Path(run_dir) / SUMMARY_FILE).write_text(text, encoding="utf-8")


def read_summary(run_dir: Path) -> Summary:
    """The run's summary, migrated to the current schema when an older version wrote it.

    Raises:
        UserError: when ``summary.json`` is missing or invalid (the message names the file and field).
    """
    path = Path(run_dir) / SUMMARY_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: no {SUMMARY_FILE} (run `callbench score {run_dir}` to rebuild it)")
    return _load_summary(path)


def _load_summary(path: Path) -> Summary:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: expected a JSON object")
    try:
        return Summary.from_json_dict(raw)
    except ValidationError as exc:
        raise UserError(f"{path}: invalid summary: {_first_error(exc)}") from None
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from None


# --- the whole folder -------------------------------------------------------------------------


@dataclass
class RunFolder:
    """One run as readers see it: header, the latest record of each (case, trial), the summary."""

    path: Path
    header: RunHeader | None
    """``None`` only for a folder read with ``allow_partial`` before the run wrote ``run.json``."""
    records: list[CaseRecord]
    summary: Summary | None = None
    offset: int = 0
    """Byte offset in ``records.jsonl`` just past the last complete line read."""
    label: str = field(default="")

    def __post_init__(self) -> None:
        if not self.label:
            self.label = run_label(self.header, self.path)


def run_label(header: RunHeader | None, path: Path) -> str:
    """Short human label: the model and the run folder's name."""
    model = header.model if header is not None else ""
    return f"{model} ({path.name})" if model else path.name


def read_run(run_dir: str | Path, *, allow_partial: bool = False) -> RunFolder:
    """Load a run folder: header, latest records and (when present) the summary.

    Args:
        run_dir: A folder written by ``callbench run``.
        allow_partial: Accept a run that has not written ``run.json`` or ``records.jsonl`` yet
            (the live view starts before the run does).

    Raises:
        UserError: when the folder or its files are missing or malformed.
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"{path}: no such run directory")
    header = None if allow_partial and not (path / RUN_FILE).exists() else read_header(path)
    if not allow_partial and not (path / RECORDS_FILE).exists():
        raise UserError(f"{path / RECORDS_FILE}: missing (the run wrote no records)")
    tail = RecordTail(path / RECORDS_FILE)
    with bulk_load():
        records = latest_records(record for _end, record in tail.iter_new(final=not allow_partial))
    summary = _load_summary(path / SUMMARY_FILE) if (path / SUMMARY_FILE).is_file() else None
    return RunFolder(path=path, header=header, records=records, summary=summary, offset=tail.offset)


def read_live_state(run_dir: Path) -> dict[str, Any] | None:
    """``live.json`` (cases in flight), or ``None`` when absent or caught mid-replace."""
    try:
        value = json.loads((Path(run_dir) / LIVE_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None  # absent, or replaced while read on some filesystems: the next poll reads it
    return value if isinstance(value, dict) else None
