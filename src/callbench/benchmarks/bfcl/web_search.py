"""BFCL v4's web search tools, ``search_engine_query`` and ``fetch_url_content``, on callbench's
``http_client``, so ``--record DIR`` keeps every search and page fetch on the case's tape and
``--replay DIR`` answers them offline.

What the model sees follows BFCL's ``WebSearchAPI`` (bfcl-eval 2026.3.23):

* ``search_engine_query(keywords, max_results=10, region="wt-wt")`` asks SerpAPI's DuckDuckGo engine
  (``GET https://serpapi.com/search?engine=duckduckgo&q=...&kl=...&api_key=...``, the key from
  ``SERPAPI_API_KEY``) and returns the first ``max_results`` organic results as
  ``{"title", "href", "body"}`` (``body`` is the snippet; the ``no_snippet`` variant leaves it out).
  An answer without ``organic_results`` gives ``{"error": "Failed to retrieve the search results from
  server. Please try again later."}``; a rate-limit answer (HTTP 429) is retried with back-off.
* ``fetch_url_content(url, mode="raw")`` gets the page with a browser's headers (20 s time-out,
  redirects followed) and returns ``{"content": ...}``: the HTML (``raw``), Markdown (``markdown``) or
  its text (``truncate``: :mod:`callbench.benchmarks.bfcl.web_pages`). A URL without ``http://`` or
  ``https://`` raises ``Invalid URL``; an error status, no answer or an unknown mode gives
  ``{"error": "An error occurred while fetching URL: ..."}``.
* results reach the model as BFCL's executor formats them: a dict as JSON, a list as Python's
  ``str``, an exception as ``Error during execution: ...``.

Where BFCL would hand the model an error that is the infrastructure's, the case is an error record
instead (``tool_server_lost``), never the model's failure: SerpAPI gives no answer, refuses the key
(401/403; a missing ``SERPAPI_API_KEY`` is named), stays rate-limited past the retries, answers 5xx
or a body that is not JSON. Page fetches are the model's choice: their faults are results it reads,
as in BFCL.

Improved mode can inject failures into page fetches (BFCL's blog describes them; its backend keeps
the code commented out): with ``web_failure_rate`` > 0 each fetch that got a page is replaced, with
that probability, by a realistic network or HTTP error. Draws come from a generator seeded by
``web_failure_seed`` and the case id, one draw per fetch that got a page, in call order, so a run is
reproducible and the same cassette serves every setting (the page is still fetched).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from callbench.benchmarks.bfcl.backend import ERROR_PREFIX, format_result
from callbench.benchmarks.bfcl.web_pages import page_markdown, page_text
from callbench.plugin import HttpFault, HttpResponse, http_client

SEARCH_URL = "https://serpapi.com/search"
"""SerpAPI's search endpoint, as its Python client (``serpapi.GoogleSearch``) calls it."""
KEY_VARIABLE = "SERPAPI_API_KEY"
"""The environment variable BFCL reads SerpAPI's key from."""
SEARCH_TIMEOUT_S = 60.0
FETCH_TIMEOUT_S = 20.0
"""BFCL's ``requests.get(..., timeout=20)``."""
RATE_LIMIT_RETRIES = 3
RATE_LIMIT_BACKOFF_S = 2.0
SEARCH_FAILED = "Failed to retrieve the search results from server. Please try again later."
BROWSER_HEADERS = {
    "User-Agent": (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/112.0.0.0 Safari/537.36"
    ),
    "Accept": (
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
        "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
    ),
    "Accept-Language": "en-US,en;q=0.9",
    "Referer": "https://www.google.com/",
    "Upgrade-Insecure-Requests": "1",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-User": "?1",
    "Sec-Fetch-Dest": "document",
}
"""A browser's request headers (as BFCL sends, to avoid 403s), without ``Accept-Encoding``: the
client reads bodies as sent, so it asks for them uncompressed."""
FETCH_MODES = ("raw", "markdown", "truncate")
TOOL_NAMES = ("search_engine_query", "fetch_url_content")


# --- failure injection (improved mode) ------------------------------------------------------------


FAILURE_KINDS = (
    "http_503",
    "http_429",
    "http_403",
    "connect_timeout",
    "read_timeout",
    "name_not_resolved",
)
"""The failures an injected fetch reports: server errors, rate limits, refusals and network faults."""


def failure_message(kind: str, url: str, rng: random.Random) -> str:
    """The error text of an injected failure, worded as the ``requests`` library words it."""
    parts = urlsplit(url)
    host = parts.hostname or "unknown"
    path = parts.path or "/"
    if kind == "http_503":
        return f"503 Server Error: Service Unavailable for url: {url}"
    if kind == "http_429":
        return f"429 Client Error: Too Many Requests for url: {url}"
    if kind == "http_403":
        return f"403 Client Error: Forbidden for url: {url}"
    address = f"0x{rng.randrange(0x10000000, 0xFFFFFFFF):x}"
    if kind == "connect_timeout":
        return (
            f"HTTPSConnectionPool(host='{host}', port=443): Max retries exceeded with url: {path} "
            f"(Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at {address}>, "
            f"'Connection to {host} timed out. (connect timeout=5)'))"
        )
    if kind == "read_timeout":
        return f"HTTPSConnectionPool(host='{host}', port=443): Read timed out. (read timeout=5)"
    return (
        f"Max retries exceeded with url: {path} (Caused by NewConnectionError('<urllib3.connection."
        f"HTTPSConnection object at {address}>: Failed to establish a new connection: [Errno -2] Name "
        "or service not known'))"
    )


@dataclass
class FailureInjection:
    """Seeded failures of page fetches for one case (``rate`` 0: none, no draw matters)."""

    rate: float = 0.0
    seed: int = 0
    case_id: str = ""
    injected: list[dict[str, Any]] = field(default_factory=list)
    fetches: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(f"bfcl-web-failure:{self.seed}:{self.case_id}")

    def draw(self, url: str) -> str | None:
        """The injected error text for this fetch, or ``None`` (one draw per fetch that got a page)."""
        index = self.fetches
        self.fetches += 1
        if self.rate <= 0:
            return None
        hit = self.rng.random() < self.rate
        kind = self.rng.choice(FAILURE_KINDS)
        message = failure_message(kind, url, self.rng)
        if not hit:
            return None
        self.injected.append({"fetch": index, "kind": kind, "url": url})
        return message

    def describe(self) -> dict[str, Any]:
        """What a verdict records of the injection."""
        return {
            "rate": self.rate,
            "seed": self.seed,
            "fetches": self.fetches,
            "injected": list(self.injected),
        }


# --- the tools --------------------------------------------------------------------------------------


class WebSearchAPI:
    """One case's web search tools (``show_snippet``: the ``web_search_base`` variant)."""

    def __init__(self, show_snippet: bool = True, failures: FailureInjection | None = None) -> None:
        self.show_snippet = show_snippet
        self.failures = failures or FailureInjection()

    async def search_engine_query(
        self, keywords: str, max_results: int | None = 10, region: str | None = "wt-wt"
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """The organic results of a DuckDuckGo search through SerpAPI."""
        payload = await _serpapi(keywords, region)
        if "organic_results" not in payload:
            return {"error": SEARCH_FAILED}
        results = []
        for item in payload["organic_results"][:max_results]:
            entry = {"title": item["title"], "href": item["link"]}
            if self.show_snippet:
                entry["body"] = item["snippet"]
            results.append(entry)
        return results

    async def fetch_url_content(self, url: str, mode: str = "raw") -> dict[str, Any]:
        """The page at ``url`` as HTML, Markdown or text."""
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        try:
            response = await http_client.aget(url, headers=BROWSER_HEADERS, timeout_s=FETCH_TIMEOUT_S)
            if response.status >= 400:
                raise ValueError(_status_text(response))
            injected = self.failures.draw(url)
            if injected is not None:
                return {"error": injected}
            if mode == "raw":
                return {"content": response.text}
            if mode == "markdown":
                return {"content": page_markdown(response.text)}
            if mode == "truncate":
                return {"content": page_text(response.text)}
            raise ValueError(f"Unsupported mode: {mode}")
        except (HttpFault, ValueError) as exc:
            return {"error": f"An error occurred while fetching {url}: {exc}"}

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one call as BFCL's executor does: the result formatted, an exception as its error text.
        Infrastructure faults (SerpAPI unreachable, a cassette miss) propagate."""
        if name not in TOOL_NAMES:
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        method = getattr(self, name)
        try:
            return format_result(await method(**arguments))
        except Exception as exc:  # noqa: BLE001 - a failed call is a result the model reads
            if isinstance(exc, HttpFault) or _infrastructure(exc):
                raise
            return f"{ERROR_PREFIX}{exc}"


def _infrastructure(exc: BaseException) -> bool:
    """A fault of callbench's tool plumbing (a tool server fault such as a cassette miss, which carries
    its ``kind``), never the model's to read."""
    return isinstance(getattr(exc, "kind", None), str) and type(exc).__name__.endswith("Fault")


def _status_text(response: HttpResponse) -> str:
    """``raise_for_status``'s message for an error status."""
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = ""
    side = "Client" if response.status < 500 else "Server"
    return f"{response.status} {side} Error: {reason} for url: {response.url}"


async def _serpapi(keywords: str, region: str | None) -> dict[str, Any]:
    """SerpAPI's JSON answer to one search; infrastructure failures raise :class:`HttpFault`."""
    key = os.environ.get(KEY_VARIABLE, "")
    params = {"engine": "duckduckgo", "q": keywords, "kl": region, "api_key": key,
              "source": "python", "output": "json"}  # fmt: skip
    backoff = RATE_LIMIT_BACKOFF_S
    for attempt in range(RATE_LIMIT_RETRIES + 1):
        try:
            response = await http_client.aget(SEARCH_URL, params=params, timeout_s=SEARCH_TIMEOUT_S)
        except HttpFault as exc:
            if not key:
                raise HttpFault(exc.kind, f"{exc} ({_no_key()})") from exc
            raise
        try:
            payload = response.json()
        except ValueError:
            payload = None
        error = str(payload.get("error", "")) if isinstance(payload, dict) else ""
        limited = response.status == 429 or "429" in error
        if limited and attempt < RATE_LIMIT_RETRIES:
            await asyncio.sleep(backoff)
            backoff *= 2
            continue
        where = f"SerpAPI ({SEARCH_URL})"
        if limited:
            raise HttpFault(
                "tool_server_lost", f"{where} kept answering 429 (rate limit) after {attempt} retries"
            )
        if response.status in (401, 403):
            hint = _no_key() if not key else f"check {KEY_VARIABLE}"
            detail = f": {error}" if error else ""
            raise HttpFault(
                "tool_server_lost", f"{where} refused the key (HTTP {response.status}{detail}); {hint}"
            )
        if response.status >= 500:
            raise HttpFault("tool_server_lost", f"{where} answered HTTP {response.status}")
        if not isinstance(payload, dict):
            raise HttpFault(
                "tool_server_lost",
                f"{where} answered HTTP {response.status} with a body that is not a JSON object",
            )
        return payload
    raise AssertionError("unreachable")  # pragma: no cover


def _no_key() -> str:
    return (
        f"{KEY_VARIABLE} is not set: a live web search calls SerpAPI with it "
        "(--replay DIR answers from a cassette instead)"
    )


def tool_result_failed(text: str) -> bool:
    """Whether a formatted result is a failure: BFCL's error text, or a dict with ``error``."""
    if text.startswith(ERROR_PREFIX):
        return True
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return False
        return isinstance(value, dict) and "error" in value
    return False
