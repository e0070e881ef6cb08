"""The sweep folder's index, ``sweep.json``: the sweep as parsed, its hash, and every cell's state.

Written atomically (a temporary file, then ``os.replace``) whenever a cell starts or ends, so a
killed sweep leaves an index that says which cells finished.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from callbench.errors import UserError
from callbench.harness.runfolder import RECORDS_FILE, SUMMARY_FILE
from callbench.harness.sweep.spec import CELLS_FOLDER, Cell, SweepSpec

INDEX_FILE = "sweep.json"
SOURCE_FILE = "sweep.yaml"
INDEX_SCHEMA = 1
CellStatus = Literal["pending", "running", "done", "incomplete", "failed"]
"""``done``: every record completed; ``incomplete``: the run finished with error records (a resume
re-runs them); ``failed``: the run stopped on an infrastructure failure (``error`` says which)."""
FINISHED: tuple[CellStatus, ...] = ("done",)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def is_sweep_folder(path: Path) -> bool:
    """Whether ``path`` is a sweep folder (holds ``sweep.json``)."""
    return (path / INDEX_FILE).is_file()


def cell_entry(cell: Cell) -> dict[str, Any]:
    """A cell's index entry before it runs."""
    return {
        "id": cell.id,
        "label": cell.label,
        "model": cell.model,
        "agent": cell.agent,
        "mode": cell.mode,
        "suites": list(cell.suites),
        "trials": cell.trials,
        "settings": cell.settings,
        "folder": f"{CELLS_FOLDER}/{cell.id}",
        "status": "pending",
        "n_records": 0,
        "n_completed": 0,
        "n_error": 0,
        "error": None,
        "identity": cell.identity(),
    }


def new_index(spec: SweepSpec) -> dict[str, Any]:
    """The index of a sweep that has not run yet: every cell pending."""
    return {
        "schema_version": INDEX_SCHEMA,
        "name": spec.name,
        "source": str(spec.file),
        "hash": spec.hash,
        "created_at": now(),
        "updated_at": now(),
        "sweep": spec.content,
        "cells": [cell_entry(cell) for cell in spec.cells],
    }


def write_index(folder: Path, index: dict[str, Any]) -> None:
    """Replace ``sweep.json`` atomically: readers see the old index or the new one, never half."""
    folder.mkdir(parents=True, exist_ok=True)
    index["updated_at"] = now()
    tmp = folder / (INDEX_FILE + ".tmp")
    tmp.write_text(json.dumps(index, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, folder / INDEX_FILE)


def read_index(folder: Path) -> dict[str, Any]:
    """``sweep.json`` of a sweep folder; one line when it is missing or unreadable."""
    path = folder / INDEX_FILE
    if not folder.is_dir():
        raise UserError(f"no such sweep folder: {folder}")
    if not path.is_file():
        raise UserError(f"{folder}: not a sweep folder (no {INDEX_FILE})")
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: unreadable sweep index: {exc}") from None
    if not isinstance(index, dict) or not isinstance(index.get("cells"), list):
        raise UserError(f"{path}: not a sweep index (no 'cells' list)")
    return index


def latest_states(run_dir: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """(key, trial) -> (suite, status) of the latest record of each, read from ``records.jsonl``
    field by field (no record model is built; a torn last line is skipped, as every reader does)."""
    latest: dict[tuple[str, int], tuple[str, str]] = {}
    path = run_dir / RECORDS_FILE
    if not path.is_file():
        return latest
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                ident = (str(record.get("key")), int(record.get("trial") or 1))
                latest[ident] = (str(record.get("suite")), str(record.get("status")))
    return latest


def run_finished(run_dir: Path) -> bool:
    """Whether a cell's run folder holds a finished run: a summary, as many latest records as it
    counted, none of them an error. A folder edited since (records deleted, an error record written)
    is not finished, whatever the index says."""
    try:
        summary = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    states = latest_states(run_dir)
    errors = sum(1 for _suite, status in states.values() if status == "error")
    return (
        bool(states) and not errors and len(states) == summary.get("n_records") and not summary.get("n_error")
    )


def cell_folders(folder: Path, index: dict[str, Any] | None = None) -> list[Path]:
    """The run folders of the sweep's cells that hold a run (``run.json``), in the index's order."""
    index = index if index is not None else read_index(folder)
    found = [folder / str(entry.get("folder") or "") for entry in index["cells"]]
    return [path for path in found if (path / "run.json").is_file()]
