"""A local HTTP server speaking OpenAI Chat Completions and Anthropic Messages, with faults.

Streams either API (``stream: true``) as server-sent events, cut as :class:`StreamStyle` says
(fragments, missing indexes, interleaved parallel calls, a connection cut mid-event). Strict modes
mimic real servers' refusals: ``refuse_null_content`` (llama-cpp-python), ``reasoning_field``
(DeepSeek's thinking mode), ``thought_signatures`` (Gemini 3).

Runs on 127.0.0.1 only, in a background thread (``with ProtocolServer() as server``) or as a
process (``python protocol_server.py --latency 0.1`` prints the port). Replies come from a
responder callable that returns a protocol-neutral :class:`Turn`; faults queued with
:meth:`ProtocolServer.inject` are served first, one per request, in order.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

Api = Literal["openai", "anthropic"]
FaultKind = Literal[
    "429", "500", "503", "400", "401", "404", "slow", "drop", "truncate", "no_choices", "html", "not_json"
]


@dataclass
class Turn:
    """A scripted model answer: text and calls as ``(name, raw argument string)``."""

    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    input_tokens: int = 10
    """Prompt tokens, cached ones included (OpenAI's ``prompt_tokens``)."""
    output_tokens: int = 5
    """Completion tokens, reasoning ones included (OpenAI's ``completion_tokens``, Anthropic's
    ``output_tokens``)."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, read from the vendor's prompt cache: OpenAI's
    ``prompt_tokens_details.cached_tokens``; Anthropic's ``cache_read_input_tokens``, whose
    ``input_tokens`` then counts only the rest."""
    reasoning_tokens: int = 0
    """Of ``output_tokens``, reasoning: OpenAI's ``completion_tokens_details.reasoning_tokens``
    (Anthropic reports none apart)."""
    ids: list[str] | None = None
    """Call ids to send (default: ids made from the request serial)."""
    thinking: str = ""
    """Anthropic only: a signed thinking block put before the other blocks."""

    def call_id(self, serial: int, index: int, prefix: str) -> str:
        return self.ids[index] if self.ids else f"{prefix}_{serial}_{index}"


@dataclass
class Fault:
    """One injected fault. ``retry_after`` only applies to 429/503, ``delay_s`` to ``slow``."""

    kind: FaultKind
    retry_after: float | None = None
    delay_s: float = 5.0
    message: str = ""
    """Error message of status faults (default: ``injected <status>``)."""


@dataclass
class StreamStyle:
    """How the server streams an OpenAI answer (``stream: true``) as server-sent events."""

    fragment: int = 4
    """Characters per argument and text fragment (1 splits everything to single characters)."""
    no_index: bool = False
    """Leave ``index`` out of tool-call deltas (some servers do)."""
    interleave: bool = False
    """Send the argument fragments of parallel calls in turn (call 0, call 1, call 0...)."""
    split_writes: bool = False
    """Write each event in two pieces, cut mid-line (and mid-character), so lines arrive in parts."""
    cut_after: int | None = None
    """Drop the connection in the middle of event N+1 (a chunked body cut short)."""
    end_after: int | None = None
    """End the body cleanly after N events, with no finish reason and no ``[DONE]``."""
    usage: bool = True
    """Send the usage chunk when the request asks for it (``stream_options.include_usage``)."""
    error_after: int | None = None
    """After N events send an ``error`` event instead of the rest (``error_message``)."""
    error_message: str = "injected stream error"


Responder = Callable[[Api, dict[str, Any]], Turn]
FaultRule = Callable[[Api, dict[str, Any]], "Fault | None"]


def first_tool_responder(api: Api, body: dict[str, Any]) -> Turn:
    """Call the first offered tool with ``{}`` until a tool result arrives, then answer in text."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    answered = last.get("role") == "tool" or (
        isinstance(last.get("content"), list) and any(b.get("type") == "tool_result" for b in last["content"])
    )
    tools = body.get("tools") or []
    if answered or not tools:
        return Turn(text="done")
    tool = tools[0]
    name = tool["function"]["name"] if api == "openai" else tool["name"]
    return Turn(calls=[(name, "{}")])


def render(api: Api, turn: Turn, model: str, serial: int) -> dict[str, Any]:
    """Render a :class:`Turn` as a response body of the given API."""
    if api == "openai":
        calls = [
            {
                "id": turn.call_id(serial, i, "call"),
                "type": "function",
                "function": {"name": n, "arguments": a},
            }
            for i, (n, a) in enumerate(turn.calls)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": openai_usage(turn),
        }
    blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    if turn.thinking:
        blocks.insert(0, {"type": "thinking", "thinking": turn.thinking, "signature": f"sig-{serial}"})
    for i, (name, raw) in enumerate(turn.calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": turn.call_id(serial, i, "toolu"),
                "name": name,
                "input": json.loads(raw),
            }
        )
    return {
        "id": f"msg_{serial}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": "tool_use" if turn.calls else "end_turn",
        "usage": anthropic_usage(turn),
    }


def openai_usage(turn: Turn) -> dict[str, Any]:
    """Chat Completions ``usage``; the details objects only when the turn has cached or reasoning
    tokens (as servers without prompt caching or reasoning leave them out)."""
    usage: dict[str, Any] = {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    if turn.cached_input_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": turn.cached_input_tokens}
    if turn.reasoning_tokens:
        usage["completion_tokens_details"] = {"reasoning_tokens": turn.reasoning_tokens}
    return usage


def anthropic_usage(turn: Turn) -> dict[str, Any]:
    """Messages ``usage``: ``input_tokens`` are the uncached ones, cache reads apart."""
    usage: dict[str, Any] = {
        "input_tokens": turn.input_tokens - turn.cached_input_tokens,
        "output_tokens": turn.output_tokens,
    }
    if turn.cached_input_tokens:
        usage["cache_read_input_tokens"] = turn.cached_input_tokens
        usage["cache_creation_input_tokens"] = 0
    return usage


def sse(data: Any) -> bytes:
    """One server-sent event carrying ``data`` (JSON unless it is already text)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    try:
        return f"data: {text}\n\n".encode()
    except UnicodeEncodeError:  # a lone surrogate: sent as its JSON escape, as a real server would
        return f"data: {json.dumps(data)}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def openai_chunks(rendered: dict[str, Any], style: StreamStyle, include_usage: bool) -> list[bytes]:
    """A rendered Chat Completions reply as the SSE events of its streamed form."""
    message = rendered["choices"][0]["message"]
    base = {"id": rendered["id"], "object": "chat.completion.chunk", "model": rendered["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({**base, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    for field_name in ("reasoning_content", "reasoning"):
        for piece in _pieces(message.get(field_name) or "", style.fragment):
            events.append(chunk({field_name: piece}))
    for piece in _pieces(message.get("content") or "", style.fragment):
        events.append(chunk({"content": piece}))
    calls = message.get("tool_calls") or []
    queues: list[list[dict[str, Any]]] = []
    for i, call in enumerate(calls):
        first: dict[str, Any] = {
            "index": i,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        if "extra_content" in call:
            first["extra_content"] = call["extra_content"]
        rest = [
            {"index": i, "function": {"arguments": p}}
            for p in _pieces(call["function"]["arguments"], style.fragment)
        ]
        queue = [first, *rest]
        if style.no_index:
            for delta in queue:
                delta.pop("index")
        queues.append(queue)
    if style.interleave:
        while any(queues):
            for queue in queues:
                if queue:
                    events.append(chunk({"tool_calls": [queue.pop(0)]}))
    else:
        events.extend(chunk({"tool_calls": [d]}) for queue in queues for d in queue)
    events.append(chunk({}, rendered["choices"][0]["finish_reason"]))
    if include_usage and style.usage:
        events.append(sse({**base, "choices": [], "usage": rendered["usage"]}))
    events.append(sse("[DONE]"))
    return events


def anthropic_events(rendered: dict[str, Any], style: StreamStyle) -> list[bytes]:
    """A rendered Messages reply as the SSE events of its streamed form."""

    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\n".encode() + sse({"type": name, **data})

    usage = rendered["usage"]
    start = {k: v for k, v in rendered.items() if k not in ("content", "stop_reason", "usage")}
    start.update(content=[], stop_reason=None, usage={**usage, "output_tokens": 1})
    events = [event("message_start", {"message": start}), event("ping", {})]
    for i, block in enumerate(rendered["content"]):
        kind = block["type"]
        if kind == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], style.fragment)]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"], style.fragment)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"], ensure_ascii=False)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw, style.fragment)]
        events.append(event("content_block_start", {"index": i, "content_block": opening}))
        events.extend(event("content_block_delta", {"index": i, "delta": d}) for d in deltas)
        events.append(event("content_block_stop", {"index": i}))
    events.append(
        event(
            "message_delta",
            {
                "delta": {"stop_reason": rendered["stop_reason"]},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(event("message_stop", {}))
    return events


class ProtocolServer:
    """Scripted OpenAI/Anthropic-protocol server with fault injection."""

    def __init__(
        self, responder: Responder = first_tool_responder, latency_s: float = 0.0, jitter: float = 0.0
    ) -> None:
        self.responder = responder
        self.latency_s = latency_s
        self.jitter = jitter
        """Latency varies uniformly within ``latency_s * (1 ± jitter)`` (same mean)."""
        self._rng = random.Random(0)
        self.faults: deque[Fault] = deque()
        self.fault_rule: FaultRule | None = None
        """Called for every request after the queue; a returned fault is served instead of a reply."""
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.record_requests = True
        self.fixed_payload: bytes | None = None
        """When set, every successful reply is these bytes (the benchmark: no per-request rendering)."""
        self.echo_key = False
        """Append the API key the request carried (``Authorization``/``x-api-key``) to every reply's
        text and model name: an endpoint that leaks the key inside a normal 200 reply."""
        self.reply_text: str | None = None
        """When set, the text of every reply (the responder still chooses the calls)."""
        self.stop_after: int | None = None
        """Stop listening and drop every connection after this many replies (a server that dies)."""
        self.refuse_null_content = False
        """Answer HTTP 500 to an assistant message whose ``content`` is not a string, as
        llama-cpp-python's server does ("Input should be a valid string")."""
        self.reasoning_field: str | None = None
        """OpenAI: put reasoning text in this field of every reply (``reasoning_content`` or
        ``reasoning``) and refuse (HTTP 400) a request whose assistant tool-call turns do not bring it
        back unchanged in the same field, as DeepSeek's thinking mode does."""
        self.thought_signatures = False
        """OpenAI: give the first tool call of every reply a Gemini thought signature
        (``extra_content.google.thought_signature``) and refuse (HTTP 400) a request that sends such
        a call back without it, or changed, as Gemini 3 does."""
        self.stream = StreamStyle()
        """How streamed answers (``stream: true``) are cut into chunks, and stream faults."""
        self._issued: dict[str, tuple[str, str]] = {}
        """Call id -> (reasoning text, thought signature) this server gave it."""
        self.replies = 0
        self.stopped: asyncio.Event | None = None
        """Set once ``stop_after`` replies were served (created in :meth:`start`, on the serving loop)."""
        self.port = 0
        self._serial = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        """Base URL for OpenAI-style clients (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        """Base URL for Anthropic-style clients (no ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each is served instead of a normal reply, one per request."""
        with self._lock:
            self.faults.extend(faults)

    # -- serving ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Start listening on the running loop."""
        self.stopped = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        if self.stopped is not None and self.stopped.is_set():
            return False  # a dead server: requests on connections still open get no answer
        if self.fixed_payload is not None and not self.faults:
            if self.latency_s:
                await asyncio.sleep(self._latency())
            await self._send(writer, 200, self.fixed_payload)
            return True
        body = json.loads(raw or b"{}")
        api: Api = "anthropic" if path.endswith("/messages") else "openai"
        with self._lock:
            self._serial += 1
            serial = self._serial
            fault = self.faults.popleft() if self.faults else None
        if fault is None and self.fault_rule is not None:
            fault = self.fault_rule(api, body)
        with self._lock:
            if self.record_requests:
                self.requests.append((path, body, headers))
        if self.latency_s:
            await asyncio.sleep(self._latency())
        if fault is None and api == "openai":
            fault = self._refusal(body)
        if fault is not None:
            return await self._fault(fault, api, writer, body, serial)
        turn, model = self.responder(api, body), str(body.get("model", "scripted"))
        if self.reply_text is not None:
            turn = replace(turn, text=self.reply_text)
        if self.echo_key:
            key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
            turn, model = replace(turn, text=f"{turn.text} (you sent key {key})".strip()), f"{model}+{key}"
        rendered = render(api, turn, model, serial)
        if api == "openai":
            self._decorate(rendered, serial)
        if body.get("stream"):
            if api == "openai":
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                events = openai_chunks(rendered, self.stream, include_usage)
            else:
                events = anthropic_events(rendered, self.stream)
            keep = await self._stream(writer, events)
            return self._count_reply() and keep
        await self._send(writer, 200, json.dumps(rendered).encode())
        return self._count_reply()

    def _refusal(self, body: dict[str, Any]) -> Fault | None:
        """The error a strict server gives a request that breaks its rules (None: accepted)."""
        for message in body.get("messages") or []:
            if message.get("role") != "assistant" or not message.get("tool_calls"):
                continue
            if self.refuse_null_content and not isinstance(message.get("content"), str):
                return Fault(
                    "500",
                    message="1 validation error for ChatCompletionRequestAssistantMessage content: "
                    "Input should be a valid string",
                )
            for call in message["tool_calls"]:
                reasoning, signature = self._issued.get(str(call.get("id")), ("", ""))
                if self.reasoning_field and reasoning and message.get(self.reasoning_field) != reasoning:
                    return Fault(
                        "400",
                        message=f"The {self.reasoning_field} of an assistant message with tool calls "
                        "must be passed back to the API",
                    )
                sent = ((call.get("extra_content") or {}).get("google") or {}).get("thought_signature")
                if self.thought_signatures and signature and sent != signature:
                    return Fault(
                        "400",
                        message="Function call is missing a thought_signature in functionCall parts",
                    )
        return None

    def _decorate(self, rendered: dict[str, Any], serial: int) -> None:
        """Add the reasoning and thought signatures this server issues to a rendered reply."""
        message = rendered["choices"][0]["message"]
        reasoning = f"thought {serial}: which tool?" if self.reasoning_field else ""
        if reasoning:
            message[self.reasoning_field] = reasoning
        for i, call in enumerate(message.get("tool_calls") or []):
            # Gemini signs the first call of a turn only (parallel calls after it carry none).
            signature = f"sig-{serial}-{call['id']}" if self.thought_signatures and i == 0 else ""
            if signature:
                call["extra_content"] = {"google": {"thought_signature": signature}}
            self._issued[call["id"]] = (reasoning, signature)

    async def _stream(self, writer: asyncio.StreamWriter, events: list[bytes]) -> bool:
        """Send ``events`` as a chunked SSE body (with the stream faults); False closes the link."""
        style = self.stream
        head = [
            "HTTP/1.1 200 OK",
            "Content-Type: text/event-stream",
            "Transfer-Encoding: chunked",
            "Connection: keep-alive",
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        for n, event in enumerate(events):
            if style.error_after is not None and n == style.error_after:
                event = sse(
                    {"type": "error", "error": {"message": style.error_message, "type": "server_error"}}
                )
                await self._chunk(writer, event, style.split_writes)
                break
            if style.end_after is not None and n == style.end_after:
                break
            if style.cut_after is not None and n == style.cut_after:
                writer.write(f"{len(event):x}\r\n".encode() + event[: len(event) // 2])
                await writer.drain()
                return False  # dropped mid-event: the chunked body never ends
            await self._chunk(writer, event, style.split_writes)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    @staticmethod
    async def _chunk(writer: asyncio.StreamWriter, event: bytes, split: bool) -> None:
        if not split:
            writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            await writer.drain()
            return
        # Two HTTP chunks per event, the cut in the middle of its bytes (so possibly inside a
        # multi-byte character): the client must buffer partial lines.
        cut = max(1, len(event) // 2 + 1)
        for piece in (event[:cut], event[cut:]):
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
            await asyncio.sleep(0.002)

    def _count_reply(self) -> bool:
        """Count a reply; past ``stop_after`` stop serving (False closes this connection)."""
        self.replies += 1
        if self.stop_after is None or self.replies < self.stop_after:
            return True
        if self._server is not None:
            self._server.close()  # no new connections: clients now get "connection refused"
        if self.stopped is not None:
            self.stopped.set()
        return False

    def _latency(self) -> float:
        if not self.jitter:
            return self.latency_s
        return self.latency_s * self._rng.uniform(1 - self.jitter, 1 + self.jitter)

    async def _fault(
        self, fault: Fault, api: Api, writer: asyncio.StreamWriter, body: dict[str, Any], serial: int
    ) -> bool:
        extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
        if fault.kind in {"429", "500", "503", "400", "401", "404"}:
            text = fault.message or f"injected {fault.kind}"
            error = json.dumps({"error": {"message": text, "type": "injected"}}).encode()
            await self._send(writer, int(fault.kind), error, extra)
            return True
        if fault.kind == "slow":
            await asyncio.sleep(fault.delay_s)
            payload = json.dumps(render(api, self.responder(api, body), "scripted", serial)).encode()
            await self._send(writer, 200, payload)
            return True
        if fault.kind == "drop":
            return False  # close without a response
        if fault.kind == "no_choices":
            await self._send(writer, 200, b'{"id": "x", "choices": []}')
            return True
        if fault.kind == "html":  # a proxy's or captive portal's page, with status 200
            page = b"<!DOCTYPE html><html><head><title>Gateway</title></head><body>Log in</body></html>"
            await self._send(writer, 200, page, {"Content-Type": "text/html"})
            return True
        if fault.kind == "not_json":  # a body cut or garbled by a broken server, whole and with 200
            await self._send(writer, 200, b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess')
            return True
        payload = json.dumps(render(api, self.responder(api, body), "scripted", serial)).encode()
        # truncate: announce the full length, send half, close.
        writer.write(self._head(200, len(payload), {}) + payload[: len(payload) // 2])
        await writer.drain()
        return False

    @staticmethod
    def _head(status: int, length: int, extra: dict[str, str]) -> bytes:
        headers = {"Content-Type": "application/json", **extra}  # ``extra`` may name another type
        lines = [
            f"HTTP/1.1 {status} X",
            f"Content-Length: {length}",
            "Connection: keep-alive",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def _send(
        self, writer: asyncio.StreamWriter, status: int, payload: bytes, extra: dict[str, str] | None = None
    ) -> None:
        writer.write(self._head(status, len(payload), extra or {}) + payload)
        await writer.drain()

    # -- thread mode ---------------------------------------------------------------------------
    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._run_thread, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("protocol server did not start")
        return self

    def _run_thread(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self.start())
        self._ready.set()
        self._loop.run_forever()

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop.close()

    async def stop(self) -> None:
        """Stop listening and end every open connection."""
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    """Serve in the foreground; print the port on the first line of stdout."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--jitter", type=float, default=0.0, help="latency varies by +/- this fraction")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=600.0, help="stop after this long")
    parser.add_argument("--text-only", action="store_true", help="always answer in text (one round per case)")
    parser.add_argument("--echo-key", action="store_true", help="put the request's API key in every reply")
    parser.add_argument("--reply-text", default=None, help="the text of every reply (calls unchanged)")
    parser.add_argument("--stop-after", type=int, default=None, help="exit after this many replies")
    args = parser.parse_args()

    async def serve() -> None:
        responder = (lambda api, body: Turn(text="done")) if args.text_only else first_tool_responder
        server = ProtocolServer(responder=responder, latency_s=args.latency, jitter=args.jitter)
        server.record_requests = False
        server.echo_key = args.echo_key
        server.reply_text = args.reply_text
        server.stop_after = args.stop_after
        if args.text_only:
            server.fixed_payload = json.dumps(render("openai", Turn(text="done"), "bench", 0)).encode()
        server.port = args.port
        await server.start()
        print(server.port, flush=True)
        deadline = time.monotonic() + args.max_seconds
        while time.monotonic() < deadline and not (server.stopped and server.stopped.is_set()):
            await asyncio.sleep(0.05)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
