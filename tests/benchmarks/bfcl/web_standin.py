"""A stand-in web for BFCL's web search tests: SerpAPI's DuckDuckGo engine and the pages it links to,
served on 127.0.0.1 and built from BFCL's own possible answers.

* ``GET /search?engine=duckduckgo&q=...&kl=...&api_key=...&source=python&output=json`` answers in
  SerpAPI's JSON format (``search_metadata``, ``search_parameters``, ``organic_results`` of
  ``position``, ``title``, ``link``, ``snippet``, ``favicon``). A hop's sub-question (every search the
  oracle makes) finds the hop's source page first, its answer in the snippet; any other query finds
  three pages of its own. A wrong key is HTTP 401 with SerpAPI's error object; the query
  ``no results at all`` gets SerpAPI's "hasn't returned any results" error; ``rate limited`` answers
  HTTP 429 twice, then results; ``server error`` is HTTP 503 and ``not json`` an HTML page.
* ``GET /web?url=URL`` serves the page at ``URL``: a hop's source page names its answer (with a
  script and a style block, for ``truncate``), pages of other queries say what they are about, and
  any other URL is a 404 page.

:func:`route` points callbench's HTTP client at it: requests for ``https://serpapi.com/search`` go to
``/search`` and every other URL to ``/web``, while the tool, the tape and the replay see the real
URLs. A cassette recorded through it is therefore a cassette of the real services' URLs, which
replays with no stand-in and no network.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

KEY = "serpapi-test-key-0123456789abcdef"
NO_RESULTS = "no results at all"
RATE_LIMITED = "rate limited"
SERVER_ERROR = "server error"
NOT_JSON = "not json"


def hop_index(folder: Path) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(hop by sub-question, hop by source URL without its fragment) from BFCL's possible answers."""
    by_question: dict[str, dict[str, str]] = {}
    by_url: dict[str, dict[str, str]] = {}
    path = folder / "possible_answer" / "BFCL_v4_web_search.json"
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        for hop in json.loads(line)["source"]:
            by_question.setdefault(hop["subquestion"], hop)
            by_url.setdefault(_page_key(hop["source"]), hop)
    return by_question, by_url


def _page_key(url: str) -> str:
    return url.split("#", 1)[0]


def _slug(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class _Handler(BaseHTTPRequestHandler):
    server: StandInServer

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json; charset=utf-8")

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {name: values[0] for name, values in parse_qs(parts.query, keep_blank_values=True).items()}
        self.server.requests.append((parts.path, query))
        if parts.path == "/search":
            return self._search(query)
        if parts.path == "/web":
            return self._page(query.get("url", ""))
        return self._send(404, b"not here", "text/plain")

    def _search(self, query: dict[str, str]) -> None:
        if query.get("api_key") != KEY:
            return self._json(
                401,
                {"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"},
            )
        if query.get("engine") != "duckduckgo" or query.get("output") != "json":
            return self._json(400, {"error": "Unsupported `engine` or `output` parameter."})
        q, region = query.get("q", ""), query.get("kl", "")
        metadata = {
            "id": _slug(q + region),
            "status": "Success",
            "json_endpoint": f"https://serpapi.com/searches/{_slug(q)}/{_slug(q + region)}.json",
            "duckduckgo_url": f"https://duckduckgo.com/?q={quote(q)}&kl={region}",
            "total_time_taken": 0.42,
        }
        parameters = {"engine": "duckduckgo", "q": q, "kl": region}
        if q == RATE_LIMITED:
            self.server.limited[q] += 1
            if self.server.limited[q] <= 2:
                return self._json(429, {"error": "Your account has run out of searches (429)."})
        if q == SERVER_ERROR:
            return self._json(503, {"error": "Service temporarily unavailable."})
        if q == NOT_JSON:
            return self._send(200, b"<html><body>maintenance</body></html>", "text/html")
        if q == NO_RESULTS:
            return self._json(
                200,
                {
                    "search_metadata": metadata,
                    "search_parameters": parameters,
                    "error": "DuckDuckGo hasn't returned any results for this query.",
                },
            )
        results = []
        hop = self.server.by_question.get(q)
        if hop is not None:
            results.append(
                {
                    "title": f"{hop['answer']} - {q}",
                    "link": hop["source"],
                    "snippet": f"{q}: {hop['answer']}.",
                }
            )
        for n in range(1, 4):
            link = f"https://www.example.org/{_slug(q)}/{n}"
            results.append({"title": f"{q} ({n})", "link": link, "snippet": f"Result {n} about {q}."})
        organic = [
            {"position": i, **item, "favicon": f"https://external-content.duckduckgo.com/ip3/{i}.ico"}
            for i, item in enumerate(results, 1)
        ]
        self._json(
            200, {"search_metadata": metadata, "search_parameters": parameters, "organic_results": organic}
        )

    def _page(self, url: str) -> None:
        hop = self.server.by_url.get(_page_key(url))
        if hop is not None:
            title, body = hop["subquestion"], f"{hop['subquestion']}: <b>{html.escape(hop['answer'])}</b>."
        elif urlsplit(url).hostname == "www.example.org":
            title, body = f"Page {urlsplit(url).path}", "A page of search results, with nothing in it."
        else:
            return self._send(
                404, b"<html><body><h1>Not Found</h1></body></html>", "text/html; charset=utf-8"
            )
        page = (
            "<!DOCTYPE html><html><head><title>" + html.escape(title) + "</title>"
            "<style>body { color: #333 }</style><script>var tracker = 1;</script></head>"
            "<body><h1>" + html.escape(title) + "</h1>\n<p>" + body + "</p>\n"
            "<ul><li>first</li><li>second</li></ul></body></html>"
        )
        self._send(200, page.encode(), "text/html; charset=utf-8")


class StandInServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, folder: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.by_question, self.by_url = hop_index(folder)
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.limited: Counter[str] = Counter()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def route(monkeypatch: Any, server: StandInServer) -> None:
    """Send callbench's HTTP requests to the stand-in; tools and tapes keep the real URLs."""
    from callbench.executors import http_client as client_module

    send = client_module._send

    def routed(out: Any) -> dict[str, Any]:
        parts = urlsplit(out.url)
        if parts.hostname == "serpapi.com":
            target = f"{server.url}/search?{parts.query}"
        else:
            target = f"{server.url}/web?url={quote(out.url, safe='')}"
        entry = send(dataclasses.replace(out, url=target))
        entry["url"] = out.taped.url  # what the real service answers from (no redirects here)
        return entry

    monkeypatch.setattr(client_module, "_send", routed)


def offline(monkeypatch: Any, sent: list[str]) -> None:
    """Any request that would reach the network is noted and refused."""
    from callbench.executors import http_client as client_module

    def refuse(out: Any) -> Any:
        sent.append(out.url)
        raise AssertionError("the network was touched")

    monkeypatch.setattr(client_module, "_send", refuse)
