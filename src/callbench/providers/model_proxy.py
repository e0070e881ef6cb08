"""The agent's model, seen by callbench: an OpenAI- and Anthropic-compatible proxy on 127.0.0.1.

In an agent-under-test run the agent calls its model itself. With the proxy on (``--agent-model-proxy
URL``, ``--record DIR`` or ``--replay DIR`` with ``--agent``), each case gets a base URL of its own
(``http://127.0.0.1:PORT/case/TOKEN/v1`` for OpenAI-compatible clients, ``.../case/TOKEN/anthropic``
for Anthropic's), passed to the agent as ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` /
``CALLBENCH_MODEL_URL``. Every request that arrives there is:

* **forwarded** to the real endpoint (the path after the base URL appended to the upstream base URL),
  with the agent's own key, or callbench's key for that API when the agent sends none or the
  placeholder :data:`PLACEHOLDER_KEY`; a streamed answer (server-sent events) is passed on as it
  arrives;
* **recorded** into the case's model tape under ``--record`` (:mod:`callbench.providers.model_tape`),
  or **answered from it** under ``--replay`` (no endpoint is asked; a request the tape lacks is a miss:
  ``strict`` answers HTTP 404 and makes the case an error record ``cassette_miss``, ``live`` forwards it
  and adds it to the tape);
* **counted**: its tokens (input, output, reasoning, cached), latency, time to first byte of a stream,
  model name and finish reason, which the harness turns into the case's rounds and usage
  (:mod:`callbench.harness.agent_model`).

A request the endpoint could not answer — unreachable, timed out, HTTP 5xx or 429, or a refused
credential (401/403/407) — is an **upstream fault**, which is never the agent's fault: the harness
makes the case an error record (:class:`AgentModelUnavailable`) when the agent then failed to answer.
The route of a case stops answering (404) when its case ends.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbench.errors import ProviderError, UserError
from callbench.providers.model_tape import (
    CREDENTIAL_HEADERS,
    CaseModelTape,
    ModelTapes,
    kept_headers,
    request_hash,
    request_summary,
    swap,
)
from callbench.secrets import get_key, register_secret, scrub

PLACEHOLDER_KEY = "callbench-proxy"
"""The key set in ``OPENAI_API_KEY``/``ANTHROPIC_API_KEY`` while the proxy serves when callbench's
environment has none (an agent's SDK that insists on a key starts): the proxy replaces it with
callbench's key for that API, if it has one (from its keys file)."""
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_UPSTREAMS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
HOP_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "accept-encoding",
        "proxy-connection",
    }
)
PASSED_BACK = ("content-type", "retry-after", "x-request-id", "request-id")
"""Response headers handed back to the agent (besides the body)."""
UPSTREAM_FAULT_STATUS = frozenset({401, 403, 407, 429})
"""Statuses (besides 5xx) that say the endpoint or its credentials failed, not the agent's request."""
CONNECT_TIMEOUT_S = 30.0


class AgentModelUnavailable(ProviderError):
    """The agent's model endpoint failed (unreachable, 5xx, 429, a refused key) and the agent then
    ended without an answer: infrastructure, an error record that ``--resume`` re-runs."""


class ModelProxyError(UserError):
    """The proxy could not start (one line)."""


# --- what an answer says ------------------------------------------------------------------------


@dataclass
class ResponseFacts:
    """What the proxy reads from one answer: usage, model, finish reason, text, number of calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    has_usage: bool = False
    model: str | None = None
    finish_reason: str | None = None
    text: str = ""
    calls: int = 0

    def usage_openai(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            return
        self.has_usage = True
        details = raw.get("completion_tokens_details") or raw.get("output_tokens_details") or {}
        prompt = raw.get("prompt_tokens_details") or raw.get("input_tokens_details") or {}
        self.input_tokens = _int(raw.get("prompt_tokens", raw.get("input_tokens")))
        self.output_tokens = _int(raw.get("completion_tokens", raw.get("output_tokens")))
        self.reasoning_tokens = _int(details.get("reasoning_tokens") if isinstance(details, dict) else 0)
        self.cached_tokens = _int(prompt.get("cached_tokens") if isinstance(prompt, dict) else 0)

    def usage_anthropic(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            return
        self.has_usage = True
        if "input_tokens" in raw or "cache_read_input_tokens" in raw:
            cached = _int(raw.get("cache_read_input_tokens"))
            self.input_tokens = _int(raw.get("input_tokens")) + cached
            self.cached_tokens = cached
        if "output_tokens" in raw:
            self.output_tokens = _int(raw.get("output_tokens"))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def body_facts(api: str, path: str, body: Any) -> ResponseFacts:
    """Facts of a JSON answer of Chat Completions, Responses or Messages."""
    facts = ResponseFacts()
    if not isinstance(body, dict):
        return facts
    facts.model = body.get("model") if isinstance(body.get("model"), str) else None
    if api == "anthropic":
        facts.usage_anthropic(body.get("usage"))
        facts.finish_reason = body.get("stop_reason")
        for block in body.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                facts.text += str(block.get("text") or "")
            elif isinstance(block, dict) and block.get("type") == "tool_use":
                facts.calls += 1
        return facts
    facts.usage_openai(body.get("usage"))
    if isinstance(body.get("choices"), list):  # Chat Completions
        choice = body["choices"][0] if body["choices"] else {}
        message = choice.get("message") or {} if isinstance(choice, dict) else {}
        facts.finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        facts.text = content if isinstance(content, str) else ""
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        facts.calls = len(calls) if isinstance(calls, list) else 0
    elif isinstance(body.get("output"), list):  # Responses
        facts.finish_reason = body.get("status") if isinstance(body.get("status"), str) else None
        for item in body["output"]:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call":
                facts.calls += 1
            elif item.get("type") == "message":
                for part in item.get("content") or []:
                    if isinstance(part, dict) and part.get("type") == "output_text":
                        facts.text += str(part.get("text") or "")
    return facts


_EVENT_SPLIT = re.compile(rb"\r?\n\r?\n")


def split_events(data: bytes) -> list[str]:
    """A server-sent-event body as its events (each without the blank line that ends it)."""
    return [part.decode("utf-8", "surrogateescape") for part in _EVENT_SPLIT.split(data) if part.strip()]


def _event_data(event: str) -> Any:
    lines = [ln[5:].lstrip() for ln in event.splitlines() if ln.startswith("data:")]
    if not lines:
        return None
    text = "\n".join(lines)
    if text.strip() == "[DONE]":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def stream_facts(api: str, path: str, events: Sequence[str]) -> ResponseFacts:
    """Facts of a streamed answer (its events, in order)."""
    facts = ResponseFacts()
    calls: set[Any] = set()
    for event in events:
        data = _event_data(event)
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if api == "anthropic":
            if kind == "message_start" and isinstance(data.get("message"), dict):
                facts.model = data["message"].get("model") or facts.model
                facts.usage_anthropic(data["message"].get("usage"))
            elif kind == "message_delta":
                facts.usage_anthropic(data.get("usage"))
                delta = data.get("delta") or {}
                facts.finish_reason = delta.get("stop_reason") or facts.finish_reason
            elif (
                kind == "content_block_start" and (data.get("content_block") or {}).get("type") == "tool_use"
            ):
                facts.calls += 1
            elif kind == "content_block_delta" and (data.get("delta") or {}).get("type") == "text_delta":
                facts.text += str(data["delta"].get("text") or "")
            continue
        if isinstance(kind, str) and kind.startswith("response."):  # Responses
            if kind in ("response.completed", "response.incomplete", "response.failed"):
                done = body_facts(api, path, data.get("response"))
                done.text = done.text or facts.text
                facts = done
            elif kind == "response.output_text.delta":
                facts.text += str(data.get("delta") or "")
            continue
        facts.model = data.get("model") or facts.model  # Chat Completions chunks
        if data.get("usage"):
            facts.usage_openai(data["usage"])
        for choice in data.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                facts.text += delta["content"]
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    calls.add(call.get("index", call.get("id")))
            facts.finish_reason = choice.get("finish_reason") or facts.finish_reason
    facts.calls = facts.calls or len(calls)
    return facts


# --- one request ----------------------------------------------------------------------------------


@dataclass
class ModelExchange:
    """One request the agent made to its model, as the proxy saw it."""

    seq: int
    api: str
    path: str
    started_at: float
    """Unix time the request arrived."""
    latency_ms: float | None = None
    ttft_ms: float | None = None
    status: int | None = None
    fault: str | None = None
    """``upstream_unreachable``, ``upstream_timeout``, ``upstream_status`` (5xx, 429, 401/403/407),
    ``cassette_miss`` (``None``: answered)."""
    message: str = ""
    replayed: bool = False
    stream: bool = False
    facts: ResponseFacts = field(default_factory=ResponseFacts)

    @property
    def answered(self) -> bool:
        """The endpoint answered (any status that is not an upstream fault)."""
        return self.fault is None and self.status is not None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request": self.seq + 1, "api": self.api, "path": self.path}
        if self.status is not None:
            out["status"] = self.status
        if self.fault:
            out["fault"] = self.fault
        if self.message:
            out["message"] = self.message
        return out


class CaseModelRoute:
    """The proxy's route of one case: its base URLs, what its agent asked, its tape."""

    def __init__(self, proxy: AgentModelProxy, token: str, case_key: str, tape: CaseModelTape | None) -> None:
        self.proxy = proxy
        self.token = token
        self.case_key = case_key
        self.tape = tape
        self.base = f"http://127.0.0.1:{proxy.port}/case/{token}"
        self.exchanges: list[ModelExchange] = []
        self.placeholders: list[tuple[str, str]] = [(self.base, "{model_route}")]
        self.closed = False
        self.tape_hash: str | None = None

    @property
    def openai_url(self) -> str:
        return f"{self.base}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"{self.base}/anthropic"

    def name_placeholders(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Per-case texts written as placeholders in hashes and tapes: ``(text, "{workdir}")`` pairs."""
        found = [(text, name) for text, name in pairs if text]
        self.placeholders = sorted([*self.placeholders, *found], key=lambda p: len(p[0]), reverse=True)

    def stored(self, value: Any) -> Any:
        return swap(value, self.placeholders)

    def restored(self, value: Any) -> Any:
        return swap(value, [(name, text) for text, name in self.placeholders])

    @property
    def misses(self) -> list[ModelExchange]:
        return [x for x in self.exchanges if x.fault == "cassette_miss"]

    @property
    def upstream_faults(self) -> list[ModelExchange]:
        return [x for x in self.exchanges if x.fault and x.fault != "cassette_miss"]


# --- the server ---------------------------------------------------------------------------------


class AgentModelProxy:
    """One aiohttp server on 127.0.0.1 serving every case's model route (``async with``)."""

    def __init__(
        self,
        upstreams: Mapping[str, str],
        tapes: ModelTapes | None = None,
        *,
        port: int = 0,
        read_timeout_s: float | None = None,
        keys: Mapping[str, str | None] | None = None,
    ) -> None:
        self.upstreams = {**DEFAULT_UPSTREAMS, **upstreams}
        self.tapes = tapes
        self.keys = dict(keys) if keys is not None else own_keys()
        """callbench's key per API (``OPENAI_API_KEY``... or the keys file), read when the proxy is made:
        sent when the agent sends none or the placeholder."""
        self.port = port
        self.read_timeout_s = read_timeout_s
        self.routes: dict[str, CaseModelRoute] = {}
        self._runner: Any = None
        self._client: Any = None

    async def start(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=256 << 20)
        app.router.add_route("*", "/case/{token}/v1/{tail:.*}", self._openai)
        app.router.add_route("*", "/case/{token}/anthropic/{tail:.*}", self._anthropic)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            raise ModelProxyError(
                f"the agent's model proxy cannot bind 127.0.0.1:{self.port}: {exc}"
            ) from None
        self.port = self._runner.addresses[0][1]

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def __aenter__(self) -> AgentModelProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- routes ----------------------------------------------------------------------------------
    def open(self, case_key: str, trial: int | str = 1) -> CaseModelRoute:
        """A new route for one case (and trial): its own token, its own tape."""
        tape = self.tapes.tape(case_key, trial) if self.tapes is not None else None
        token = secrets.token_urlsafe(12)
        route = CaseModelRoute(self, token, case_key, tape)
        self.routes[token] = route
        return route

    def close(self, route: CaseModelRoute) -> None:
        """Stop answering the route (404 from now on) and write its tape when it holds anything new."""
        route.closed = True
        self.routes.pop(route.token, None)
        if route.tape is not None:
            route.tape_hash = route.tape.save()

    # -- handling --------------------------------------------------------------------------------
    async def _openai(self, request: Any) -> Any:
        return await self._handle(request, "openai")

    async def _anthropic(self, request: Any) -> Any:
        return await self._handle(request, "anthropic")

    async def _handle(self, request: Any, api: str) -> Any:
        from aiohttp import web

        route = self.routes.get(request.match_info["token"])
        if route is None or route.closed:
            return _error(web, 404, api, "not_found", "callbench: no case is served at this URL (it ended)")
        tail = request.match_info["tail"]
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = {"raw_sha256": _sha(raw)}
        stored = route.stored(body)
        digest = request_hash(request.method, api, tail, stored)
        exchange = ModelExchange(len(route.exchanges), api, tail, time.time())
        exchange.stream = isinstance(body, dict) and bool(body.get("stream"))
        route.exchanges.append(exchange)
        tape = route.tape
        occurrence = tape.occurrence(digest) if tape is not None else 0
        record: dict[str, Any] = {
            "seq": exchange.seq,
            "api": api,
            "method": request.method,
            "path": tail,
            "hash": digest,
            "occurrence": occurrence,
            "request": route.stored(request_summary(api, tail, body)),
            "headers": kept_headers(request.headers),
        }
        if tape is not None and tape.replaying:
            found = tape.find(digest, occurrence)
            if found is not None:
                return await self._replay(request, route, exchange, *found)
            if tape.tapes.miss != "live":
                return self._miss(web, route, exchange, tape, occurrence)
            exchange.message = "cassette miss answered live (--replay-miss live)"
        return await self._forward(request, route, exchange, record, raw)

    def _miss(
        self, web: Any, route: CaseModelRoute, exchange: ModelExchange, tape: CaseModelTape, occurrence: int
    ) -> Any:
        exchange.fault = "cassette_miss"
        expected = tape.expected(exchange.seq)
        if not tape.recorded:
            exchange.message = f"the recording holds no model requests of {tape.key}"
        else:
            nth = f" (occurrence {occurrence + 1} of the same request)" if occurrence else ""
            was = (
                f"; the recording's request {exchange.seq + 1} was {_brief(expected)}"
                if expected
                else (f"; the recording has only {len(tape.recorded)} requests")
            )
            exchange.message = f"the recording holds no answer to model request {exchange.seq + 1}{nth}{was}"
        return _error(
            web, 404, exchange.api, "cassette_miss", f"callbench: cassette miss: {exchange.message}"
        )

    async def _replay(
        self,
        request: Any,
        route: CaseModelRoute,
        exchange: ModelExchange,
        recorded: dict[str, Any],
        timing: dict[str, Any],
    ) -> Any:
        from aiohttp import web

        exchange.replayed = True
        exchange.latency_ms, exchange.ttft_ms = (
            _number(timing.get("latency_ms")),
            _number(timing.get("ttft_ms")),
        )
        fault = recorded.get("fault")
        if isinstance(fault, dict):  # the endpoint failed when it was recorded: it fails the same way
            exchange.fault, exchange.message = str(fault.get("kind")), str(fault.get("message") or "")
            return _error(
                web, int(fault.get("status") or 502), exchange.api, exchange.fault, exchange.message
            )
        exchange.status = int(recorded["status"])
        content_type = str(recorded.get("content_type") or "application/json")
        headers = {"Content-Type": content_type, **dict(recorded.get("response_headers") or {})}
        if isinstance(recorded.get("events"), list):
            events = [str(e) for e in route.restored(recorded["events"])]
            exchange.facts = stream_facts(exchange.api, exchange.path, events)
            self._classify(exchange)
            response = web.StreamResponse(status=exchange.status, headers=headers)
            await response.prepare(request)
            for event in events:
                await response.write(event.encode("utf-8", "surrogateescape") + b"\n\n")
            await response.write_eof()
            return response
        if "body" in recorded:
            body = route.restored(recorded["body"])
            exchange.facts = body_facts(exchange.api, exchange.path, body)
            data = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogateescape")
        else:
            data = str(route.restored(recorded.get("text") or "")).encode("utf-8", "surrogateescape")
        self._classify(exchange)
        return web.Response(status=exchange.status, body=data, headers=headers)

    def _outgoing(self, request: Any, api: str) -> dict[str, str]:
        """The request's headers as sent upstream: hop-by-hop ones dropped, the key passed through (or
        callbench's put in where the agent sent none or the placeholder)."""
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        sent = ""
        for name in list(headers):
            if name.lower() in CREDENTIAL_HEADERS - {"cookie"}:
                value = headers[name]
                key = value.split(" ", 1)[1] if value.lower().startswith("bearer ") else value
                if key and key != PLACEHOLDER_KEY:
                    sent = key
                    register_secret(key)  # kept out of every record and tape
                else:
                    del headers[name]
        if not sent:
            own = self.keys.get(api)
            if own and own != PLACEHOLDER_KEY:
                if api == "anthropic":
                    headers["x-api-key"] = own
                else:
                    headers["Authorization"] = f"Bearer {own}"
        headers["Accept-Encoding"] = "identity"
        return headers

    async def _session(self) -> Any:
        import aiohttp

        if self._client is None or self._client.closed:
            self._client = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=CONNECT_TIMEOUT_S, sock_read=self.read_timeout_s
                ),
                auto_decompress=True,
            )
        return self._client

    async def _forward(
        self,
        request: Any,
        route: CaseModelRoute,
        exchange: ModelExchange,
        record: dict[str, Any],
        raw: bytes,
    ) -> Any:
        import aiohttp
        from aiohttp import web

        api = exchange.api
        url = f"{self.upstreams[api].rstrip('/')}/{exchange.path}"
        if request.query_string:
            url += f"?{request.query_string}"
        started = time.perf_counter()
        client = await self._session()
        response: Any = None
        try:
            async with client.request(
                request.method, url, data=raw or None, headers=self._outgoing(request, api)
            ) as upstream:
                exchange.status = upstream.status
                content_type = upstream.headers.get("Content-Type", "application/octet-stream")
                headers = {"Content-Type": content_type}
                headers.update({k: v for k in PASSED_BACK[1:] if (v := upstream.headers.get(k))})
                record["status"], record["content_type"] = upstream.status, content_type
                passed = {k: v for k, v in headers.items() if k != "Content-Type"}
                if passed:
                    record["response_headers"] = passed
                if content_type.startswith("text/event-stream"):
                    response = web.StreamResponse(status=upstream.status, headers=headers)
                    await response.prepare(request)
                    chunks: list[bytes] = []
                    gone = False
                    async for chunk in upstream.content.iter_any():
                        if exchange.ttft_ms is None:
                            exchange.ttft_ms = (time.perf_counter() - started) * 1000
                        chunks.append(chunk)
                        if not gone:
                            try:
                                await response.write(chunk)
                            except (ConnectionError, RuntimeError):  # the agent hung up: keep reading
                                gone = True
                    events = split_events(b"".join(chunks))
                    exchange.facts = stream_facts(api, exchange.path, events)
                    record["events"] = route.stored(events)
                    if not gone:
                        try:
                            await response.write_eof()
                        except (ConnectionError, RuntimeError):
                            pass
                else:
                    data = await upstream.read()
                    try:
                        parsed = json.loads(data)
                    except ValueError:
                        parsed = None
                    if parsed is not None:
                        exchange.facts = body_facts(api, exchange.path, parsed)
                        record["body"] = route.stored(parsed)
                    else:
                        record["text"] = route.stored(data.decode("utf-8", "surrogateescape"))
                    response = web.Response(status=upstream.status, body=data, headers=headers)
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            return self._upstream_failed(
                web, route, exchange, record, "upstream_timeout", url, exc, 504, response
            )
        except aiohttp.ClientError as exc:
            return self._upstream_failed(
                web, route, exchange, record, "upstream_unreachable", url, exc, 502, response
            )
        finally:
            exchange.latency_ms = (time.perf_counter() - started) * 1000
        self._classify(exchange)
        self._keep(route, exchange, record)
        return response

    def _upstream_failed(
        self,
        web: Any,
        route: CaseModelRoute,
        exchange: ModelExchange,
        record: dict[str, Any],
        kind: str,
        url: str,
        exc: BaseException,
        status: int,
        response: Any,
    ) -> Any:
        exchange.fault = kind
        exchange.status = None
        exchange.message = scrub(f"{_strip_query(url)}: {type(exc).__name__}: {exc}".rstrip(": "))
        record.pop("status", None)
        record["fault"] = {"kind": kind, "status": status, "message": exchange.message}
        for key in ("events", "body", "text", "content_type", "response_headers"):
            record.pop(key, None)
        exchange.latency_ms = None
        self._keep(route, exchange, record)
        if response is not None and getattr(response, "prepared", False):
            return response  # a stream cut short: the agent sees its connection end
        return _error(web, status, exchange.api, kind, f"callbench model proxy: {exchange.message}")

    @staticmethod
    def _classify(exchange: ModelExchange) -> None:
        status = exchange.status
        if status is not None and (status >= 500 or status in UPSTREAM_FAULT_STATUS):
            exchange.fault = "upstream_status"
            exchange.message = exchange.message or f"the model endpoint answered HTTP {status}"

    def _keep(self, route: CaseModelRoute, exchange: ModelExchange, record: dict[str, Any]) -> None:
        tape = route.tape
        if tape is None or route.closed:
            return
        timing = {"latency_ms": _round(exchange.latency_ms), "ttft_ms": _round(exchange.ttft_ms)}
        tape.add(record, {k: v for k, v in timing.items() if v is not None})


def own_keys() -> dict[str, str | None]:
    """callbench's own key for each API, if it has one (environment or keys file)."""
    return {api: get_key(name, required=False) for api, name in KEY_VARIABLES.items()}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, float | int) and not isinstance(value, bool) else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]


def _brief(exchange: dict[str, Any] | None) -> str:
    if not exchange:
        return "none"
    summary = exchange.get("request") or {}
    parts = [str(summary.get("path") or exchange.get("path"))]
    if "messages" in summary:
        parts.append(f"{summary['messages']} messages, the last {summary.get('last_role')}")
    return ", ".join(parts)


def _error(web: Any, status: int, api: str, kind: str, message: str) -> Any:
    """An error answer in the API's own shape, so the agent's SDK reads the message."""
    if api == "anthropic":
        body = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "code": kind}}
    return web.json_response(body, status=status)


__all__ = [
    "PLACEHOLDER_KEY",
    "AgentModelProxy",
    "AgentModelUnavailable",
    "CaseModelRoute",
    "ModelExchange",
    "ResponseFacts",
]
