"""Offline re-scoring of a stored run: traces are the evidence, no model is called."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.harness.engine import score_case
from callbench.harness.prepare import build_scorers
from callbench.harness.runfolder import (
    read_header,
    read_records,
    rewrite_records,
    set_aside_torn_tail,
    write_summary,
)
from callbench.harness.runlock import acquire
from callbench.harness.summary_stream import stream_summary
from callbench.suites.resolve import load_suite
from callbench.types.records import CaseRecord
from callbench.types.summary import Summary


def rescore(run_dir: Path, tiers: tuple[str, ...] = (), data: str | Path | None = None) -> Summary:
    """Re-apply scorers to every completed record; updates ``records.jsonl`` and ``summary.json``.

    Records of any schema version the reader accepts are re-scored (the records' format has not
    changed since schema 1); the summary is written in the current summary schema.

    A torn last line is moved to ``records.torn.jsonl`` (see
    :func:`~callbench.harness.runfolder.set_aside_torn_tail`), never dropped unsaid.

    Records whose instruction changed since the run (prompt hash mismatch) are refused: that output
    answers another question, so the model must be re-run instead. A run folder that a live run is
    still writing is refused too (:mod:`callbench.harness.runlock`).
    """
    header = read_header(run_dir)
    lock = acquire(Path(run_dir), "score")  # a run still writing the folder is refused, not truncated
    try:
        return _rescore_locked(Path(run_dir), header, tiers, data)
    finally:
        lock.release()


def _rescore_locked(run_dir: Path, header: Any, tiers: tuple[str, ...], data: str | Path | None) -> Summary:
    # records.jsonl is rewritten below: a torn last line (a killed run) is set aside first, byte for
    # byte, with a warning naming the file, the line and the side file.
    set_aside_torn_tail(Path(run_dir), why="re-scoring")
    records = read_records(run_dir)
    suites = {}
    # The suite is rebuilt as the run built it: its --option values (a τ² split, a judge) included.
    options = dict(header.options.get("suite_options") or {})
    registry = header.options.get("registry")
    for info in header.suites:
        suite = load_suite(info.spec, data=data or info.data, registry=registry, **options)
        suites[info.name] = (suite, {c.key: c for c in suite.cases}, build_scorers(suite, tiers))
    updated = asyncio.run(_rescore_all(records, suites))  # one event loop for every record
    rewrite_records(run_dir, updated)
    scorers = {name: s for _, _, table in suites.values() for name, s in table.items()}
    summary = stream_summary(run_dir, header, scorers)  # the engine's own summary, from the rewritten file
    write_summary(run_dir, summary)
    return summary


async def _rescore_all(records: list[CaseRecord], suites: dict[str, Any]) -> list[CaseRecord]:
    return [await _rescore_record(r, suites) for r in records]


async def _rescore_record(record: CaseRecord, suites: dict[str, Any]) -> CaseRecord:
    if record.status != "completed":
        return record
    if record.suite not in suites:
        raise UserError(f"record {record.key}: suite {record.suite!r} is not in run.json")
    suite, cases, scorers = suites[record.suite]
    case = cases.get(record.key)
    if case is None:
        raise UserError(f"record {record.key}: case no longer exists in suite {record.suite!r}")
    if case.prompt_sha256() != record.prompt_sha256:
        raise UserError(
            f"record {record.key}: the instruction changed since the run; re-run the model "
            "instead of re-scoring stale output"
        )
    verdicts, error = await score_case(scorers, case, record.trace)
    if error is not None:
        raise UserError(f"record {record.key}: scorer failed: {error.message}")
    record.verdicts.update(verdicts)
    return record
