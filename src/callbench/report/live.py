"""Live dashboard: ``callbench view RUN_DIR`` serves the report on 127.0.0.1 and follows the run.

Two halves:

* :class:`~callbench.report.live_state.LiveStateWriter`, a run observer, keeps ``RUN_DIR/live.json``
  current: the cases in flight and the badges of their rounds so far (records.jsonl only holds
  finished cases).
* :class:`LiveServer` (stdlib ``http.server``) serves the dashboard page, ``/api/update``, which
  returns the rows of the records appended since the client's byte offset, fresh statistics,
  live.json and the run's progress, and ``/api/record?key=K&trial=T``, the whole record (with its
  ``final_state``) that the case panel asks for when it opens.

The run folder may not exist yet: the server waits for it and picks the run up when it appears.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from callbench.errors import UserError
from callbench.harness.runfolder import (
    LIVE_FILE,
    RECORDS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    RecordTail,
    RunFolder,
    bulk_load,
    latest_records,
    read_header,
    read_live_state,
    run_label,
)
from callbench.report.breakdowns import breakdowns_payload
from callbench.report.fingerprints import failures_payload
from callbench.report.html import render_html
from callbench.report.local_server import LocalOnlyHandler, LocalServer
from callbench.report.payload import (
    build_payload,
    compute_statistics,
    record_payload,
    record_row,
    statistics_payload,
)
from callbench.types.records import CaseRecord, RunHeader

if TYPE_CHECKING:
    pass

BREAKDOWN_INTERVAL_S = 5.0
"""Seconds between recomputations of the live page's breakdown tables while records arrive."""


class RunFollower:
    """Server-side view of a growing run: its typed records so far, with the byte offset of each."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.tail = RecordTail(run_dir / RECORDS_FILE)
        self.records: list[CaseRecord] = []
        self.ends: list[int] = []
        self._stats: tuple[int, dict[str, Any]] | None = None
        self._breakdowns: tuple[int, float, dict[str, Any]] | None = None
        self._failures: tuple[int, float, dict[str, Any]] | None = None
        self.lock = threading.Lock()

    def refresh(self) -> None:
        with self.lock, bulk_load():
            for end, record in self.tail.read_new_with_offsets():
                self.ends.append(end)
                self.records.append(record)

    def since(self, offset: int) -> list[dict[str, Any]]:
        """Rows of the records whose line ends after byte ``offset`` (the client has the ones before)."""
        with self.lock:
            start = bisect.bisect_right(self.ends, offset)
            return [record_row(r) for r in self.records[start:]]

    def record(self, key: str, trial: int) -> dict[str, Any] | None:
        """The whole latest record of ``key``'s trial ``trial`` (``final_state`` included), or ``None``."""
        with self.lock:
            for record in reversed(self.records):  # a resumed run's newer record comes later
                if record.key == key and record.trial == trial:
                    return record_payload(record)
        return None

    def statistics(self) -> dict[str, Any]:
        with self.lock:
            if self._stats is None or self._stats[0] != len(self.records):
                stats = compute_statistics(latest_records(self.records))
                self._stats = (len(self.records), statistics_payload(stats))
            return self._stats[1]

    def breakdowns(self) -> dict[str, Any]:
        """The page's breakdown tables of the records so far, recomputed when records arrived and at
        most every :data:`BREAKDOWN_INTERVAL_S` (they read every record; the page polls often)."""
        with self.lock:
            now = time.monotonic()
            cached = self._breakdowns
            stale = cached is None or (
                cached[0] != len(self.records) and now - cached[1] >= BREAKDOWN_INTERVAL_S
            )
            if stale:
                folder = RunFolder(self.run_dir, self.header(), latest_records(self.records))
                self._breakdowns = (len(self.records), now, breakdowns_payload([folder]))
            assert self._breakdowns is not None
            return self._breakdowns[2]

    def failures(self) -> dict[str, Any]:
        """The page's "Failures by tool" of the records so far, recomputed like :meth:`breakdowns`."""
        with self.lock:
            now = time.monotonic()
            cached = self._failures
            if cached is None or (cached[0] != len(self.records) and now - cached[1] >= BREAKDOWN_INTERVAL_S):
                folder = RunFolder(self.run_dir, self.header(), latest_records(self.records))
                self._failures = cached = (len(self.records), now, failures_payload([folder]))
            return cached[2]

    def live_state(self) -> dict[str, Any] | None:
        return read_live_state(self.run_dir)

    def header(self) -> RunHeader | None:
        """The run's header, or ``None`` before the run has written it."""
        return read_header(self.run_dir) if (self.run_dir / RUN_FILE).exists() else None


def update_payload(follower: RunFollower, offset: int) -> dict[str, Any]:
    """Body of ``/api/update``: rows of the new records after ``offset``, statistics, live state,
    the header (empty before ``run.json`` exists), the run's label and model, and its progress."""
    follower.refresh()
    header = follower.header()
    live = follower.live_state()
    return {
        "records": follower.since(offset),
        "offset": follower.tail.offset,
        "statistics": follower.statistics(),
        "breakdowns": follower.breakdowns(),
        "failures": follower.failures(),
        "live": live,
        # The page opened before run.json existed learns what is measured (model or agent) here.
        "header": header_payload_of(header),
        "run": {
            "label": run_label(header, follower.run_dir),
            "model": header.model if header is not None else None,
            "exists": follower.run_dir.is_dir(),
        },
        "progress": progress_of(live),
    }


def progress_of(live: dict[str, Any] | None) -> dict[str, Any] | None:
    """``n of total`` and what an ETA needs, from ``live.json`` (``None`` before the run wrote it).

    ``started_at``/``updated_at``/``now`` are epoch seconds (``now`` is the server's clock, so the
    page's estimate does not depend on the browser's); ``started_at`` is ``None`` for a run written
    by a version that did not record it.
    """
    if live is None:
        return None

    def number(name: str) -> float | None:
        value = live.get(name)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    return {
        "total": number("total"),
        "done": number("done"),
        "started_at": number("started_at"),
        "updated_at": number("updated_at"),
        "finished": bool(live.get("finished")),
        "now": time.time(),
    }


def header_payload_of(header: RunHeader | None) -> dict[str, Any]:
    """The run header's JSON for the page (empty before the run wrote it)."""
    return {} if header is None else header.model_dump(mode="json", exclude_unset=True, fallback=str)


def _handler(follower: RunFollower, title: str) -> type[BaseHTTPRequestHandler]:
    class Handler(LocalOnlyHandler):
        def do_GET(self) -> None:  # http.server's naming
            url = urlsplit(self.path)
            if url.path in ("/", "/index.html"):
                follower.refresh()
                # The page starts empty and asks /api/update for every record from offset 0.
                page = RunFolder(path=follower.run_dir, header=follower.header(), records=[])
                payload = build_payload([page], live=True)
                self._send(HTTPStatus.OK, "text/html; charset=utf-8", render_html(payload, title).encode())
            elif url.path == "/api/update":
                offset = _int(parse_qs(url.query).get("offset", ["0"])[0])
                body = json.dumps(update_payload(follower, offset), default=str).encode()
                self._send(HTTPStatus.OK, "application/json", body)
            elif url.path == "/api/record":
                self._record(parse_qs(url.query))
            else:
                self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")

        def _record(self, query: dict[str, list[str]]) -> None:
            key, trial = query.get("key", [""])[0], query.get("trial", [""])[0]
            follower.refresh()
            record = follower.record(key, _int(trial)) if key and trial.isdigit() else None
            if record is None:
                body = json.dumps({"error": f"no record {key!r} trial {trial!r}"}).encode()
                self._send(HTTPStatus.NOT_FOUND, "application/json", body)
            else:
                self._send(HTTPStatus.OK, "application/json", json.dumps(record, default=str).encode())

        def _send(self, status: HTTPStatus, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the terminal for the run's own output

    return Handler


def _int(text: str) -> int:
    try:
        return max(0, int(text))
    except ValueError:
        return 0


def check_run_dir(path: Path) -> bool:
    """Whether ``path`` exists yet; a path the live view cannot follow is an error.

    A missing folder is fine (the run has not started: the view waits for it). A file, or a folder
    holding files but none a run writes, is not a run folder.

    Raises:
        UserError: ``path`` is a file or a folder of something else.
    """
    if not path.exists():
        return False
    if not path.is_dir():
        raise UserError(f"{path}: not a run folder (a file; give the folder holding run.json)")
    names = [p.name for p in path.iterdir()]
    # (a prefix match: a run's first file may still be its ``.tmp`` before the atomic rename)
    if names and not any(n.startswith((RUN_FILE, RECORDS_FILE, LIVE_FILE, SUMMARY_FILE)) for n in names):
        raise UserError(f"{path}: not a run folder (no {RUN_FILE}, {RECORDS_FILE} or {LIVE_FILE} in it)")
    return True


class LiveServer(LocalServer):
    """The dashboard server for one run directory, bound to 127.0.0.1 only.

    The directory may not exist yet (:attr:`waiting`): the page is served and picks the run up
    once it appears.
    """

    def __init__(self, run_dir: str | Path, port: int = 8765, title: str | None = None) -> None:
        path = Path(run_dir)
        self.waiting = not check_run_dir(path)
        self.follower = RunFollower(path)
        super().__init__(_handler(self.follower, title or f"callbench · {path.name}"), port)
