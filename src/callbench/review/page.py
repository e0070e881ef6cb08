"""The review page: ``callbench review RUN_DIR… --reviewer NAME`` serves it on 127.0.0.1.

:class:`ReviewServer` (stdlib ``http.server``, the shape of :class:`callbench.report.live.LiveServer`)
serves one page listing the review queue (:mod:`callbench.review.queue`) and three JSON endpoints:

* ``GET /api/queue``: the queue with the reviewer's current decisions (refreshed after each save);
* ``GET /api/record?run=I&key=K&trial=T``: the run's current record of (K, T), as the report's case
  panel draws it;
* ``POST /api/review``: one review, stored by :func:`callbench.review.store.append_review` in that
  case's run folder; answers the saved entry, or HTTP 400 with the store's one-line error.

The page's script is the report's ``core`` and ``panel`` modules plus ``templates/review.js`` joined in
one function scope (the case panel is the report's, not a copy).

Security: the server binds 127.0.0.1 only; the reviewer name comes from the command line only (a POST
cannot choose it); a POST is accepted only with the ``Host`` of this server, an ``Origin`` (when the
browser sends one) equal to this server's origin, a JSON body, and the per-server token embedded in
the page (``X-Review-Token``; a custom header also forces a CORS preflight, which this server never
grants), so a page elsewhere cannot write reviews.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jinja2
from pydantic import ValidationError

from callbench.errors import ConfigError, UserError
from callbench.harness.runfolder import RUN_FILE, read_header, run_label
from callbench.report.html import script_json
from callbench.report.local_server import LocalOnlyHandler, LocalServer
from callbench.report.payload import record_payload
from callbench.review.queue import REASON_CODES, build_queue, run_labels
from callbench.review.store import append_review, check_reviewer, current_records, new_entry
from callbench.types.review import DECISIONS, REVIEW_REASONS

PAGE_MODULES = ("core", "panel")
"""The report's script modules the review page needs (``panel`` calls only ``core``'s helpers)."""
PAGE_STYLES = ("core", "panel")
TOKEN_HEADER = "X-Review-Token"
MAX_BODY = 64 * 1024
"""Largest review POST accepted (a note is at most 4000 characters)."""


def _report_asset(name: str) -> str:
    return resources.files("callbench.report").joinpath("templates", name).read_text(encoding="utf-8")


def _own_asset(name: str) -> str:
    return resources.files("callbench.review").joinpath("templates", name).read_text(encoding="utf-8")


def review_script() -> str:
    """The page script: the report's :data:`PAGE_MODULES` and ``review.js`` in one function scope."""
    parts = [_report_asset(f"js/{name}.js") for name in PAGE_MODULES] + [_own_asset("review.js")]
    body = "\n".join(parts)
    return f'"use strict";\n(function () {{\n{body}\n}})();\n'


def review_style() -> str:
    """The report's core and panel styles, then the review page's own."""
    folder = resources.files("callbench.report").joinpath("templates", "css")
    parts = [
        folder.joinpath(f"{n}.css").read_text(encoding="utf-8")
        for n in PAGE_STYLES
        if folder.joinpath(f"{n}.css").is_file()
    ]
    return "\n".join(parts + [_own_asset("review.css")])


def render_page(data: dict[str, Any], title: str) -> str:
    """The review page for the initial ``data`` (queue, runs, reviewer, token, code lists)."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    markup = jinja2.utils.markupsafe.Markup
    return env.from_string(_own_asset("review.html.j2")).render(
        title=title,
        css=markup(review_style()),
        js=markup(review_script()),
        data_json=markup(script_json(data)),
    )


class ReviewSite:
    """What the server knows: the run folders, the reviewer and the token; builds every answer."""

    def __init__(self, run_dirs: Sequence[Path], reviewer: str, token: str) -> None:
        self.run_dirs = list(run_dirs)
        self.reviewer = reviewer
        self.token = token
        self.own_host = ""
        """``127.0.0.1:PORT`` once the server is bound: the only Host (and origin) a POST may come from."""
        self.lock = threading.Lock()  # one save at a time: validate-then-append stays consistent

    def runs(self) -> list[dict[str, Any]]:
        out = []
        for index, (path, name) in enumerate(zip(self.run_dirs, run_labels(self.run_dirs), strict=True)):
            header = read_header(path) if (path / RUN_FILE).is_file() else None
            out.append({"index": index, "name": name, "label": run_label(header, path)})
        return out

    def queue(self) -> list[dict[str, Any]]:
        return [item.to_json() for item in build_queue(self.run_dirs, self.reviewer)]

    def page_data(self) -> dict[str, Any]:
        return {
            "reviewer": self.reviewer,
            "token": self.token,
            "runs": self.runs(),
            "queue": self.queue(),
            "decisions": list(DECISIONS),
            "reasons": list(REVIEW_REASONS),
            "queue_reasons": list(REASON_CODES),
        }

    def record(self, run: int, key: str, trial: int) -> dict[str, Any] | None:
        if not 0 <= run < len(self.run_dirs):
            return None
        current = current_records(self.run_dirs[run]).get((key, trial))
        if current is None:
            return None
        return dict(record_payload(current.record), record_hash=current.hash)

    def save(self, body: dict[str, Any]) -> dict[str, Any]:
        """Store one review from the page; :class:`ConfigError` (one line) when it is refused."""
        run = body.get("run")
        if not isinstance(run, int) or isinstance(run, bool) or not 0 <= run < len(self.run_dirs):
            raise ConfigError(f"review: no run {run!r} on this page")
        fields = {k: body.get(k) for k in ("key", "trial", "scorer", "decision")}
        if not isinstance(fields["key"], str) or not isinstance(fields["scorer"], str):
            raise ConfigError("review: 'key' and 'scorer' must be strings")
        if not isinstance(fields["trial"], int) or isinstance(fields["trial"], bool):
            raise ConfigError("review: 'trial' must be an integer")
        scores = body.get("scores") or {}
        if not isinstance(scores, dict):
            raise ConfigError("review: 'scores' must be an object")
        run_dir = self.run_dirs[run]
        with self.lock:
            records = current_records(run_dir)
            try:
                entry = new_entry(
                    run_dir,
                    self.reviewer,  # never from the request: the command line names the reviewer
                    fields["key"],
                    fields["trial"],
                    fields["scorer"],
                    body.get("decision"),  # type: ignore[arg-type]  # the entry model validates it
                    reason=body.get("reason") or None,
                    note=str(body.get("note") or ""),
                    scores=scores,
                    records=records,
                )
            except ValidationError as exc:  # pragma: no cover (new_entry turns these into ReviewError)
                raise ConfigError(f"review: {exc.errors()[0]['msg']}") from None
            append_review(run_dir, entry, records)
        return entry.model_dump(mode="json")


def _handler(site: ReviewSite, title: str) -> type[BaseHTTPRequestHandler]:
    class Handler(LocalOnlyHandler):
        def do_GET(self) -> None:  # http.server's naming
            url = urlsplit(self.path)
            try:
                if url.path in ("/", "/index.html"):
                    page = render_page(site.page_data(), title).encode()
                    self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)
                elif url.path == "/api/queue":
                    self._json(HTTPStatus.OK, {"queue": site.queue()})
                elif url.path == "/api/record":
                    self._record(parse_qs(url.query))
                else:
                    self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")
            except ConfigError as exc:
                self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": str(exc)})

        def do_POST(self) -> None:  # http.server's naming
            if urlsplit(self.path).path != "/api/review":
                self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")
                return
            refusal = self._refusal()
            if refusal:
                self._json(HTTPStatus.FORBIDDEN, {"error": refusal})
                return
            length = _int(self.headers.get("Content-Length", "0"))
            if length <= 0 or length > MAX_BODY:
                self._json(
                    HTTPStatus.BAD_REQUEST, {"error": f"review: body of {length} bytes (need 1..{MAX_BODY})"}
                )
                return
            try:
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise ValueError
            except ValueError:
                self._json(HTTPStatus.BAD_REQUEST, {"error": "review: the body is not a JSON object"})
                return
            try:
                self._json(HTTPStatus.OK, {"entry": site.save(body)})
            except ConfigError as exc:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})

        def _refusal(self) -> str | None:
            """Why this POST may not write (None: it may): not from this server's own page."""
            own_host = site.own_host
            if self.headers.get("Host") != own_host:
                return f"refused: Host {self.headers.get('Host')!r} is not this server ({own_host})"
            origin = self.headers.get("Origin")
            if origin is not None and origin != f"http://{own_host}":
                return f"refused: a review from origin {origin!r} (only this server's own page may write)"
            if not secrets.compare_digest(self.headers.get(TOKEN_HEADER, ""), site.token):
                return "refused: missing or wrong review token (reload the review page)"
            if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
                return "refused: a review is sent as application/json"
            return None

        def _record(self, query: dict[str, list[str]]) -> None:
            run, key, trial = (
                query.get("run", [""])[0],
                query.get("key", [""])[0],
                query.get("trial", [""])[0],
            )
            record = site.record(_int(run), key, _int(trial)) if run.isdigit() and trial.isdigit() else None
            if record is None:
                self._json(
                    HTTPStatus.NOT_FOUND, {"error": f"no record {key!r} trial {trial!r} in run {run!r}"}
                )
            else:
                self._json(HTTPStatus.OK, record)

        def _json(self, status: HTTPStatus, value: Any) -> None:
            self._send(status, "application/json", json.dumps(value, default=str).encode())

        def _send(self, status: HTTPStatus, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the terminal quiet

    return Handler


def _int(text: str) -> int:
    try:
        return max(0, int(text))
    except ValueError:
        return 0


class ReviewServer(LocalServer):
    """The review page for ``run_dirs`` and one reviewer, bound to 127.0.0.1 only.

    Raises:
        UserError: a folder that is not a run folder, or a port that cannot be bound.
        ReviewError: a reviewer name that is not allowed (it becomes a file name).
    """

    def __init__(
        self, run_dirs: Sequence[str | Path], reviewer: str, port: int = 8766, title: str | None = None
    ) -> None:
        paths = [Path(d) for d in run_dirs]
        if not paths:
            raise UserError("give at least one run folder to review")
        for path in paths:
            if not (path / "records.jsonl").is_file():
                raise UserError(f"{path}: not a run folder (no records.jsonl)")
        self.site = ReviewSite(paths, check_reviewer(reviewer), secrets.token_urlsafe(24))
        self.site.queue()  # unreadable records, summary or reviews fail here, before serving
        super().__init__(_handler(self.site, title or f"callbench review · {reviewer}"), port)
        self.site.own_host = urlsplit(self.url).netloc
