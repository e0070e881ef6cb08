"""``--agent-otel``: an OTLP/HTTP trace receiver on 127.0.0.1 for the agent under test's own spans.

One aiohttp server per run; each case (and trial) gets a route of its own, ``/case/<token>``, whose
traces endpoint is ``/case/<token>/v1/traces``: the agent is given the route as
``OTEL_EXPORTER_OTLP_ENDPOINT`` (an OTLP exporter adds ``/v1/traces`` itself) and the full endpoint as
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (``cmd:``), as ``otel_endpoint`` (``py:`` agents that name it,
``http:`` requests). The URL path is what ties the spans to the case: no resource attribute, trace
id or clock is trusted for it.

A request is read as OTLP/HTTP protobuf or JSON, gzip or deflate encoded or not
(:mod:`callbench.telemetry.otlp`), and answered 200 with an empty ``ExportTraceServiceResponse``; a
body that cannot be read is answered 400 and counted; a closed or unknown route is answered 404.
When the agent has finished, :meth:`SpanReceiver.collect` waits for requests still in flight (and,
for an agent service that exports in the background, ``linger_s`` more), closes the route and returns
its spans.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from callbench.errors import ConfigError
from callbench.telemetry.otlp import OtlpDecodeError, ReceivedSpan, decode_request

MAX_BODY = 64 << 20
"""The largest export request read (the OTLP exporters' own default limit)."""
IN_FLIGHT_WAIT_S = 5.0
"""At most this long is waited, after the agent finished, for its export requests still in flight."""


class SpanReceiverError(ConfigError):
    """The receiver cannot start (no port on 127.0.0.1)."""


@dataclass
class SpanRoute:
    """One case's traces endpoint and what arrived there."""

    token: str
    case_key: str
    trial: int
    base: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    rejected: list[str] = field(default_factory=list)
    """Why each request that could not be read was refused (the first few)."""
    in_flight: int = 0
    closed: bool = False
    _idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self._idle.set()

    @property
    def endpoint(self) -> str:
        """``OTEL_EXPORTER_OTLP_ENDPOINT``: the base an exporter adds ``/v1/traces`` to."""
        return self.base

    @property
    def traces_endpoint(self) -> str:
        """``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``: the full traces URL."""
        return self.base + "/v1/traces"


class SpanReceiver:
    """The run's OTLP/HTTP receiver (``async with``); routes per case."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.routes: dict[str, SpanRoute] = {}
        self._runner: Any = None

    async def start(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("POST", "/case/{token}/v1/traces", self._traces)
        app.router.add_route("*", "/{tail:.*}", self._elsewhere)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise SpanReceiverError(f"--agent-otel: cannot listen on 127.0.0.1:{self.port}: {exc}") from None
        self.port = self._runner.addresses[0][1]

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.routes.clear()

    async def __aenter__(self) -> SpanReceiver:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- routes ----------------------------------------------------------------------------------------

    def open(self, case_key: str, trial: int = 1) -> SpanRoute:
        """A new route for one case (and trial)."""
        token = secrets.token_urlsafe(12)
        route = SpanRoute(token, case_key, trial, f"http://127.0.0.1:{self.port}/case/{token}")
        self.routes[token] = route
        return route

    async def collect(self, route: SpanRoute, linger_s: float = 0.0) -> list[ReceivedSpan]:
        """The route's spans once the agent is done: after ``linger_s`` (an agent service exporting in
        the background) and the requests in flight (at most :data:`IN_FLIGHT_WAIT_S`), the route is
        closed (404 from then on)."""
        if linger_s > 0:
            await asyncio.sleep(linger_s)
        try:
            await asyncio.wait_for(route._idle.wait(), IN_FLIGHT_WAIT_S)
        except TimeoutError:
            pass
        route.closed = True
        self.routes.pop(route.token, None)
        return sorted(route.spans, key=lambda span: (span.start, span.end))

    def discard(self, route: SpanRoute) -> None:
        """Close the route without waiting (idempotent): its case ended, however it ended."""
        route.closed = True
        self.routes.pop(route.token, None)

    # -- handling --------------------------------------------------------------------------------------

    async def _traces(self, request: Any) -> Any:
        from aiohttp import web

        route = self.routes.get(request.match_info["token"])
        if route is None or route.closed:
            return web.Response(status=404, text="no such case route (closed or unknown)")
        route.in_flight += 1
        route._idle.clear()
        try:
            body = await request.read()
            try:
                spans = decode_request(
                    body, request.headers.get("Content-Type", ""), request.headers.get("Content-Encoding", "")
                )
            except (OtlpDecodeError, ImportError) as exc:
                route.requests += 1
                if len(route.rejected) < 5:
                    route.rejected.append(str(exc))
                return web.Response(status=400, text=f"cannot read the export request: {exc}")
            route.requests += 1
            route.spans.extend(spans)
            if request.headers.get("Content-Type", "").split(";")[0].strip().lower() == "application/json":
                return web.json_response({})
            return web.Response(body=b"", content_type="application/x-protobuf")
        finally:
            route.in_flight -= 1
            if route.in_flight == 0:
                route._idle.set()

    async def _elsewhere(self, request: Any) -> Any:
        from aiohttp import web

        return web.Response(
            status=404, text="callbench takes an agent's spans at its case's own URL (/case/TOKEN/v1/traces)"
        )


@asynccontextmanager
async def span_receiver(enabled: bool) -> AsyncIterator[SpanReceiver | None]:
    """The run's receiver while the cases run (``None`` when ``--agent-otel`` is off)."""
    if not enabled:
        yield None
        return
    async with SpanReceiver() as receiver:
        yield receiver
