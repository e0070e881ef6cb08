"""A small MCP server (official ``mcp`` SDK, streamable HTTP on 127.0.0.1) that records its calls.

One server hosts any number of endpoints, each with its own tool list and call handler, at
``/<name>/mcp``; it runs uvicorn in a background thread (``with RecordingMCPServer() as srv``).
Every ``tools/call`` is appended to the endpoint's :attr:`Endpoint.calls` with the text it
answered, so a test can check what an agent really sent and what it was told.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Self

import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from starlette.applications import Starlette
from starlette.routing import Mount

Handler = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]
"""``(tool, arguments) -> (ok, text)``: the text is sent as one ``TextContent``; not ok sets ``isError``."""


@dataclass
class RecordedCall:
    tool: str
    arguments: dict[str, Any]
    ok: bool
    text: str


@dataclass
class Endpoint:
    """One MCP endpoint: the tools it lists and the calls it received."""

    name: str
    tools: list[types.Tool]
    handler: Handler
    calls: list[RecordedCall] = field(default_factory=list)
    listed: int = 0
    """How many ``tools/list`` requests it answered."""

    def server(self) -> Server[Any]:
        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            self.listed += 1
            return types.ListToolsResult(tools=self.tools)

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            arguments = dict(params.arguments or {})
            ok, text = await self.handler(params.name, arguments)
            self.calls.append(RecordedCall(params.name, arguments, ok, text))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=not ok)

        return Server(f"recording-{self.name}", on_list_tools=list_tools, on_call_tool=call_tool)


def tool(name: str, description: str, parameters: dict[str, Any]) -> types.Tool:
    """An MCP tool listing entry."""
    return types.Tool(name=name, description=description, input_schema=parameters)


class RecordingMCPServer:
    """Serves the added endpoints over streamable HTTP on 127.0.0.1 (add them before ``with``)."""

    def __init__(self) -> None:
        self.endpoints: dict[str, Endpoint] = {}
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def add(self, name: str, tools: list[types.Tool], handler: Handler) -> Endpoint:
        endpoint = Endpoint(name, tools, handler)
        self.endpoints[name] = endpoint
        return endpoint

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}/mcp"

    def _app(self) -> Starlette:
        apps = {name: ep.server().streamable_http_app() for name, ep in self.endpoints.items()}

        @asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            # Mounted apps get no lifespan of their own: run every session manager here.
            async with AsyncExitStack() as stack:
                for app in apps.values():
                    await stack.enter_async_context(app.router.lifespan_context(app))
                yield

        return Starlette(routes=[Mount(f"/{n}", app=a) for n, a in apps.items()], lifespan=lifespan)

    def __enter__(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app(), log_level="warning", timeout_graceful_shutdown=1)
        self._server = server = uvicorn.Server(config)
        self._thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
        self._thread.start()
        for _ in range(500):
            if server.started:
                return self
            threading.Event().wait(0.01)
        raise RuntimeError("recording MCP server did not start")

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(10)
