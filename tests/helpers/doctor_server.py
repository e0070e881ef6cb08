"""A Chat Completions server on 127.0.0.1 that answers ``callbench doctor``'s requests, healthy or
with one (or more) of the serving faults doctor must catch.

Healthy, it answers the way a well-configured server with a capable model does: the call a prompt
asks for, two calls for two cities, a call under ``tool_choice: required``, none under ``none``,
arguments that match a strict schema, reasoning text beside its calls, usage on every answer,
streamed answers with tool-call deltas (``stream: true``), and an HTTP 400 context-length error for a
prompt past its window. Each name in :data:`FAULTS` breaks one of those behaviours the way real
serving stacks have been seen to break them. Prompts it does not recognise (a benchmark case, under
``run --preflight``) get a call of the first offered tool with ``{}``, then a text answer.

Standalone (stdlib ``http.server`` in a thread), so that it does not depend on the internals of
``protocol_server.py``: ``with DoctorServer("parallel_as_one") as server: ... server.url``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

FAULTS = {
    "parallel_as_one": "two calls in one answer are decoded as one (the second is dropped)",
    "tool_choice_required_ignored": "tool_choice required is ignored: a prompt needing no tool gets text",
    "tool_choice_none_ignored": "tool_choice none is ignored: the model calls anyway",
    "strict_ignored": "strict schemas are not enforced: enum and integer broken",
    "bad_json_args": "call arguments are not valid JSON (a Python dict repr)",
    "raw_text_calls": "the tool-call parser fails: <tool_call> text in content, no tool_calls",
    "special_tokens": "text answers end with a leaked <|im_end|>",
    "reasoning_required": "refuses an assistant tool-call turn without the reasoning it was given (DeepSeek)",
    "reasoning_rejected": "refuses assistant turns that carry reasoning_content or reasoning (HTTP 400)",
    "no_usage": "no usage object in answers",
    "broken_stream": "streamed answers are cut mid tool-call delta (connection closed)",
    "stream_drops_calls": "streamed answers carry the text but none of the tool-call deltas",
    "content_null_refused": "refuses content: null on assistant turns with HTTP 500 (llama-cpp-python)",
    "tool_results_refused": "refuses any tool-role message (HTTP 400)",
    "context_500": "a prompt past the window is answered with HTTP 500, not a context-length error",
    "context_truncated": "a prompt past the window is cut silently and answered (Ollama's num_ctx)",
    # Not a serving fault: a weak model's choice, which doctor must not charge to the server.
    "wrong_tool": "the model calls get_time when asked for the weather (decoded fine: a model choice)",
}
"""Every fault the server can simulate, with what it does."""

REASONING = "The user wants live data; the tool gives it, so I call it."


@dataclass
class Reply:
    """What the server decided to answer: text, calls ``(name, raw arguments)``, reasoning."""

    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    reasoning: str = ""


class DoctorServer:
    """The server; ``faults`` are names from :data:`FAULTS`."""

    def __init__(
        self,
        *faults: str,
        latency_s: float = 0.0,
        context_window: int = 8192,
        reasoning: bool = True,
        known_models: set[str] | None = None,
    ) -> None:
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {sorted(FAULTS)}")
        self.faults = set(faults)
        self.latency_s = latency_s
        self.context_window = context_window
        self.reasoning = reasoning
        self.known_models = known_models
        """When set, any other model name is answered with HTTP 404 (a mistyped model)."""
        self.requests: list[dict[str, Any]] = []
        """Every request body, in order (the long context probe is kept as its size only)."""
        self.reasoned_ids: set[str] = set()
        """Ids of calls answered with reasoning (``reasoning_required`` wants it back on them)."""
        self._serial = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL (``.../v1``)."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def model(self, name: str = "doctor-test", query: str = "") -> str:
        """An ``openai:`` model string for this server (``query``: model-string options, ``strict=1``)."""
        return f"openai:{name}@{self.url}" + (f"?{query}" if query else "")

    def __enter__(self) -> Self:
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = _Quiet(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    # --- deciding the answer ------------------------------------------------------------------

    def next_serial(self) -> int:
        with self._lock:
            self._serial += 1
            return self._serial

    def refusal(self, body: dict[str, Any]) -> tuple[int, str] | None:
        """An HTTP error for a request the faulty server refuses, else ``None``."""
        for i, message in enumerate(body.get("messages") or []):
            role = message.get("role")
            if (
                role == "assistant"
                and "content_null_refused" in self.faults
                and message.get("content") is None
            ):
                return (
                    500,
                    f"1 validation error for request: messages.{i}.content Input should be a valid string",
                )
            if role == "tool" and "tool_results_refused" in self.faults:
                return 400, f"messages.{i}: unsupported message role 'tool'"
            if role != "assistant":
                continue
            carries = "reasoning_content" in message or "reasoning" in message
            if "reasoning_rejected" in self.faults and carries:
                return 400, f"messages.{i}: extra field 'reasoning_content' not permitted"
            ids = {c.get("id") for c in message.get("tool_calls") or []}
            if "reasoning_required" in self.faults and ids & self.reasoned_ids and not carries:
                return 400, f"Missing `reasoning_content` field in the assistant message at message index {i}"
        return None

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        chars = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
        return chars // 2 + 1  # the context probe's filler: two characters a token

    def decide(self, body: dict[str, Any]) -> Reply:
        """The healthy answer, with the faults that change what the model says applied."""
        messages = body.get("messages") or []
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        choice = body.get("tool_choice", "auto")
        last = messages[-1] if messages else {}
        user = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), "")
        weather = '{"city": "Paris", "unit": "celsius"}'
        if last.get("role") == "tool":
            return Reply(text="It is 18 degrees and sunny in Paris.")
        if not tools:
            return Reply(text="OK")
        if choice == "none":
            if "tool_choice_none_ignored" in self.faults and "get_weather" in tools:
                return self._calls([("get_weather", weather)])
            return Reply(text="I would look up the weather in Paris for you.")
        if "book_table" in tools:
            if "strict_ignored" in self.faults:
                return self._calls(
                    [
                        (
                            "book_table",
                            '{"restaurant": "Chez Marie", "party_size": "four", "seating": "terrace"}',
                        )
                    ]
                )
            return self._calls(
                [("book_table", '{"restaurant": "Chez Marie", "party_size": 4, "seating": "outdoor"}')]
            )
        if "get_weather" in tools and "Tokyo" in user:
            calls = [("get_weather", weather), ("get_weather", '{"city": "Tokyo", "unit": "celsius"}')]
            return self._calls(calls[:1] if "parallel_as_one" in self.faults else calls)
        if "get_weather" in tools and "weather" in user.lower():
            if "wrong_tool" in self.faults and "get_time" in tools:
                return self._calls([("get_time", '{"timezone": "Europe/Paris"}')])
            return self._calls([("get_weather", weather)])
        if "hello" in user.lower():
            if choice == "required" and "tool_choice_required_ignored" not in self.faults:
                return self._calls([(tools[-1], '{"timezone": "Europe/Paris"}')])
            return Reply(text="Hello")
        if any(m.get("role") == "tool" for m in messages):
            return Reply(text="done")
        return self._calls([(tools[0], "{}")])  # a benchmark case (run --preflight)

    def _calls(self, calls: list[tuple[str, str]]) -> Reply:
        if "bad_json_args" in self.faults:
            calls = [(name, str(json.loads(raw))) for name, raw in calls]  # {'city': 'Paris'}: not JSON
        return Reply(calls=calls, reasoning=REASONING if self.reasoning else "")

    def answer(self, body: dict[str, Any], serial: int) -> tuple[Reply, list[dict[str, Any]]]:
        """The reply with the output faults applied, and its calls as wire objects."""
        reply = self.decide(body)
        if "raw_text_calls" in self.faults and reply.calls:
            blocks = [
                "<tool_call>\n" + json.dumps({"name": n, "arguments": json.loads(a)}) + "\n</tool_call>"
                for n, a in reply.calls
            ]
            reply = Reply(text="\n".join(blocks), reasoning=reply.reasoning)
        if "special_tokens" in self.faults and reply.text and not reply.calls:
            reply.text += "<|im_end|>"
        wire = [
            {"id": f"call_{serial}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.calls)
        ]
        if reply.reasoning and wire:
            with self._lock:
                self.reasoned_ids.update(c["id"] for c in wire)
        return reply, wire

    def usage(self, body: dict[str, Any]) -> dict[str, int] | None:
        if "no_usage" in self.faults:
            return None
        prompt = min(self.prompt_tokens(body), self.context_window)
        return {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7}


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops its keep-alive connection is no error worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # one write per reply (flushed by the stdlib after each request)...
    disable_nagle_algorithm = True  # ...and no 40 ms delayed-ACK stall between head and body
    app: DoctorServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        app = self.app
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        serial = app.next_serial()
        tokens = app.prompt_tokens(body)
        long = tokens > app.context_window
        with app._lock:
            app.requests.append({"prompt_tokens": tokens, "stream": body.get("stream")} if long else body)
        if app.latency_s:
            time.sleep(app.latency_s)
        if not self.path.endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if app.known_models is not None and body.get("model") not in app.known_models:
            self._json(404, {"error": {"message": f"The model '{body.get('model')}' does not exist"}})
            return
        if long and "context_truncated" not in app.faults:
            if "context_500" in app.faults:
                self._json(500, {"error": {"message": "internal server error"}})
                return
            message = (
                f"This model's maximum context length is {app.context_window} tokens. However, your "
                f"messages resulted in {tokens} tokens. Please reduce the length of the messages."
            )
            error = {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}
            self._json(400, {"error": error})
            return
        refused = app.refusal(body)
        if refused is not None:
            self._json(refused[0], {"error": {"message": refused[1], "type": "invalid_request_error"}})
            return
        reply, calls = app.answer(body, serial)
        model = str(body.get("model") or "doctor-test")
        if body.get("stream"):
            self._stream(body, reply, calls, model, serial)
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = calls
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        data: dict[str, Any] = {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        }
        usage = app.usage(body)
        if usage is not None:
            data["usage"] = usage
        self._json(200, data)

    def _json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(
        self, body: dict[str, Any], reply: Reply, calls: list[dict[str, Any]], model: str, serial: int
    ) -> None:
        app = self.app
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return {
                "id": f"chatcmpl-{serial}",
                "object": "chat.completion.chunk",
                "model": model,
                "choices": [choice],
            }

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        if reply.reasoning:
            events.append(chunk({"reasoning_content": reply.reasoning}))
        if reply.text:
            half = len(reply.text) // 2
            events += [chunk({"content": reply.text[:half]}), chunk({"content": reply.text[half:]})]
        cut_at: int | None = None
        if "stream_drops_calls" not in app.faults:
            for i, call in enumerate(calls):
                function = call["function"]
                head = {
                    "index": i,
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": function["name"], "arguments": ""},
                }
                events.append(chunk({"tool_calls": [head]}))
                args = function["arguments"]
                third = max(1, len(args) // 3)
                for part in (args[:third], args[third : 2 * third], args[2 * third :]):
                    events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
                    if cut_at is None and "broken_stream" in app.faults:
                        cut_at = len(events)
        events.append(chunk({}, "tool_calls" if calls else "stop"))
        usage = app.usage(body)
        if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
            events.append(
                {
                    "id": f"chatcmpl-{serial}",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
        lines = [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
        if "broken_stream" in app.faults:
            lines = lines[: cut_at or 1]
        for line in lines:
            self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
        if "broken_stream" in app.faults:
            self.close_connection = True  # no terminating chunk: the client sees the body cut short
            return
        self.wfile.write(b"0\r\n\r\n")
