"""A local HTTP server speaking OpenAI Chat Completions and Anthropic Messages, with faults.

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
FaultKind = Literal["429", "500", "503", "400", "401", "404", "slow", "drop", "truncate", "no_choices"]


@dataclass
class Turn:
    """A scripted model answer: text and calls as ``(name, raw argument string)``."""

    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    input_tokens: int = 10
    output_tokens: int = 5
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
            "usage": {
                "prompt_tokens": turn.input_tokens,
                "completion_tokens": turn.output_tokens,
                "total_tokens": turn.input_tokens + turn.output_tokens,
            },
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
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    }


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
        if fault is not None:
            return await self._fault(fault, api, writer, body, serial)
        turn, model = self.responder(api, body), str(body.get("model", "scripted"))
        if self.reply_text is not None:
            turn = replace(turn, text=self.reply_text)
        if self.echo_key:
            key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
            turn, model = replace(turn, text=f"{turn.text} (you sent key {key})".strip()), f"{model}+{key}"
        payload = json.dumps(render(api, turn, model, serial))
        await self._send(writer, 200, payload.encode())
        return self._count_reply()

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
        payload = json.dumps(render(api, self.responder(api, body), "scripted", serial)).encode()
        # truncate: announce the full length, send half, close.
        writer.write(self._head(200, len(payload), {}) + payload[: len(payload) // 2])
        await writer.drain()
        return False

    @staticmethod
    def _head(status: int, length: int, extra: dict[str, str]) -> bytes:
        lines = [
            f"HTTP/1.1 {status} X",
            "Content-Type: application/json",
            f"Content-Length: {length}",
            "Connection: keep-alive",
            *(f"{k}: {v}" for k, v in extra.items()),
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
