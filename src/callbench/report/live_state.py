"""The run observer behind the live dashboard: ``RUN_DIR/live.json``, the cases in flight.

Kept apart from :mod:`callbench.report.live` (the server, which loads the page renderer and its
template engine) so that a run pays only for this small writer at start-up.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.harness.runfolder import LIVE_FILE
from callbench.types.records import CaseRecord, RunHeader

if TYPE_CHECKING:
    from callbench.types.case import Case
    from callbench.types.trace import RoundInfo, TraceCall

WRITE_INTERVAL_S = 0.25
"""Seconds between two writes of ``live.json`` while cases run (the first and the last are forced)."""


class LiveStateWriter:
    """Run observer that mirrors the cases in flight into ``live.json`` (atomic, throttled writes)."""

    def __init__(self, run_dir: Path | None, *, runs_root: Path | None = None) -> None:
        self.path = Path(run_dir) / LIVE_FILE if run_dir is not None else None
        self.runs_root = runs_root
        self.state: dict[str, Any] = {"total": 0, "done": 0, "current": [], "finished": False}
        self._current: dict[str, dict[str, Any]] = {}
        self._last_write = 0.0

    def on_run_start(self, header: RunHeader, total: int) -> None:
        run_id = getattr(header, "run_id", None)
        if self.path is None and self.runs_root is not None and run_id:
            # The engine names the folder after the run id when no --out is given.
            self.path = Path(self.runs_root) / str(run_id) / LIVE_FILE
        # started_at lets the page estimate the time left from done/total.
        self.state.update(total=total, done=0, finished=False, run_id=run_id, started_at=time.time())
        self._write(force=True)

    def on_case_start(self, case: Case, trial: int, offered: list[str]) -> None:
        key = f"{getattr(case, 'suite', '')}:{getattr(case, 'id', '')}"
        self._current[f"{key}#{trial}"] = {
            "key": key,
            "trial": trial,
            "offered": list(offered),
            "rounds": [],
            "started_at": time.time(),
        }
        self._write()

    def on_round(self, case: Case, round_info: RoundInfo, calls: list[TraceCall]) -> None:
        key = f"{getattr(case, 'suite', '')}:{getattr(case, 'id', '')}"
        # on_round carries no trial number: attach to the latest started trial of the case.
        entries = [e for e in self._current.values() if e["key"] == key]
        if not entries:
            return
        badges = [
            {"tool": c.tool, "ok": c.execution in ("ok", "skipped", "not_executed") and c.schema_valid}
            for c in calls
        ]
        entries[-1]["rounds"].append({"index": round_info.index, "calls": badges})
        self._write()

    def on_case_end(self, record: CaseRecord) -> None:
        self._current.pop(f"{record.key}#{record.trial}", None)
        self.state["done"] += 1
        self._write()

    def on_run_end(self, summary: dict[str, Any]) -> None:
        self._current.clear()
        self.state["finished"] = True
        self._write(force=True)

    def _write(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.path is None or (not force and now - self._last_write < WRITE_INTERVAL_S):
            return
        self._last_write = now
        self.state["current"] = list(self._current.values())
        self.state["updated_at"] = time.time()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.state, default=str), encoding="utf-8")
        os.replace(tmp, self.path)  # readers never see a half-written file
