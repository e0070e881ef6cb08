"""Running a sweep: every cell in turn, each an ordinary run in ``<sweep>/cells/<cell-id>/``.

A cell that fails (an endpoint down, a fatal provider error, a bug) is marked ``failed`` in the
index with its one-line reason, and the sweep goes on with the next cell. ``resume`` skips the
cells that are ``done`` and resumes the run folder of every other one (the engine re-runs error
records) or starts it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbench.errors import CallbenchError, UserError
from callbench.harness.config import ProgressMode, RunConfig
from callbench.harness.engine import run_async
from callbench.harness.runfolder import RUN_FILE
from callbench.harness.sweep.index import (
    FINISHED,
    INDEX_FILE,
    SOURCE_FILE,
    cell_entry,
    new_index,
    now,
    read_index,
    run_finished,
    write_index,
)
from callbench.harness.sweep.spec import Cell, SweepSpec, resume_spec

ObserversFor = Callable[[RunConfig], list[Any]]


class SweepIncompleteError(CallbenchError):
    """Some cells failed or hold error records (the CLI exits 1 after one line per cell)."""


@dataclass(frozen=True)
class SweepOptions:
    """Where and how the cells run; none of it changes a verdict."""

    backend: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None
    progress: ProgressMode = "quiet"


def start_folder(spec: SweepSpec, folder: Path) -> dict[str, Any]:
    """Create a new sweep folder: the sweep file's copy and an index with every cell pending."""
    if (folder / INDEX_FILE).exists():
        raise UserError(
            f"{folder} already holds a sweep; pass --resume {folder} to finish it, or another --out"
        )
    if folder.exists() and any(folder.iterdir()):
        raise UserError(f"{folder} is not empty and holds no sweep; choose another --out")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SOURCE_FILE).write_text(spec.text, encoding="utf-8")
    index = new_index(spec)
    write_index(folder, index)
    return index


def reopen_folder(spec: SweepSpec, folder: Path) -> dict[str, Any]:
    """An existing sweep's index, once ``spec`` is known to describe the same cells (options that do
    not change a verdict, such as concurrency, may differ: the index and the copy take the new ones)."""
    index = read_index(folder)
    resume_spec(spec, index)
    entries = {entry["id"]: entry for entry in index["cells"]}
    for cell in spec.cells:
        entries[cell.id]["identity"] = cell.identity()
    index["sweep"] = spec.content
    (folder / SOURCE_FILE).write_text(spec.text, encoding="utf-8")
    write_index(folder, index)
    return index


async def run_sweep(
    spec: SweepSpec,
    folder: Path,
    *,
    resume: bool = False,
    options: SweepOptions | None = None,
    observers_for: ObserversFor | None = None,
    announce: Callable[[Cell, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run (or finish) every cell of ``spec`` in ``folder``; returns the final index.

    Args:
        resume: Continue the sweep in ``folder`` (refused if its cells differ from ``spec``'s).
        observers_for: The progress observers of a cell's run (the CLI's display).
        announce: Called before each cell runs and after it ends (with its index entry).
    """
    options = options or SweepOptions()
    with backend_session(options):  # before the folder: a dead --ray-address is one line, nothing written
        index = reopen_folder(spec, folder) if resume else start_folder(spec, folder)
        entries = {entry["id"]: entry for entry in index["cells"]}
        for cell in spec.cells:
            entry = entries.setdefault(cell.id, cell_entry(cell))
            if entry["status"] in FINISHED and run_finished(folder / entry["folder"]):
                continue
            await _run_cell(cell, entry, folder, index, options, observers_for, announce)
    return index


def backend_session(options: SweepOptions) -> AbstractContextManager[Any]:
    """One Ray session for the whole sweep (``--backend ray``): every cell's run reuses it instead of
    starting and stopping its own (about 10 s each); nothing for the local backend."""
    if options.backend != "ray":
        return nullcontext()
    from callbench.harness.backends.ray_session import ray_session

    return ray_session(options.ray_address)


async def _run_cell(
    cell: Cell,
    entry: dict[str, Any],
    folder: Path,
    index: dict[str, Any],
    options: SweepOptions,
    observers_for: ObserversFor | None,
    announce: Callable[[Cell, dict[str, Any]], None] | None,
) -> None:
    run_dir = folder / entry["folder"]
    entry.update(status="running", error=None, started_at=now())
    write_index(folder, index)
    if announce is not None:
        announce(cell, entry)
    try:
        config = cell.config(
            run_dir,
            resume=(run_dir / RUN_FILE).exists(),
            backend=options.backend,
            ray_address=options.ray_address,
            ray_workers=options.ray_workers,
            progress=options.progress,
        )
        result = await run_async(config, observers_for(config) if observers_for else [])
    except Exception as exc:  # noqa: BLE001 - one failed cell must not end the sweep
        what = str(exc).splitlines()[0] if str(exc) else ""
        label = "" if isinstance(exc, CallbenchError) else f"{type(exc).__name__}: "
        entry.update(status="failed", error=f"{label}{what}" or type(exc).__name__)
    else:
        summary = result.summary
        entry.update(
            n_records=int(summary.get("n_records") or 0),
            n_completed=int(summary.get("n_completed") or 0),
            n_error=int(summary.get("n_error") or 0),
        )
        entry["status"] = "incomplete" if entry["n_error"] else "done"
    entry["finished_at"] = now()
    write_index(folder, index)
    if announce is not None:
        announce(cell, entry)


def failures(index: dict[str, Any]) -> list[str]:
    """One line per cell that did not finish cleanly (failed, incomplete, or never run)."""
    lines = []
    for entry in index["cells"]:
        status = entry.get("status")
        if status == "failed":
            lines.append(f"cell {entry['id']}: failed: {entry.get('error')}")
        elif status == "incomplete":
            lines.append(
                f"cell {entry['id']}: {entry['n_error']} error record(s) of {entry['n_records']} "
                "(infrastructure failures; --resume re-runs them)"
            )
        elif status != "done":
            lines.append(f"cell {entry['id']}: {status}")
    return lines
