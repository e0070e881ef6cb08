"""On-disk run records: ``run.json`` (RunHeader), ``records.jsonl`` (CaseRecord lines), ``summary.json``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from callbench.errors import UserError
from callbench.harness.trace import Trace
from callbench.scoring.base import Verdict

SCHEMA_VERSION = 1
RUN_FILE, RECORDS_FILE, SUMMARY_FILE = "run.json", "records.jsonl", "summary.json"


class SuiteInfo(BaseModel):
    """What identifies a suite in a run."""

    name: str
    spec: str
    """The suite spec as given (``starter``, ``dag:n_core=5``, a path...)."""
    hash: str
    registry_hash: str
    prompt_template_hash: str
    n_cases: int
    source: str = ""
    data: str | None = None
    data_versions: dict[str, str] = Field(default_factory=dict)
    """Versions of external data the suite was built from (e.g. ``{"bfcl-eval": "2026.3.23"}``)."""
    notes: list[str] = Field(default_factory=list)
    """Load-time findings that change how verdicts read (see :mod:`callbench.suites.lint`)."""


class RunHeader(BaseModel):
    """``run.json``: everything needed to reproduce, resume and re-score the run."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    created_at: str
    callbench_version: str
    python_version: str
    model: str
    """The model string as given (``provider:model[@url]``)."""
    provider: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    """Generation settings (temperature 0, no streaming, no fallback...)."""
    harness_mode: str
    harness_assistance: dict[str, Any] = Field(default_factory=dict)
    suites: list[SuiteInfo] = Field(default_factory=list)
    scorers: dict[str, list[str]] = Field(default_factory=dict)
    """Suite name -> scorer names."""
    executor: str | None = None
    """Executor override (``None``: each suite's default)."""
    retrieval_k: int | str | None = None
    """``--k`` as given: a number, ``"all"``, or ``None`` (each suite's default, in ``suite_k``)."""
    suite_k: dict[str, int | None] = Field(default_factory=dict)
    """The k each suite actually used (``None``: every candidate tool)."""
    trials: int = 1
    options: dict[str, Any] = Field(default_factory=dict)
    """Engine options (concurrency, limits, cache...)."""


class ErrorInfo(BaseModel):
    """Why a case could not be completed (infrastructure, not model behaviour)."""

    type: str
    message: str


class CaseRecord(BaseModel):
    """One execution package: a line of ``records.jsonl``."""

    schema_version: int = SCHEMA_VERSION
    key: str
    """``suite:id``."""
    suite: str
    case_id: str
    category: str
    trial: int = 1
    status: Literal["completed", "error"] = "completed"
    error: ErrorInfo | None = None
    instruction: str = ""
    prompt_sha256: str = ""
    offered_tools: list[str] = Field(default_factory=list)
    expected_tools: list[list[str]] = Field(default_factory=list)
    expected: list[dict[str, Any]] = Field(default_factory=list)
    """The case's expected steps as run (argument DSL included), for reports and audits."""
    retrieval_recall: float | None = None
    harness_mode: str
    harness_assistance: dict[str, Any] = Field(default_factory=dict)
    trace: Trace = Field(default_factory=Trace)
    verdicts: dict[str, Verdict] = Field(default_factory=dict)
    template: str | None = None
    started_at: float = 0.0
    duration_ms: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def record_id(self) -> tuple[str, int]:
        return (self.key, self.trial)


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
