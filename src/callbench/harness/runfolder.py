"""Run folders on disk: ``run.json``, ``records.jsonl`` (appended as cases finish) and ``summary.json``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from callbench.errors import UserError
from callbench.types.records import CaseRecord, RunHeader

RUN_FILE, RECORDS_FILE, SUMMARY_FILE = "run.json", "records.jsonl", "summary.json"


def write_header(run_dir: Path, header: RunHeader) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / RUN_FILE).write_text(header.model_dump_json(indent=2), encoding="utf-8")


def read_header(run_dir: Path) -> RunHeader:
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: not a run folder (no {RUN_FILE})")
    try:
        return RunHeader.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise UserError(f"{path}: invalid run header: {exc.errors()[0]['msg']}") from None


def iter_records(run_dir: Path) -> Iterator[CaseRecord]:
    """Stream records; a torn last line (a killed run) is ignored, any other bad line is an error."""
    path = Path(run_dir) / RECORDS_FILE
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as handle:
        lines = handle.readlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield CaseRecord.model_validate_json(line)
        except ValidationError as exc:
            if lineno == len(lines) and not line.endswith("\n"):
                return  # interrupted while writing; resume re-runs that case
            raise UserError(f"{path}:{lineno}: invalid record: {exc.errors()[0]['msg']}") from None


def read_records(run_dir: Path) -> list[CaseRecord]:
    return list(iter_records(run_dir))


def slim_record(record: CaseRecord) -> CaseRecord:
    """The record made light enough to keep thousands in memory (modified in place and returned).

    Drops what summaries never read: results, argument texts, verdict details and warnings, the
    instruction, the offered-tool list and the expected steps (kept on disk in ``records.jsonl``).
    """
    record.instruction = ""
    record.offered_tools = []
    record.expected = []
    for call in record.trace.calls:
        call.result = None
        call.arguments_raw = ""
        call.arguments = {} if call.arguments is not None else None
    for round_info in record.trace.rounds:
        round_info.text = round_info.text[:200]
    record.trace.final_state = None
    record.trace.final_text = record.trace.final_text[:200]
    for verdict in record.verdicts.values():
        verdict.details = {}
        verdict.warnings = []
    return record


def latest_records(records: list[CaseRecord]) -> list[CaseRecord]:
    """One record per (key, trial): the last written wins (a resumed error overrides the earlier one)."""
    latest: dict[tuple[str, int], CaseRecord] = {}
    for record in records:
        latest[record.record_id] = record
    return list(latest.values())


class RecordWriter:
    """Appends records and flushes each one, so a killed run loses only cases in flight."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / RECORDS_FILE
        self._repair_torn_tail()
        self.handle = self.path.open("a", encoding="utf-8")

    def _repair_torn_tail(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            self.path.write_bytes(data[: data.rfind(b"\n") + 1])

    def write(self, record: CaseRecord) -> None:
        self.handle.write(record.model_dump_json() + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    (Path(run_dir) / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")


def read_summary(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / SUMMARY_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: no {SUMMARY_FILE} (run `callbench score {run_dir}` to rebuild it)")
    return json.loads(path.read_text(encoding="utf-8"))
