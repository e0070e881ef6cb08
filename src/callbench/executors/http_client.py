"""An HTTP client for tools that call web services, recorded and replayed by ``--record``/``--replay``.

A suite's Python tool that calls a web API (a search engine, a weather service) makes its requests
through :data:`http_client` (``from callbench.plugin import http_client``)::

    def web_search(query: str) -> list[dict]:
        response = http_client.get(SEARCH_URL, params={"q": query}, headers={"X-Api-Key": KEY})
        if response.status != 200:
            raise ToolError(f"search failed: HTTP {response.status}")
        return response.json()["results"]

    async def fetch(url: str) -> str:            # an async tool awaits the a* variants
        return (await http_client.aget(url)).text

In a normal run the request goes to the network. Under ``--record DIR`` each exchange is also written
to the case's tape in the cassette (:mod:`callbench.executors.cassette`), beside any MCP calls; under
``--replay DIR`` it is answered from the tape and the network is never touched
(:mod:`callbench.executors.http_tape`). A request is matched by its method, its URL (normalised:
scheme and host in lower case, default port dropped, query parameters sorted by name, fragment
dropped), the SHA-256 of its canonical body (JSON with sorted keys; form fields sorted) and its
occurrence number among identical requests of the case.

Secrets never reach a tape: a query parameter, form or JSON field, or header named like a credential
(``key``, ``api_key``, ``apiKey``, ``token``, ``access_token``, ``secret``, ``password``,
``signature``, ``sig``, ``auth``, ``Authorization``, ``Cookie``, ``X-Api-Key``...: :func:`secret_name`)
is kept with an empty value (and matched so: a replay with another key finds the same answer), its
value is registered as a secret (blanked from every record and output), and every known secret is
blanked from what a tape keeps. A URL's user name and password are dropped. Response headers are
kept only from a short list (:data:`KEPT_RESPONSE_HEADERS`; never ``Set-Cookie``).

What a tool sees is what a tape keeps, in every run: the same status, the same kept headers, the same
body bytes (known secrets blanked) and the normalised URL, so a recorded run and its replays give the
same tool results.

Failures: an answer with any status (``404``, ``500``) is a response the tool reads (``status``) and
decides about — raise ``ToolError`` for the model to read, or return it. No answer at all (connection
refused, a name that does not resolve, a reset, the ``timeout_s`` passing, more than
:data:`MAX_BYTES`) raises :class:`HttpFault`, a :class:`~callbench.errors.ToolServerFault`
(``tool_server_lost``, ``tool_server_timeout``, ``tool_server_too_large``): infrastructure, the case
an error record re-run by ``--resume``, never the model's failure. A tool whose URL comes from the
model (fetch a page) may catch ``HttpFault`` and raise ``ToolError`` so the model reads it; a recorded
fault is raised again on replay, so that handling replays too. A malformed URL (no ``http``/``https``
scheme, no host) raises ``ValueError`` before anything is sent or looked up.

The tape reaches a tool through a context variable: a request made from a thread the tool starts
itself sees it only when that thread runs in a copy of the tool's context
(``contextvars.copy_context().run``); otherwise it goes to the network, recorded by nothing.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from callbench.errors import ToolServerFault, ToolServerFaultKind
from callbench.secrets import register_secret, scrub, scrub_data
from callbench.types.hashing import canonical_json

DEFAULT_TIMEOUT_S = 30.0
"""Seconds a request may take (connect and read) before it is an :class:`HttpFault`."""
MAX_BYTES = 16 * 1024 * 1024
"""The largest response body read (more is ``tool_server_too_large``)."""
KEPT_BODY_CHARS = 64 * 1024
"""A request body up to this size is kept in the tape (for reading); a larger one by its hash only."""
USER_AGENT = "callbench-http/1"
KEPT_RESPONSE_HEADERS = (
    "content-type",
    "content-language",
    "location",
    "retry-after",
    "etag",
    "last-modified",
)
"""Response headers a tool sees and a tape keeps (names in lower case)."""

_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "signature",
        "sig",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "session",
        "sessionid",
        "jwt",
        "bearer",
    }
)
_NOT_SECRET_WORDS = frozenset({"page", "next", "prev", "previous", "cursor", "continuation", "sync"})
_SECRET_SUFFIXES = ("apikey", "token", "secret", "password")
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def secret_name(name: str) -> bool:
    """Whether a query parameter, form or JSON field, or header called ``name`` holds a credential:
    one of its words (``api_key``, ``apiKey``, ``X-Api-Key`` -> api, key) is a credential word, or it
    ends like one (``accesstoken``; ``keyword`` and ``sortkey`` do not). Pagination names
    (``pageToken``, ``next_token``, ``cursor``) are not credentials: they choose what is answered."""
    words = [w.lower() for w in _WORD.findall(name)]
    if any(w in _NOT_SECRET_WORDS for w in words):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    flat = "".join(words)
    return flat.endswith(_SECRET_SUFFIXES)


class HttpFault(ToolServerFault):
    """No answer from an HTTP service (refused, unresolvable, reset, timed out, too large):
    infrastructure, like a tool server that went away (the case is an error record)."""

    def __init__(self, kind: ToolServerFaultKind, message: str) -> None:
        super().__init__(kind, message)


@dataclass(frozen=True)
class HttpResponse:
    """What a tool gets back: the same in a live run, a recording and a replay."""

    status: int
    headers: Mapping[str, str]
    """The kept headers (:data:`KEPT_RESPONSE_HEADERS`), names in lower case."""
    content: bytes
    url: str
    """The URL answered (after redirects), normalised, credentials blanked."""

    @property
    def ok(self) -> bool:
        """A 2xx or 3xx status."""
        return 200 <= self.status < 400

    @property
    def text(self) -> str:
        """The body as text (the charset the ``Content-Type`` names, else UTF-8; bad bytes replaced)."""
        charset = "utf-8"
        match = re.search(r"charset=([\w.-]+)", self.headers.get("content-type", ""), re.IGNORECASE)
        if match:
            charset = match.group(1)
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON (``ValueError`` when it is not)."""
        return json.loads(self.content)


# --- requests as a tape keeps them ------------------------------------------------------------


@dataclass(frozen=True)
class TapeRequest:
    """A request as a tape keeps it and matches it: what is sent, minus credentials."""

    method: str
    url: str
    """Normalised, credential parameters blanked, known secrets blanked."""
    headers: dict[str, str]
    """The request's headers (names in lower case), credential headers with an empty value."""
    body_sha256: str | None
    """SHA-256 of the canonical body (``None``: no body)."""
    body: Any = None
    """The body kept for reading: ``{"json": value}`` or ``{"text": text}`` (``None``: none, or too
    large or binary: the hash alone)."""

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.method, self.url, self.body_sha256)


@dataclass(frozen=True)
class Outgoing:
    """A request ready to send (with its credentials) and its tape form."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    taped: TapeRequest
    timeout_s: float = DEFAULT_TIMEOUT_S
    secrets: tuple[str, ...] = field(default=())


def normalise_url(url: str, secret_params: Sequence[str] = ()) -> tuple[str, list[str]]:
    """``url`` as a tape keeps it (see the module docstring) and the credential values it held.

    Raises:
        ValueError: not an ``http``/``https`` URL with a host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    secrets = [part for part in (parts.username, parts.password) if part]  # user info: dropped
    host = parts.hostname.lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = []
    for name, value in query:
        if value and (secret_name(name) or name in secret_params):
            secrets.append(value)
            value = ""
        kept.append((name, value))
    kept.sort(key=lambda item: item[0])  # stable: repeated names keep their order
    text = urlunsplit((scheme, host, parts.path or "/", urlencode(kept, quote_via=quote), ""))
    return text, secrets


def _blank_fields(value: Any, secrets: list[str], extra: Sequence[str]) -> Any:
    """JSON ``value`` with the values of credential fields emptied (their values into ``secrets``)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if (
                isinstance(v, str | int | float)
                and not isinstance(v, bool)
                and (secret_name(str(k)) or k in extra)
            ):
                if v != "":
                    secrets.append(str(v))
                out[k] = ""
            else:
                out[k] = _blank_fields(v, secrets, extra)
        return out
    if isinstance(value, list):
        return [_blank_fields(v, secrets, extra) for v in value]
    return value


def _body_digest(canonical: bytes) -> str:
    """SHA-256 of a canonical body, known secrets blanked from it when it is text."""
    try:
        canonical = scrub(canonical.decode("utf-8")).encode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        pass
    return hashlib.sha256(canonical).hexdigest()


def prepare(
    method: str,
    url: str,
    *,
    params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
    json_body: Any = None,
    data: Mapping[str, Any] | str | bytes | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    secret_params: Sequence[str] = (),
) -> Outgoing:
    """The request to send and its tape form (``ValueError`` for a malformed URL or both bodies)."""
    method = method.upper()
    if params:
        items = list(params.items()) if isinstance(params, Mapping) else list(params)
        query = urlencode([(str(k), "" if v is None else str(v)) for k, v in items], quote_via=quote)
        url = f"{url}{'&' if '?' in url else '?'}{query}"
    taped_url, secrets = normalise_url(url, secret_params)
    sent_headers = {"User-Agent": USER_AGENT, **{str(k): str(v) for k, v in (headers or {}).items()}}
    body: bytes | None = None
    kept: Any = None
    canonical: bytes | None = None
    if json_body is not None and data is not None:
        raise ValueError("give json or data, not both")
    if json_body is not None:
        body = json.dumps(json_body, ensure_ascii=False, separators=(",", ":")).encode()
        sent_headers.setdefault("Content-Type", "application/json")
        blanked = _blank_fields(json_body, secrets, secret_params)
        canonical = canonical_json(blanked).encode("utf-8", "surrogatepass")
        kept = {"json": blanked}
    elif isinstance(data, Mapping):
        pairs = [(str(k), "" if v is None else str(v)) for k, v in data.items()]
        body = urlencode(pairs).encode()
        sent_headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        form = [(k, "" if (secret_name(k) or k in secret_params) else v) for k, v in pairs]
        secrets += [v for k, v in pairs if v and (secret_name(k) or k in secret_params)]
        canonical = urlencode(sorted(form, key=lambda item: item[0])).encode()
        kept = {"text": canonical.decode()}
    elif data is not None:
        body = data.encode() if isinstance(data, str) else bytes(data)
        canonical = body
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        kept = {"text": text} if text is not None else None
    taped_headers: dict[str, str] = {}
    for name, value in sorted(sent_headers.items(), key=lambda item: item[0].lower()):
        low = name.lower()
        if secret_name(name) or low in {p.lower() for p in secret_params}:
            secrets.append(
                value.split(" ", 1)[-1] if low in ("authorization", "proxy-authorization") else value
            )
            taped_headers[low] = ""
        else:
            taped_headers[low] = value
    for secret in secrets:
        register_secret(secret)  # blanked from records, logs and the tape from now on
    if kept is not None and len(canonical_json(kept)) > KEPT_BODY_CHARS:
        kept = None
    taped = TapeRequest(
        method=method,
        url=scrub(taped_url),
        headers=scrub_data(taped_headers),
        body_sha256=None if canonical is None else _body_digest(canonical),
        body=scrub_data(kept),
    )
    return Outgoing(method, url, sent_headers, body, taped, timeout_s, tuple(secrets))


# --- responses as a tape keeps them -----------------------------------------------------------


def response_entry(status: int, url: str, headers: Mapping[str, str], content: bytes) -> dict[str, Any]:
    """A response as a tape keeps it (and as the tool sees it, read back with :func:`from_entry`)."""
    kept = {k.lower(): scrub(str(v)) for k, v in headers.items() if k.lower() in KEPT_RESPONSE_HEADERS}
    entry: dict[str, Any] = {"status": int(status), "url": url, "headers": dict(sorted(kept.items()))}
    try:
        entry["text"] = scrub(content.decode("utf-8"))
    except UnicodeDecodeError:
        entry["base64"] = base64.b64encode(content).decode("ascii")
    return entry


def from_entry(entry: Mapping[str, Any]) -> HttpResponse:
    """The response a tape's ``response`` entry stands for."""
    if "text" in entry:
        content = str(entry["text"]).encode("utf-8", "surrogatepass")
    else:
        content = base64.b64decode(str(entry.get("base64") or ""))
    headers = entry.get("headers") or {}
    return HttpResponse(
        status=int(entry["status"]),
        headers={str(k): str(v) for k, v in headers.items()},
        content=content,
        url=str(entry.get("url") or ""),
    )


def exchange_problem(entry: Any) -> str | None:
    """What makes a tape's HTTP exchange unusable (``None``: nothing)."""
    if not (
        isinstance(entry, dict)
        and isinstance(entry.get("method"), str)
        and isinstance(entry.get("url"), str)
        and (entry.get("body_sha256") is None or isinstance(entry.get("body_sha256"), str))
        and isinstance(entry.get("occurrence"), int)
    ):
        return "is malformed"
    response, fault = entry.get("response"), entry.get("fault")
    if isinstance(response, dict):
        if not isinstance(response.get("status"), int):
            return "has a response with no status"
        if not isinstance(response.get("text"), str) and not isinstance(response.get("base64"), str):
            return "has a response with no body"
        if "base64" in response and "text" not in response:
            try:
                base64.b64decode(response["base64"], validate=True)
            except ValueError:
                return "has a response body that is not base64"
        return None
    if isinstance(fault, dict) and isinstance(fault.get("kind"), str):
        return None
    return "has neither a response nor a fault"


# --- the tape's hook ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GoLive:
    """What a tape says of a request it does not answer: send it, then :meth:`HttpTapeHook.keep` it."""

    occurrence: int


class HttpTapeHook(Protocol):
    """A case's tape, as the client sees it (:class:`callbench.executors.http_tape.HttpTape`)."""

    def answer(self, request: TapeRequest) -> HttpResponse | GoLive:
        """The recorded response (raises the recorded fault, or the miss), or :class:`GoLive`."""
        ...

    def keep(
        self,
        request: TapeRequest,
        live: GoLive,
        response: dict[str, Any] | None,
        fault: dict[str, Any] | None,
        elapsed_ms: float,
    ) -> None:
        """Keep what the live request got: a response entry, or a fault (``kind``, ``message``)."""
        ...


active_http_tape: ContextVar[HttpTapeHook | None] = ContextVar("callbench_active_http_tape", default=None)
"""The tape of the tool call in progress (``None``: requests go to the network, nothing is kept).
Set by a taped session around each call (:mod:`callbench.executors.http_tape`); a tool running in a
worker thread sees it too (the Python executor runs it in a copy of the caller's context)."""


# --- sending ---------------------------------------------------------------------------------------


def _send(out: Outgoing) -> dict[str, Any]:
    """Send ``out`` (blocking); its response entry. Raises :class:`HttpFault` when no answer came."""
    import http.client
    import socket
    import urllib.error
    import urllib.request

    request = urllib.request.Request(out.url, data=out.body, headers=out.headers, method=out.method)
    where = f"{out.method} {out.taped.url}"
    try:
        try:
            reply = urllib.request.urlopen(request, timeout=out.timeout_s)  # noqa: S310 - http(s) checked
        except urllib.error.HTTPError as exc:  # an answer with an error status: the tool reads it
            reply = exc
        with reply:
            content = reply.read(MAX_BYTES + 1)
            if len(content) > MAX_BYTES:
                raise HttpFault(
                    "tool_server_too_large", f"{where}: the answer is over {MAX_BYTES // (1024 * 1024)} MiB"
                )
            status = int(getattr(reply, "status", None) or reply.getcode())
            final_url, _ = normalise_url(reply.geturl() or out.url)
            return response_entry(status, scrub(final_url), dict(reply.headers.items()), content)
    except HttpFault:
        raise
    except TimeoutError as exc:
        raise HttpFault("tool_server_timeout", f"{where}: no answer within {out.timeout_s:g} s") from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError | socket.timeout):
            raise HttpFault("tool_server_timeout", f"{where}: no answer within {out.timeout_s:g} s") from exc
        raise HttpFault("tool_server_lost", f"{where}: {scrub(str(reason))}") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise HttpFault("tool_server_lost", f"{where}: {type(exc).__name__}: {scrub(str(exc))}") from exc


def _fault_entry(exc: BaseException) -> dict[str, Any] | None:
    """How a tape keeps what stopped a live request (``None``: not kept, e.g. a bug in a tool)."""
    if isinstance(exc, ToolServerFault):
        return {"kind": exc.kind, "message": str(exc)}
    if isinstance(exc, asyncio.CancelledError):
        return {"kind": "cancelled", "message": "the case's time limit ran out during this request"}
    return None


def replay_fault(fault: Mapping[str, Any]) -> HttpFault:
    """The exception a recorded fault is raised as again."""
    kind, message = str(fault.get("kind")), str(fault.get("message") or "")
    if kind == "cancelled":
        return HttpFault("tool_server_timeout", f"replayed: {message} when it was recorded")
    if kind in ("tool_server_timeout", "tool_server_too_large"):
        return HttpFault(kind, message)  # type: ignore[arg-type]  # one of the kinds just named
    return HttpFault("tool_server_lost", message)


class HttpClient:
    """Requests a tool makes, recorded and replayed with the run's cassette (the module docstring).

    ``timeout_s``: seconds a request may take; ``secret_params``: names of query parameters, form or
    JSON fields and headers to treat as credentials beyond the ones :func:`secret_name` recognises.
    """

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S, secret_params: Sequence[str] = ()) -> None:
        self.timeout_s = timeout_s
        self.secret_params = tuple(secret_params)

    def _prepare(self, method: str, url: str, options: dict[str, Any]) -> Outgoing:
        timeout = options.pop("timeout_s", None)
        return prepare(
            method,
            url,
            timeout_s=self.timeout_s if timeout is None else float(timeout),
            secret_params=self.secret_params,
            **options,
        )

    # -- blocking (tools that are plain functions: they run in a worker thread) -------------------
    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | str | bytes | None = None,
        timeout_s: float | None = None,
    ) -> HttpResponse:
        """Send (or replay) one request; blocks, so an ``async def`` tool awaits :meth:`arequest`."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "http_client.request() blocks: on the event loop (an async tool) await http_client.arequest()"
            )
        out = self._prepare(
            method,
            url,
            {"params": params, "headers": headers, "json_body": json, "data": data, "timeout_s": timeout_s},
        )
        tape = active_http_tape.get()
        live = tape.answer(out.taped) if tape is not None else None
        if isinstance(live, HttpResponse):
            return live
        started = time.perf_counter()
        try:
            entry = _send(out)
        except BaseException as exc:
            fault = _fault_entry(exc)
            if tape is not None and live is not None and fault is not None:
                tape.keep(out.taped, live, None, fault, (time.perf_counter() - started) * 1000)
            raise
        if tape is not None and live is not None:
            tape.keep(out.taped, live, entry, None, (time.perf_counter() - started) * 1000)
        return from_entry(entry)

    def get(self, url: str, **options: Any) -> HttpResponse:
        """``request("GET", url, params=..., headers=..., timeout_s=...)``."""
        return self.request("GET", url, **options)

    def post(self, url: str, **options: Any) -> HttpResponse:
        """``request("POST", url, json=... or data=..., params=..., headers=..., timeout_s=...)``."""
        return self.request("POST", url, **options)

    # -- awaited (async def tools) ----------------------------------------------------------------
    async def arequest(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | str | bytes | None = None,
        timeout_s: float | None = None,
    ) -> HttpResponse:
        """:meth:`request` for an ``async def`` tool: the network wait happens in a worker thread."""
        out = self._prepare(
            method,
            url,
            {"params": params, "headers": headers, "json_body": json, "data": data, "timeout_s": timeout_s},
        )
        tape = active_http_tape.get()
        live = tape.answer(out.taped) if tape is not None else None
        if isinstance(live, HttpResponse):
            return live
        started = time.perf_counter()
        try:
            entry = await asyncio.to_thread(_send, out)
        except BaseException as exc:
            fault = _fault_entry(exc)
            if tape is not None and live is not None and fault is not None:
                tape.keep(out.taped, live, None, fault, (time.perf_counter() - started) * 1000)
            raise
        if tape is not None and live is not None:
            tape.keep(out.taped, live, entry, None, (time.perf_counter() - started) * 1000)
        return from_entry(entry)

    async def aget(self, url: str, **options: Any) -> HttpResponse:
        return await self.arequest("GET", url, **options)

    async def apost(self, url: str, **options: Any) -> HttpResponse:
        return await self.arequest("POST", url, **options)


http_client = HttpClient()
"""The client suites' tools use (``from callbench.plugin import http_client``)."""
