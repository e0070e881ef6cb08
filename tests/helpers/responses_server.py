"""A local HTTP server speaking the OpenAI Responses API (``POST /v1/responses``), with faults.

It checks every request the way the documented API does and answers HTTP 400 (OpenAI's error
shape) when it is wrong: unknown parameters, unknown or malformed input items, tools in the Chat
Completions shape, a ``tool_choice`` naming no offered tool, a ``strict`` schema that is not strict,
a ``function_call_output`` whose ``call_id`` no earlier ``function_call`` carries, and reasoning
items that are not exactly the ones it issued. Reasoning items carry an ``encrypted_content`` token
when the request asks for ``reasoning.encrypted_content``; one that comes back altered (any field,
any byte of the token), out of place (not directly before the item that followed it) or alone at
the end of the input is refused; one issued without a token is "not found" under ``store: false``.

Replies come from a responder (``body -> Reply``); :func:`by_round` scripts one reply per model
round. Streaming (``"stream": true``) sends the documented server-sent events. Faults queued with
:meth:`ResponsesServer.inject` are served first, one per request. Runs on 127.0.0.1 only, in a
background thread (``with ResponsesServer() as server``).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Self

FaultKind = Literal[
    "429", "500", "context", "chat_body", "404", "failed", "failed_context", "cut", "eof", "reasoning_400"
]
_PARAMS = {
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "reasoning",
    "store",
    "include",
    "stream",
    "metadata",
    "text",
    "truncation",
    "user",
    "previous_response_id",
    "service_tier",
}
_INCLUDES = {
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
    "file_search_call.results",
    "web_search_call.action.sources",
}
_EFFORTS = {"none", "minimal", "low", "medium", "high", "xhigh"}
_SUMMARIES = {"auto", "concise", "detailed"}
_ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning", "item_reference")
_ROLES = {"user", "assistant", "system", "developer"}
_MODEL_ITEMS = {"reasoning", "function_call"}


@dataclass
class Reply:
    """One scripted model answer."""

    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    """``(wire tool name, raw argument string)``."""
    reasoning: list[str] = field(default_factory=list)
    """One reasoning item per entry, its summary text (``""``: an item with an empty summary)."""
    interleave: bool = False
    """Put reasoning item ``i`` directly before call ``i`` (default: all reasoning first)."""
    refusal: str | None = None
    incomplete: bool = False
    """``status: incomplete`` with ``incomplete_details.reason = max_output_tokens``."""
    call_ids: list[str] | None = None
    omit_call_id: bool = False
    """Leave ``call_id`` out of the function_call items (a broken server)."""
    usage: dict[str, Any] | None = None
    empty_output: bool = False
    """``output: []``: nothing at all."""


Responder = Callable[[dict[str, Any]], Reply]


def model_rounds(items: list[Any]) -> int:
    """How many model turns the input already holds (runs of reasoning/function_call/assistant items)."""
    rounds, inside = 0, False
    for item in items:
        model_item = isinstance(item, dict) and (
            item.get("type") in _MODEL_ITEMS or (_is_message(item) and item.get("role") == "assistant")
        )
        if model_item and not inside:
            rounds += 1
        inside = bool(model_item)
    return rounds


def by_round(*replies: Reply) -> Responder:
    """A responder that answers round ``n`` with ``replies[n]`` (the last one past the end)."""

    def respond(body: dict[str, Any]) -> Reply:
        items = body.get("input") if isinstance(body.get("input"), list) else []
        return replies[min(model_rounds(items), len(replies) - 1)]

    return respond


def _is_message(item: dict[str, Any]) -> bool:
    return item.get("type") == "message" or ("type" not in item and "role" in item)


class RequestError(Exception):
    """A request the API refuses: status, message, param, code."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None, status: int = 400):
        super().__init__(message)
        self.status, self.param, self.code = status, param, code


@dataclass
class Fault:
    """One injected fault (``retry_after`` for 429, ``after_events`` for stream cuts)."""

    kind: FaultKind
    retry_after: float | None = None
    after_events: int = 4
    code: str = "invalid_prompt"


class ResponsesServer:
    """Scripted Responses API server with request validation, streaming and fault injection."""

    def __init__(self, responder: Responder | None = None, reasoning_model: bool = False) -> None:
        self.responder = responder or by_round(Reply(text="done"))
        self.reasoning_model = reasoning_model
        """Refuse ``temperature`` beside ``reasoning`` (as OpenAI's reasoning models do)."""
        self.faults: deque[Fault] = deque()
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.rejections: list[str] = []
        """The message of every 400 the validator gave (tests assert it stays empty)."""
        self.issued_reasoning: dict[str, dict[str, Any]] = {}
        """Every reasoning item sent, by id, as sent."""
        self.follower: dict[str, tuple[str, str | None]] = {}
        """Reasoning id -> (type, id) of the output item right after it."""
        self.issued_calls: dict[str, dict[str, Any]] = {}
        self.returned_reasoning = 0
        """How many issued reasoning items came back (valid) in later requests."""
        self.empty_stream_output = False
        """Streaming: ``response.completed`` carries ``output: []`` (clients must assemble the events)."""
        self.port = 0
        self._serial = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        """Base URL for clients (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each is served instead of a normal reply, one per request."""
        with self._lock:
            self.faults.extend(faults)

    # -- validation ---------------------------------------------------------------------------
    def validate(self, body: dict[str, Any]) -> None:
        """Raise :class:`RequestError` for whatever the documented API would refuse."""
        unknown = sorted(set(body) - _PARAMS)
        if unknown:
            raise RequestError(f"Unknown parameter: '{unknown[0]}'.", unknown[0], "unknown_parameter")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise RequestError("Missing required parameter: 'model'.", "model")
        include = body.get("include") or []
        if not isinstance(include, list) or any(i not in _INCLUDES for i in include):
            raise RequestError(f"Invalid value for 'include': {include!r}.", "include")
        self._check_reasoning_param(body)
        names = self._check_tools(body.get("tools"))
        self._check_tool_choice(body.get("tool_choice"), names)
        if "parallel_tool_calls" in body and not isinstance(body["parallel_tool_calls"], bool):
            raise RequestError(
                "Invalid type for 'parallel_tool_calls': expected a boolean.", "parallel_tool_calls"
            )
        tokens = body.get("max_output_tokens")
        if tokens is not None and (not isinstance(tokens, int) or tokens < 16):
            raise RequestError(
                "Invalid 'max_output_tokens': integer below minimum value 16.", "max_output_tokens"
            )
        items = body.get("input")
        if isinstance(items, str):
            return
        if not isinstance(items, list):
            raise RequestError("Invalid type for 'input': expected a string or an array.", "input")
        self._check_items(items, body.get("store", True) is False)

    def _check_reasoning_param(self, body: dict[str, Any]) -> None:
        reasoning = body.get("reasoning")
        if reasoning is None:
            return
        if not isinstance(reasoning, dict):
            raise RequestError("Invalid type for 'reasoning': expected an object.", "reasoning")
        if reasoning.get("effort") not in _EFFORTS:
            raise RequestError(
                f"Invalid value: '{reasoning.get('effort')}'. Supported values are: "
                f"{', '.join(sorted(_EFFORTS))}.",
                "reasoning.effort",
            )
        if "summary" in reasoning and reasoning["summary"] not in _SUMMARIES:
            raise RequestError(f"Invalid value: '{reasoning['summary']}'.", "reasoning.summary")
        if self.reasoning_model and "temperature" in body:
            raise RequestError(
                "Unsupported parameter: 'temperature' is not supported with this model.", "temperature"
            )

    def _check_tools(self, tools: Any) -> set[str]:
        if tools is None:
            return set()
        if not isinstance(tools, list):
            raise RequestError("Invalid type for 'tools': expected an array.", "tools")
        names: set[str] = set()
        for i, tool in enumerate(tools):
            where = f"tools[{i}]"
            if not isinstance(tool, dict) or tool.get("type") != "function":
                raise RequestError(f"Invalid value for '{where}.type'.", f"{where}.type")
            if "function" in tool:  # the Chat Completions shape
                raise RequestError(f"Unknown parameter: '{where}.function'.", f"{where}.function")
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                raise RequestError(f"Missing required parameter: '{where}.name'.", f"{where}.name")
            parameters = tool.get("parameters")
            if not isinstance(parameters, dict):
                raise RequestError(
                    f"Missing required parameter: '{where}.parameters'.", f"{where}.parameters"
                )
            if "strict" in tool and not isinstance(tool["strict"], bool):
                raise RequestError(f"Invalid type for '{where}.strict'.", f"{where}.strict")
            if tool.get("strict", True):
                problem = _strict_problem(parameters)
                if problem:
                    raise RequestError(
                        f"Invalid schema for function '{name}': In context=(), {problem}.",
                        f"{where}.parameters",
                    )
            names.add(name)
        return names

    @staticmethod
    def _check_tool_choice(choice: Any, names: set[str]) -> None:
        if choice is None or choice in ("auto", "none", "required"):
            return
        if isinstance(choice, dict) and choice.get("type") == "function" and choice.get("name") in names:
            return
        raise RequestError(f"Invalid value for 'tool_choice': {json.dumps(choice)}.", "tool_choice")

    def _check_items(self, items: list[Any], stateless: bool) -> None:
        call_ids: set[str] = set()
        for i, item in enumerate(items):
            where = f"input[{i}]"
            if not isinstance(item, dict):
                raise RequestError(f"Invalid type for '{where}': expected an object.", where)
            kind = item.get("type", "message" if "role" in item else None)
            if kind not in _ITEM_TYPES:
                raise RequestError(
                    f"Invalid value: '{kind}'. Supported values are: {', '.join(_ITEM_TYPES)}.",
                    f"{where}.type",
                )
            if kind == "message":
                _check_message(item, where)
            elif kind == "function_call":
                self._check_call(item, where)
                call_ids.add(item["call_id"])
            elif kind == "function_call_output":
                if item.get("call_id") not in call_ids:
                    raise RequestError(
                        f"No tool call found for function call output with call_id {item.get('call_id')}.",
                        where,
                    )
                if not isinstance(item.get("output"), str):
                    raise RequestError(
                        f"Invalid type for '{where}.output': expected a string.", f"{where}.output"
                    )
            elif kind == "reasoning":
                self._check_reasoning_item(items, i, stateless)
            else:
                raise RequestError("item_reference is not supported when 'store' is false.", where)

    def _check_call(self, item: dict[str, Any], where: str) -> None:
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str) or (key != "arguments" and not item[key]):
                raise RequestError(f"Missing required parameter: '{where}.{key}'.", f"{where}.{key}")
        issued = self.issued_calls.get(str(item.get("id") or ""))
        if issued is not None and (issued["name"], issued["arguments"]) != (item["name"], item["arguments"]):
            raise RequestError(
                f"Item '{item['id']}' does not match the function call that was issued.", where
            )

    def _check_reasoning_item(self, items: list[Any], i: int, stateless: bool) -> None:
        item, where = items[i], f"input[{i}]"
        issued = self.issued_reasoning.get(str(item.get("id")))
        if issued is None:
            raise RequestError(f"Item with id '{item.get('id')}' not found.", where, status=404)
        if "encrypted_content" not in issued and stateless:
            raise RequestError(
                f"Item with id '{item['id']}' not found. Items are not persisted when `store` is set to "
                "false. Try again with `store` set to true, or remove this item from your input.",
                where,
                status=404,
            )
        if item != issued or item.get("encrypted_content") != issued.get("encrypted_content"):
            raise RequestError(
                f"Reasoning item '{item['id']}' was modified: it must be sent back exactly as received.",
                where,
            )
        following = items[i + 1] if i + 1 < len(items) else None
        if not isinstance(following, dict):
            raise RequestError(
                f"Item '{item['id']}' of type 'reasoning' was provided without its required following item.",
                where,
            )
        kind, next_id = self.follower.get(item["id"], ("", None))
        ok = (
            (kind == "reasoning" and following.get("id") == next_id)
            or (
                kind == "function_call"
                and following.get("type") == "function_call"
                and following.get("id", next_id) == next_id
            )
            or (kind == "message" and _is_message(following) and following.get("role") == "assistant")
        )
        if not ok:
            raise RequestError(
                f"Item '{item['id']}' of type 'reasoning' is not followed by the item it preceded "
                f"({kind} {next_id}).",
                where,
            )
        with self._lock:
            self.returned_reasoning += 1

    # -- rendering ----------------------------------------------------------------------------
    def render(self, body: dict[str, Any], reply: Reply, serial: int) -> dict[str, Any]:
        """The response object for ``reply`` (and remember what it issued)."""
        encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
        reasoning = [self._reasoning(serial, i, s, encrypted) for i, s in enumerate(reply.reasoning)]
        calls = [self._call(reply, serial, i, n, a) for i, (n, a) in enumerate(reply.calls)]
        output: list[dict[str, Any]] = []
        if reply.interleave:
            for i in range(max(len(reasoning), len(calls))):
                output += reasoning[i : i + 1] + calls[i : i + 1]
        else:
            output += reasoning
        if reply.text or reply.refusal is not None:
            part = (
                {"type": "refusal", "refusal": reply.refusal}
                if reply.refusal is not None
                else {"type": "output_text", "text": reply.text, "annotations": []}
            )
            message = {
                "type": "message",
                "id": f"msg_{serial}",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
            output.insert(len(reasoning) if not reply.interleave else len(output), message)
        if not reply.interleave:
            output += calls
        if reply.empty_output:
            output = []
        self._remember(output)
        usage = reply.usage or {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 3 * len(reasoning)},
            "total_tokens": 29,
        }
        return {
            "id": f"resp_{serial}",
            "object": "response",
            "created_at": 1_700_000_000 + serial,
            "status": "incomplete" if reply.incomplete else "completed",
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if reply.incomplete else None,
            "model": f"{body.get('model')}-2025",
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "store": body.get("store", True),
            "usage": usage,
        }

    @staticmethod
    def _reasoning(serial: int, index: int, summary: str, encrypted: bool) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": f"rs_{serial}_{index}",
            "summary": [{"type": "summary_text", "text": summary}] if summary else [],
        }
        if encrypted:
            # An opaque token as the API gives it: base64-ish, long, with characters a careless
            # client might re-encode (+, /, =).
            digest = hashlib.sha256(f"{serial}/{index}/{summary}".encode()).hexdigest()
            item["encrypted_content"] = f"gAAAAAB{digest}+/{digest[:20]}==\u00e9"
        return item

    @staticmethod
    def _call(reply: Reply, serial: int, index: int, name: str, arguments: str) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_{serial}_{index}"}
        if not reply.omit_call_id:
            item["call_id"] = reply.call_ids[index] if reply.call_ids else f"call_{serial}_{index}"
        item.update({"name": name, "arguments": arguments, "status": "completed"})
        return item

    def _remember(self, output: list[dict[str, Any]]) -> None:
        with self._lock:
            for i, item in enumerate(output):
                if item["type"] == "reasoning":
                    self.issued_reasoning[item["id"]] = copy.deepcopy(item)
                    nxt = output[i + 1] if i + 1 < len(output) else {}
                    self.follower[item["id"]] = (str(nxt.get("type", "")), nxt.get("id"))
                elif item["type"] == "function_call":
                    self.issued_calls[item["id"]] = copy.deepcopy(item)

    # -- serving ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Start listening on the running loop."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
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
        parts = lines[0].split(" ")
        path = parts[1] if len(parts) > 1 else "/"
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        body = json.loads(raw or b"{}")
        with self._lock:
            self._serial += 1
            serial = self._serial
            fault = self.faults.popleft() if self.faults else None
            self.requests.append((path, body, headers))
        if not path.endswith("/responses"):
            await self._send(writer, 404, b'{"detail": "Not Found"}')
            return True
        if fault is not None and fault.kind not in ("cut", "eof"):
            return await self._fault(writer, fault, serial)
        try:
            self.validate(body)
        except RequestError as exc:
            with self._lock:
                self.rejections.append(str(exc))
            error = {
                "message": str(exc),
                "type": "invalid_request_error",
                "param": exc.param,
                "code": exc.code,
            }
            await self._send(writer, exc.status, json.dumps({"error": error}).encode())
            return True
        response = self.render(body, self.responder(body), serial)
        if body.get("stream"):
            return await self._stream(writer, response, fault)
        await self._send(writer, 200, json.dumps(response).encode())
        return True

    async def _fault(self, writer: asyncio.StreamWriter, fault: Fault, serial: int) -> bool:
        def error(status: int, message: str, code: str | None, param: str | None = None) -> tuple[int, bytes]:
            kind = "invalid_request_error" if status < 500 else "server_error"
            data = {"error": {"message": message, "type": kind, "param": param, "code": code}}
            return status, json.dumps(data).encode()

        extra: dict[str, str] = {}
        if fault.kind == "429":
            status, payload = error(429, "Rate limit reached for requests", "rate_limit_exceeded")
            if fault.retry_after is not None:
                extra["Retry-After"] = f"{fault.retry_after:g}"
        elif fault.kind == "500":
            status, payload = error(500, "The server had an error processing your request.", None)
        elif fault.kind == "context":
            # No "context length" wording in the message: only the code says what happened.
            status, payload = error(
                400, "Your input is over this model's limit.", "context_length_exceeded", "input"
            )
        elif fault.kind == "reasoning_400":
            status, payload = error(
                400,
                "Unsupported value: 'reasoning.effort' does not support 'minimal'.",
                None,
                "reasoning.effort",
            )
        elif fault.kind == "chat_body":
            status = 200
            payload = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
                }
            ).encode()
        elif fault.kind == "404":
            status, payload = 404, b'{"detail": "Not Found"}'
        else:  # failed / failed_context: a 200 whose response failed
            code = "context_length_exceeded" if fault.kind == "failed_context" else fault.code
            response = {
                "id": f"resp_{serial}",
                "object": "response",
                "status": "failed",
                "error": {"code": code, "message": f"injected failure ({code})"},
                "output": [],
            }
            status, payload = 200, json.dumps(response).encode()
        await self._send(writer, status, payload, extra)
        return True

    async def _stream(
        self, writer: asyncio.StreamWriter, response: dict[str, Any], fault: Fault | None
    ) -> bool:
        events = stream_events(response, empty_final_output=self.empty_stream_output)
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            "Connection: keep-alive\r\n\r\n"
        )
        writer.write(head.encode())
        for n, event in enumerate(events):
            frame = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            if fault is not None and n >= fault.after_events:
                if fault.kind == "cut":
                    # Half an event, then the connection drops: the chunked body never ends.
                    writer.write(_chunk(frame[: len(frame) // 2]))
                    await writer.drain()
                    return False
                break  # eof: the body ends cleanly, but before the terminal event
            writer.write(_chunk(frame))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _send(
        self, writer: asyncio.StreamWriter, status: int, payload: bytes, extra: dict[str, str] | None = None
    ) -> None:
        lines = [
            f"HTTP/1.1 {status} X",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            "Connection: keep-alive",
            *(f"{k}: {v}" for k, v in (extra or {}).items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        await writer.drain()

    # -- thread mode --------------------------------------------------------------------------
    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._run_thread, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("responses server did not start")
        return self

    def _run_thread(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self.start())
        self._ready.set()
        self._loop.run_forever()

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop.close()

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _check_message(item: dict[str, Any], where: str) -> None:
    role = item.get("role")
    if role not in _ROLES:
        raise RequestError(f"Invalid value for '{where}.role': {role!r}.", f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise RequestError(
            f"Invalid type for '{where}.content': expected one of a string or array of input items, "
            f"but got {type(content).__name__ if content is not None else 'null'} instead.",
            f"{where}.content",
        )
    allowed = (
        {"output_text", "refusal"} if role == "assistant" else {"input_text", "input_image", "input_file"}
    )
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in allowed:
            raise RequestError(
                f"Invalid value for '{where}.content[{j}].type'.", f"{where}.content[{j}].type"
            )


def _strict_problem(schema: Any) -> str | None:
    """What strict mode refuses in a schema: optional properties, additional properties allowed."""
    if isinstance(schema, list):
        return next((p for p in (_strict_problem(s) for s in schema) if p), None)
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if isinstance(props, dict):
        if schema.get("additionalProperties") is not False:
            return "'additionalProperties' is required to be supplied and to be false"
        missing = sorted(set(props) - set(schema.get("required") or []))
        if missing:
            return f"'required' is required to include every key in properties. Missing '{missing[0]}'"
    return next((p for p in (_strict_problem(v) for v in schema.values()) if p), None)


def stream_events(response: dict[str, Any], empty_final_output: bool = False) -> list[dict[str, Any]]:
    """The server-sent events of ``response``, in the documented order."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    shell = {**response, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=shell)
    emit("response.in_progress", response=shell)
    for index, item in enumerate(response["output"]):
        item_id = item.get("id")
        if item["type"] == "reasoning":
            emit("response.output_item.added", output_index=index, item={**item, "summary": []})
            for s, part in enumerate(item.get("summary") or []):
                emit(
                    "response.reasoning_summary_part.added",
                    item_id=item_id,
                    output_index=index,
                    summary_index=s,
                    part={"type": "summary_text", "text": ""},
                )
                emit(
                    "response.reasoning_summary_text.delta",
                    item_id=item_id,
                    output_index=index,
                    summary_index=s,
                    delta=part["text"],
                )
                emit(
                    "response.reasoning_summary_text.done",
                    item_id=item_id,
                    output_index=index,
                    summary_index=s,
                    text=part["text"],
                )
        elif item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "content": [], "status": "in_progress"},
            )
            for c, part in enumerate(item["content"]):
                text = part.get("text", part.get("refusal", ""))
                kind = "refusal" if part["type"] == "refusal" else "output_text"
                emit(
                    "response.content_part.added",
                    item_id=item_id,
                    output_index=index,
                    content_index=c,
                    part={**part, kind if kind == "refusal" else "text": ""},
                )
                for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                    emit(
                        f"response.{kind}.delta",
                        item_id=item_id,
                        output_index=index,
                        content_index=c,
                        delta=piece,
                    )
                emit(
                    f"response.{kind}.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=c,
                    **{"refusal" if kind == "refusal" else "text": text},
                )
                emit(
                    "response.content_part.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=c,
                    part=part,
                )
        elif item["type"] == "function_call":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            args = item["arguments"]
            for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
                emit(
                    "response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=piece
                )
            emit("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=args)
        emit("response.output_item.done", output_index=index, item=item)
    final = {**response, "output": []} if empty_final_output else response
    kind = "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    emit(kind, response=final)
    return events
