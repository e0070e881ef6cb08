"""Read a run directory (``run.json``, ``records.jsonl``, ``summary.json``) for reports.

Reports read plain dicts so they work on runs written by any version of the record models and
on runs still in progress (``records.jsonl`` may end in a half-written line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.errors import UserError

RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"
SUMMARY_FILE = "summary.json"
LIVE_FILE = "live.json"


@dataclass
class RunData:
    """One run as the report sees it."""

    path: Path
    header: dict[str, Any]
    records: list[dict[str, Any]]
    summary: dict[str, Any] | None = None
    offset: int = 0
    """Byte offset in records.jsonl just past the last complete line read."""
    label: str = field(default="")

    def __post_init__(self) -> None:
        if not self.label:
            self.label = run_label(self.header, self.path)


def run_label(header: dict[str, Any], path: Path) -> str:
    """Short human label: the model (or provider) and the run directory name."""
    model = header.get("model") or header.get("provider") or ""
    if isinstance(model, dict):
        model = model.get("name") or model.get("model") or ""
    return f"{model} ({path.name})" if model else path.name


class RecordTail:
    """Incremental reader of ``records.jsonl``: each call returns only the new complete lines."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        self._line = 0

    def read_new(self) -> list[dict[str, Any]]:
        """Records appended since the last call; a trailing partial line is left for later."""
        return [rec for _end, rec in self.read_new_with_offsets()]

    def read_new_with_offsets(self) -> list[tuple[int, dict[str, Any]]]:
        """Like :meth:`read_new`, each record paired with the byte offset just past its line."""
        if not self.path.exists():
            return []
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            chunk = fh.read()
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        out = []
        position = self.offset
        for raw in chunk[: end + 1].split(b"\n")[:-1]:
            self._line += 1
            position += len(raw) + 1
            if raw.strip():
                out.append((position, _parse_line(raw, self.path, self._line)))
        self.offset += end + 1
        return out


def _parse_line(raw: bytes, path: Path, line: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path.name}:{line}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise UserError(f"{path.name}:{line}: a record must be a JSON object")
    return value


def read_json(path: Path, *, required: bool) -> dict[str, Any] | None:
    """Parse a JSON object file; ``None`` when optional and absent."""
    if not path.exists():
        if required:
            raise UserError(f"{path}: missing (is this a callbench run directory?)")
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object")
    return value


def latest(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (key, trial): a resumed run appends a new record for a case that failed
    with an error before, and the last one written wins."""
    by_id: dict[tuple[Any, Any], dict[str, Any]] = {}
    for rec in records:
        by_id[(rec.get("key"), rec.get("trial"))] = rec
    return list(by_id.values()) if len(by_id) < len(records) else records


def read_run(run_dir: str | Path, *, allow_partial: bool = False) -> RunData:
    """Load a run directory.

    Args:
        run_dir: Directory written by ``callbench run``.
        allow_partial: Accept a run whose ``run.json`` is not written yet (live view).

    Raises:
        UserError: when the directory or its files are missing or malformed.
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"{path}: no such run directory")
    header = read_json(path / RUN_FILE, required=not allow_partial) or {}
    tail = RecordTail(path / RECORDS_FILE)
    if not (path / RECORDS_FILE).exists() and not allow_partial:
        raise UserError(f"{path / RECORDS_FILE}: missing (the run wrote no records)")
    records = latest(tail.read_new())
    summary = read_json(path / SUMMARY_FILE, required=False)
    return RunData(path=path, header=header, records=records, summary=summary, offset=tail.offset)


def attach_expected(run: RunData) -> list[str]:
    """Give each record its case's expected steps (tool + arguments), read from the run's suites.

    Records only name the expected tools; the report's argument diff needs the arguments too.
    A suite is used only when it still loads with the hash recorded in ``run.json``, so the
    expectations shown are the ones the run was scored against.

    Returns:
        Notes on suites that could not be used (shown nowhere else; the report still works).
    """
    from callbench.suites.resolve import load_suite

    if all(r.get("expected") or not r.get("expected_tools") for r in run.records):
        return []  # records written since records carry their expected steps need no suite
    steps: dict[str, list[dict[str, Any]]] = {}
    notes = []
    for info in run.header.get("suites") or []:
        spec = str(info.get("spec") or info.get("name") or "")
        try:
            suite = load_suite(spec, data=info.get("data"))
        except Exception as exc:  # noqa: BLE001 (any loader failure only costs the argument diff)
            notes.append(f"{spec}: not loaded ({exc})")
            continue
        if info.get("hash") and suite.hash != info["hash"]:
            notes.append(f"{spec}: changed since the run (hash differs); expected arguments not shown")
            continue
        for case in suite.cases:
            steps[f"{suite.name}:{case.id}"] = [s.model_dump(mode="json") for s in case.expected]
    for rec in run.records:
        key = str(rec.get("key"))
        if "expected" not in rec and key in steps:
            rec["expected"] = steps[key]
    return notes
