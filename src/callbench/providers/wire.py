"""Helpers shared by the HTTP providers: status mapping, argument parsing, tool-name mapping.

Everything here is pure except :func:`post_json`, the one place that talks HTTP, so that the
retry policy (in :mod:`callbench.providers.model`) sees exactly one error hierarchy.

Non-streamed requests go through :mod:`callbench.providers.lean_http` (a small keep-alive client,
a fraction of aiohttp's CPU per request), streamed ones, proxied ones and those with credentials
in the URL through aiohttp. aiohttp, not httpx: at 100 concurrent requests httpcore's connection pool
spends milliseconds of CPU per request scanning its connections (measured 7.4 ms vs 0.21 ms
per request, 46.7 s vs 2.6 s wall for 2,000 requests at 100 ms latency; see bench/concurrency.py).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import re
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

try:  # a C JSON codec: encodes request bodies about 10x faster than the stdlib
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib is the fallback
    _orjson = None  # type: ignore[assignment]

from callbench.errors import FatalProviderError, ProviderError, RateLimitedError, TransientProviderError
from callbench.providers.lean_http import ConnectionFault, LeanPool, Target, TruncatedBody
from callbench.secrets import scrub
from callbench.types.contract import ToolContract
from callbench.types.jsoncodec import MAX_DEPTH, JsonTextProblem, depth_exceeds, parse_json_value
from callbench.types.messages import Message, ToolCall

if TYPE_CHECKING:  # aiohttp takes 0.2-0.6 s to import (it builds SSL contexts): https and proxies only
    import aiohttp

HTTP_CLIENT_ENV = "CALLBENCH_HTTP_CLIENT"
"""Set to ``aiohttp`` to send every request through aiohttp instead of the lean client."""
_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
# Statuses worth retrying besides 5xx: request timeout, conflict, too early, rate limit.
_RETRY_STATUSES = {408, 409, 425, 429}
_CONTEXT_LIMIT = re.compile(
    r"context[ _-]?length|context window|maximum context|prompt is too long|too many tokens"
    r"|input is too long|exceeds the available context size|context size",
    re.IGNORECASE,
)
# Error codes (or types) servers give a request longer than the context window: OpenAI and vLLM
# ``context_length_exceeded``, llama-server ``exceed_context_size_error``.
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_FIX_HINTS = {
    400: "the request was rejected: check model options (unsupported parameter, tool schema, context length)",
    401: "authentication failed: check the API key ({key_env})",
    403: "access denied: the API key ({key_env}) may not have access to model '{model}'",
    404: "not found: check the model name '{model}' and the base URL {base_url}",
    422: "the request was rejected as invalid: check model options and tool schemas",
}


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Parse a tool call's raw arguments into a dict, or explain why that is impossible.

    Args:
        raw: The argument payload as received: normally a JSON string, sometimes already a dict.

    Returns:
        ``(arguments, None)`` on success, ``(None, reason)`` for malformed or non-object input.
    """
    if isinstance(raw, dict):
        if depth_exceeds(raw):
            return None, f"arguments nest deeper than {MAX_DEPTH} levels"
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        # An empty argument string is how several servers encode "no arguments".
        return {}, None
    if not isinstance(raw, str):
        return None, f"arguments are a {type(raw).__name__}, not a JSON object"
    try:
        value = parse_json_value(raw)
    except json.JSONDecodeError as exc:
        return None, f"malformed JSON arguments: {exc.msg} at char {exc.pos}"
    except JsonTextProblem as exc:
        # Valid JSON callbench cannot hold as a value: the call is malformed, its text kept as sent.
        return None, f"unusable JSON arguments: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, None


def round_prefix(messages: list[Message]) -> str:
    """Prefix for made-up call ids, unique to the round (some servers and all text formats give none)."""
    return f"call_r{sum(m.role == 'assistant' for m in messages) + 1}"


def unique_call_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """Give every call of one turn a distinct id.

    A model (or server) that repeats a call id in one turn would make the tool results
    ambiguous and the next request invalid. The repeat keeps its id with a ``#dupN`` suffix, so
    the trace shows what happened and the conversation stays well-formed.
    """
    seen: dict[str, int] = {}
    out = []
    for call in calls:
        count = seen.get(call.id, 0)
        seen[call.id] = count + 1
        out.append(call if count == 0 else call.model_copy(update={"id": f"{call.id}#dup{count + 1}"}))
    return out


def wire_schema(tool: ToolContract) -> dict[str, Any]:
    """The parameters schema sent to providers (strictified per the contract; never empty)."""
    return tool.provider_schema() or {"type": "object", "properties": {}}


def raw_text(raw: Any) -> str:
    """Return the raw argument payload as text for the trace."""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


@dataclass
class ToolNameMap:
    """Reversible mapping between tool names and names a provider accepts.

    Providers restrict tool names to ``[A-Za-z0-9_-]{1,64}``; suites use names such as
    ``math.factorial``. Invalid characters become ``_``; collisions get a numeric suffix.
    """

    to_wire: dict[str, str] = field(default_factory=dict)
    from_wire: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, names: list[str]) -> ToolNameMap:
        """Build the mapping for one request's tool names."""
        mapping = cls()
        taken = {n for n in names if _NAME_OK.match(n)}
        for name in names:
            wire = name if _NAME_OK.match(name) else _free_name(name, taken)
            taken.add(wire)
            mapping.to_wire[name] = wire
            mapping.from_wire[wire] = name
        return mapping

    def wire(self, name: str) -> str:
        """Name to send for ``name`` (names outside the request's tools pass unchanged)."""
        return self.to_wire.get(name, name)

    def original(self, wire: str) -> str:
        """Original name for a name the model emitted (unknown names pass unchanged)."""
        return self.from_wire.get(wire, wire)


def _free_name(name: str, taken: set[str]) -> str:
    base = _NAME_BAD_CHARS.sub("_", name)[:60] or "tool"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Parse a ``Retry-After`` header (seconds or HTTP date) into seconds from now."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (now if now is not None else time.time()))


class ContextLengthError(ProviderError):
    """The request is longer than the model's context window.

    Neither retryable nor a reason to stop the run (peers retry these as infrastructure errors, or
    stop the whole run; both are wrong): the round loop ends that case's episode there and it is
    scored with the reason ``context_overflow``, counted apart in the summary.
    """


@dataclass(frozen=True)
class Endpoint:
    """What error messages may say about an endpoint (never the key itself)."""

    provider: str
    model: str
    base_url: str
    key_env: str | None


_WANTS_RESPONSES = re.compile(r"/v1/responses|responses api|use the responses", re.IGNORECASE)
"""An error message that sends the client to the Responses API."""


def error_for_status(status: int, body: str, headers: Mapping[str, str], where: Endpoint) -> ProviderError:
    """Map a non-2xx HTTP response to the error the retry policy understands."""
    # The detail ends up in an error line on the terminal: no key, no live control sequences.
    message, codes = _error_fields(body)
    detail = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", scrub(message))[:300]
    prefix = f"{where.provider} HTTP {status}"
    if status == 429:
        wait = retry_after_seconds(headers.get("retry-after"))
        return RateLimitedError(f"{prefix}: rate limited: {detail}", retry_after=wait)
    if status >= 500 or status in _RETRY_STATUSES:
        wait = retry_after_seconds(headers.get("retry-after"))
        return TransientProviderError(f"{prefix}: {detail}", retry_after=wait)
    if status in (400, 413, 422) and (codes & _CONTEXT_CODES or _CONTEXT_LIMIT.search(detail)):
        return ContextLengthError(
            f"{prefix}: the conversation does not fit the model's context window ({detail})"
        )
    hint = _FIX_HINTS.get(status, "the request was refused: check the model string and options")
    if where.provider != "openai-responses" and _WANTS_RESPONSES.search(detail):
        # e.g. GPT-5.x: "Function tools with reasoning_effort are not supported ... use /v1/responses"
        hint = f"this model needs the Responses API for this request: use openai-responses:{where.model}"
    hint = hint.format(
        key_env=where.key_env or "no key configured", model=where.model, base_url=where.base_url
    )
    return FatalProviderError(f"{prefix}: {hint} ({detail})")


def _error_fields(body: str) -> tuple[str, set[str]]:
    """The error message of a response body and its ``code``/``type`` values (lower case)."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return " ".join(body.split()) or "empty body", set()
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        codes = {str(err[k]).lower() for k in ("code", "type") if isinstance(err.get(k), str)}
        return str(err.get("message") or err.get("detail") or err), codes
    return str(err), set()


def stream_error(payload: Any, where: Endpoint) -> ProviderError:
    """The error for an ``error`` event inside a stream (the HTTP status was already 200).

    Mapped as its status would be when it names one (``code: 429``...), else as a server fault.
    """
    err = payload.get("error", payload) if isinstance(payload, dict) else payload
    body = json.dumps({"error": err})
    code = err.get("code") if isinstance(err, dict) else None
    if isinstance(code, int) and 400 <= code <= 599:
        status = code
    else:
        message, codes = _error_fields(body)
        status = 400 if codes & _CONTEXT_CODES or _CONTEXT_LIMIT.search(message) else 500
    return error_for_status(status, body, {}, where)


async def post_json(
    session: aiohttp.ClientSession | ClientHolder,
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    where: Endpoint,
    timeout_s: float = 120.0,
) -> dict[str, Any]:
    """POST ``payload`` and return the decoded JSON object, or raise a ``ProviderError``."""
    data = dumps_bytes(payload)
    lean = session.lean_for(url) if isinstance(session, ClientHolder) else None
    try:
        if lean is not None:
            status, raw, response_headers = await _post_lean(*lean, data, headers, where, timeout_s)
        else:
            status, raw, response_headers = await _post_aiohttp(session, url, data, headers, where, timeout_s)
    except TimeoutError:
        raise TransientProviderError(
            f"{where.provider}: request to {url} timed out after {timeout_s:g}s"
        ) from None
    if status >= 300:
        raise error_for_status(status, raw.decode("utf-8", "replace"), response_headers, where)
    return _json_object(raw, where)


async def _post_lean(
    pool: LeanPool,
    target: Target,
    data: bytes,
    headers: dict[str, str],
    where: Endpoint,
    timeout_s: float,
) -> tuple[int, bytes, Mapping[str, str]]:
    try:
        reply = await pool.post(target, data, {"Content-Type": "application/json", **headers}, timeout_s)
    except TruncatedBody:
        raise TransientProviderError(f"{where.provider}: truncated response body") from None
    except ConnectionFault as exc:
        raise _connection_error(where, "ConnectionError", str(exc)) from None
    except ValueError as exc:  # a header with a line break: the configuration is wrong, not the server
        raise FatalProviderError(f"{where.provider}: invalid request header: {exc}") from None
    return reply.status, reply.body, reply.headers


async def _post_aiohttp(
    session: aiohttp.ClientSession | ClientHolder,
    url: str,
    data: bytes,
    headers: dict[str, str],
    where: Endpoint,
    timeout_s: float,
) -> tuple[int, bytes, Mapping[str, str]]:
    import aiohttp

    client = session.get() if isinstance(session, ClientHolder) else session
    try:
        async with client.post(
            url,
            data=data,
            headers={"Content-Type": "application/json", **headers},
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as reply:
            return reply.status, await reply.read(), reply.headers
    except TimeoutError:  # aiohttp's timeouts are ClientErrors too: post_json words them
        raise
    except aiohttp.ClientPayloadError:
        raise TransientProviderError(f"{where.provider}: truncated response body") from None
    except (aiohttp.ClientError, OSError) as exc:
        # Dropped connections, resets, refused connects: the server may come back.
        raise _connection_error(where, type(exc).__name__, str(exc)) from None


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: its ``event:`` name (if any), its data, and when it arrived."""

    event: str | None
    data: str
    at: float
    """``time.perf_counter()`` when the event was complete."""


@dataclass
class StreamReply:
    """What a streamed request returned: the events, or a whole JSON body from a server that
    answered ``stream: true`` with a plain response."""

    events: list[SSEEvent] = field(default_factory=list)
    body: dict[str, Any] | None = None
    started: float = 0.0
    """``time.perf_counter()`` just before the request was sent."""


def parse_sse_lines(lines: list[str], at: float = 0.0) -> list[SSEEvent]:
    """Parse server-sent-event lines (without their line ends) into events.

    Per the SSE format: ``data:`` lines accumulate (joined by newlines), ``event:`` names the
    event, a blank line dispatches it, lines starting with ``:`` are comments. A last event not
    followed by a blank line is dispatched too (servers that close right after it).
    """
    parser = _SSEParser()
    out: list[SSEEvent] = []
    for line in lines:
        out.extend(parser.line(line, at))
    out.extend(parser.line("", at))
    return out


class _SSEParser:
    def __init__(self) -> None:
        self.event: str | None = None
        self.data: list[str] = []

    def line(self, line: str, at: float) -> list[SSEEvent]:
        if not line:
            if not self.data:
                self.event = None
                return []
            event = SSEEvent(self.event, "\n".join(self.data), at)
            self.event, self.data = None, []
            return [event]
        if line.startswith(":"):
            return []
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.data.append(value)
        elif name == "event":
            self.event = value
        return []


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder: feed the body's bytes as they arrive, get the
    events each chunk completes (lines are decoded whole, so a character split across chunks is
    read right)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._parser = _SSEParser()

    def feed(self, chunk: bytes, at: float = 0.0) -> list[SSEEvent]:
        """The events completed by ``chunk`` (``at``: when it arrived)."""
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [
            event
            for raw in lines
            for event in self._parser.line(raw.rstrip(b"\r").decode("utf-8", "surrogateescape"), at)
        ]

    def close(self, at: float = 0.0) -> list[SSEEvent]:
        """The events left when the body ended (a last event without its blank line)."""
        rest, self._buffer = self._buffer, b""
        return self._parser.line(
            rest.rstrip(b"\r").decode("utf-8", "surrogateescape"), at
        ) + self._parser.line("", at)


async def post_sse(
    session: aiohttp.ClientSession | ClientHolder,
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    where: Endpoint,
    timeout_s: float = 120.0,
    done: str | None = "[DONE]",
) -> StreamReply:
    """POST ``payload`` and read the server-sent events of the answer, timing each one.

    Reading stops at an event whose data is ``done`` (OpenAI's ``[DONE]``) or when the server
    ends the body. A body cut off mid-transfer raises :class:`TransientProviderError` saying how
    many events had arrived; whether the events that did arrive make a complete answer is for the
    caller to judge (only it knows what the last event must be).

    Raises:
        ProviderError: A non-2xx status (mapped like :func:`post_json`), a timeout, a cut stream.
    """
    import aiohttp

    client = session.get() if isinstance(session, ClientHolder) else session
    reply_out = StreamReply(started=time.perf_counter())
    decoder = SSEDecoder()
    try:
        async with client.post(
            url,
            data=dumps_bytes(payload),
            headers={"Content-Type": "application/json", "Accept": "text/event-stream", **headers},
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as reply:
            if reply.status >= 300:
                raw = await reply.read()
                raise error_for_status(reply.status, raw.decode("utf-8", "replace"), reply.headers, where)
            if "json" in reply.headers.get("content-type", "") and "event-stream" not in reply.headers.get(
                "content-type", ""
            ):
                # The server ignored ``stream: true`` and answered in one piece.
                reply_out.body = _json_object(await reply.read(), where)
                return reply_out
            async for chunk in reply.content.iter_any():
                for event in decoder.feed(chunk, time.perf_counter()):
                    reply_out.events.append(event)
                    if done is not None and event.data.strip() == done:
                        return reply_out
            reply_out.events.extend(decoder.close(time.perf_counter()))
            if done is not None:
                # The body ended before the done event: a server that failed mid-answer may close
                # this connection right after (uvicorn does), so it is not handed to the next request.
                reply.close()
            return reply_out
    except TimeoutError:
        raise TransientProviderError(
            f"{where.provider}: streamed request to {url} timed out after {timeout_s:g}s "
            f"({len(reply_out.events)} event(s) received)"
        ) from None
    except aiohttp.ClientPayloadError as exc:
        raise TransientProviderError(
            f"{where.provider}: the stream was cut off after {len(reply_out.events)} event(s), before "
            f"the answer was complete ({type(exc).__name__}: {scrub(str(exc))[:160]})"
        ) from None
    except (aiohttp.ClientError, OSError) as exc:
        raise _connection_error(where, type(exc).__name__, str(exc)) from None


def _json_object(raw: bytes, where: Endpoint) -> dict[str, Any]:
    return json_object_body(raw, where.provider)


def json_object_body(raw: bytes, provider: str) -> dict[str, Any]:
    """A response body read as a JSON object; an unreadable one is the endpoint's transient fault."""
    try:
        body = loads_bytes(raw)
    except json.JSONDecodeError:
        raise TransientProviderError(f"{provider}: {unreadable_body(raw)}") from None
    except RecursionError:
        # Only an object-valued part (e.g. Anthropic's tool input) can nest this deep; the body
        # cannot be read at all, so it is the endpoint's unusable answer (string arguments that
        # nest deep are read and scored as the model's malformed call).
        raise TransientProviderError(
            f"{provider}: the response body nests deeper than Python's JSON reader follows ({len(raw)} bytes)"
        ) from None
    if not isinstance(body, dict):
        raise TransientProviderError(f"{provider}: response body is not a JSON object")
    return body


def _connection_error(where: Endpoint, kind: str, text: str) -> TransientProviderError:
    detail = scrub(text)[:200]
    return TransientProviderError(
        f"{where.provider}: connection error ({kind}{': ' + detail if detail else ''})"
    )


_HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def unreadable_body(raw: bytes) -> str:
    """Why a 2xx body is no JSON, for the error line: an HTML page (a proxy's, a login portal's, a web
    server's at the wrong base URL) says so with its title; anything else is cut or garbled JSON."""
    head = raw[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head:
        found = _HTML_TITLE.search(raw[:8192])
        title = " ".join(found.group(1).decode("utf-8", "replace").split())[:80] if found else ""
        named = f", titled {scrub(title)!r}" if title else ""
        return f"an HTML page, not JSON ({len(raw)} bytes{named}): a proxy, a login page or a wrong base URL?"
    return f"truncated or invalid JSON body ({len(raw)} bytes)"


def dumps_bytes(payload: Any) -> bytes:
    """``payload`` as UTF-8 JSON (orjson when installed; the stdlib for what orjson refuses)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(payload)
        except TypeError:  # orjson.JSONEncodeError: non-str keys, integers past 64 bits...
            pass
    try:
        return json.dumps(payload, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate (a model's text sent back): its JSON escape
        return json.dumps(payload, ensure_ascii=True).encode()


def loads_bytes(raw: bytes) -> Any:
    """Decode a JSON body with the stdlib: orjson (3.8) reads integers past 64 bits as floats, and a
    response's numbers must reach the record as the server wrote them.

    Bytes that are not UTF-8 (a server cutting a multi-byte character) are kept as lone surrogates
    (``surrogateescape``): the text is the model's, stored losslessly and scored as sent."""
    return json.loads(raw.decode("utf-8-sig", "surrogateescape"))


class ClientHolder:
    """One pooled ``aiohttp.ClientSession`` per event loop.

    Sessions are bound to the loop that created them; ``callbench.run`` starts a fresh loop per
    run, so the session is rebuilt when the running loop changes.
    """

    def __init__(self, pool_size: int = 0) -> None:
        self._pool_size = pool_size
        self._session: aiohttp.ClientSession | None = None
        self._loop: object | None = None
        self._lean: LeanPool | None = None
        self._lean_loop: object | None = None
        self._targets: dict[str, Target | None] = {}
        # The lean client serves plain JSON requests when no proxy is configured (aiohttp reads the
        # proxy settings and honours NO_PROXY); CALLBENCH_HTTP_CLIENT=aiohttp sends everything there.
        self._lean_allowed = os.environ.get(HTTP_CLIENT_ENV, "").strip().lower() != "aiohttp" and not (
            urllib.request.getproxies()
        )

    def lean_for(self, url: str) -> tuple[LeanPool, Target] | None:
        """The lean client's pool for the running loop and the URL's target, or ``None`` when the
        request goes through aiohttp (see :mod:`callbench.providers.lean_http`)."""
        if not self._lean_allowed:
            return None
        if url not in self._targets:
            self._targets[url] = Target.of(url)
        target = self._targets[url]
        if target is None:
            return None
        loop = asyncio.get_running_loop()
        if self._lean is None or self._lean_loop is not loop:
            self._lean, self._lean_loop = LeanPool(), loop
        return self._lean, target

    def get(self) -> aiohttp.ClientSession:
        """Return the session for the running loop."""
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            # Connection limiting is the Model wrapper's job (0 = no pool limit here).
            connector = aiohttp.TCPConnector(limit=self._pool_size, ttl_dns_cache=300)
            # Reading proxy settings and .netrc on every request costs ~0.15 ms of CPU; only pay it
            # when a proxy is configured.
            self._session = aiohttp.ClientSession(
                connector=connector, trust_env=bool(urllib.request.getproxies())
            )
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        """Close the session and the lean client's connections of the running loop, if any."""
        if self._lean is not None and self._lean_loop is asyncio.get_running_loop():
            self._lean.close()
        self._lean = None
        if self._session is not None and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None
