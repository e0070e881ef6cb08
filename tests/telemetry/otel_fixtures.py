"""Pieces the OpenTelemetry tests share: a local OTLP/HTTP collector on 127.0.0.1, a port where
nothing listens, and a scripted model whose answers carry token usage (reasoning and cached tokens)."""

from __future__ import annotations

import gzip
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn
from callbench.types.messages import Usage


class Collector:
    """A tiny OTLP/HTTP trace collector: POST /v1/traces, protobuf bodies read with
    opentelemetry-proto's own classes."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                    ExportTraceServiceRequest,
                    ExportTraceServiceResponse,
                )

                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.requests.append(request)
                collector.paths.append(self.path)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def __enter__(self) -> Collector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port just freed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


USAGE = Usage(input_tokens=120, output_tokens=30, reasoning_tokens=12, cached_tokens=64)


def paris_model() -> ScriptedProvider:
    """Plays ``starter:weather_paris`` in two requests, each reporting :data:`USAGE`."""
    call = tool_call_turn("get_weather", {"city": "Paris", "unit": "celsius"})
    answer = text_turn("It is 14 degrees and raining in Paris.")
    return ScriptedProvider([t.model_copy(update={"usage": USAGE}) for t in (call, answer)])
