"""Serve a case's offered tools as an MCP server: streamable HTTP on 127.0.0.1, or stdio.

One :class:`CaseToolServer` (one uvicorn server on one port, running as a task in the caller's event
loop) hosts many case sessions at once, each at its own URL ``/case/<random token>/mcp``. Requests
are routed by token before the MCP SDK sees them, so concurrent cases never see each other's calls;
an unknown or closed token answers 404.

The SDK's session manager runs in **stateless, JSON-response** mode: every POST is served on its
own, without an ``Mcp-Session-Id`` to track and without an SSE stream (measured the cheapest per
call; see ``bench/mcp_overhead.py``). Clients of both protocol eras work: handshake-era clients
(``initialize`` then calls) and 2026-era clients (self-contained requests).

``tools/list`` answers exactly the case's contracts (name, description, strict parameters schema, no
output schema). ``tools/call`` hands every call to the owner's :data:`ToolHandler`, unknown names and
schema-invalid arguments included: nothing here validates arguments (callbench records and answers
those calls as its offline loop does).

**Handler failures.** If the handler raises, the client gets an error reply (``isError: true``,
``{"error": "callbench tool endpoint failed: ..."}``) and the server keeps serving. The exception
goes to the ``on_error`` callback given to :meth:`CaseToolServer.open` / :func:`serve_stdio`; without
one it is kept and :meth:`CaseToolServer.errors` returns it (until the session is closed). Either way
the owner can turn it into an error record of the case: it is callbench's fault, not the agent's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from callbench.errors import ConfigError
from callbench.types.contract import ToolContract

__all__ = ["CaseToolServer", "ServeError", "ToolHandler", "ToolReply", "serve_stdio"]

logger = logging.getLogger(__name__)

_PATH = re.compile(r"^/case/([A-Za-z0-9_-]+)/mcp/?$")
_SCOPE_KEY = "callbench.case"
"""Where the router leaves the matched case session in the ASGI scope for the MCP handlers."""


@dataclass(frozen=True)
class ToolReply:
    """What a tool call answers: the text of one ``TextContent`` and whether it is an error."""

    text: str
    is_error: bool = False


ToolHandler = Callable[[str, dict[str, Any]], Awaitable[ToolReply]]
"""(tool name as the client sent it, arguments object as sent; {} when absent) -> reply."""

ErrorCallback = Callable[[BaseException], None]
"""Told of every exception a case's handler raised (the client already got an error reply)."""


class ServeError(ConfigError):
    """The MCP tool server cannot start (the address is taken, not local, ...)."""


@dataclass
class _CaseSession:
    """One case's tools and handler, as served at one URL."""

    tools: types.ListToolsResult
    handler: ToolHandler
    label: str
    on_error: ErrorCallback | None
    errors: list[BaseException] = field(default_factory=list)
    protocol_version: str | None = None
    """The ``MCP-Protocol-Version`` the client's requests named (the last one), for telemetry."""

    def failed(self, error: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(error)
        else:
            self.errors.append(error)


def _list_result(tools: Sequence[ToolContract]) -> types.ListToolsResult:
    """The tools/list answer for a case: computed once, served as often as asked."""
    listed = [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.provider_schema(),
            # what the contract says about side effects, in MCP's own words (agents may act on it)
            annotations=types.ToolAnnotations(read_only_hint=tool.read_only),
        )
        for tool in tools
    ]
    return types.ListToolsResult(tools=listed)


async def _call(session: _CaseSession, params: types.CallToolRequestParams) -> types.CallToolResult:
    """Hand one call to the case's handler; a raising handler becomes an error reply plus a report."""
    try:
        reply = await session.handler(params.name, dict(params.arguments or {}))
    except Exception as error:  # the boundary: the MCP server must keep serving other calls
        logger.warning("tool handler of %s raised on %r: %r", session.label or "a case", params.name, error)
        session.failed(error)
        text = json.dumps({"error": f"callbench tool endpoint failed: {type(error).__name__}: {error}"})
        reply = ToolReply(text, is_error=True)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=reply.text)]
    return types.CallToolResult(content=content, is_error=reply.is_error)


def _build_server(name: str, resolve: Callable[[Any], _CaseSession]) -> Server[Any]:
    """A low-level SDK server whose two tool handlers serve whatever case ``resolve(ctx)`` names."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return resolve(ctx).tools

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await _call(resolve(ctx), params)

    # get_tool_input_schema: the 2026-era transport would otherwise run tools/list on every call to
    # check Mcp-Param-* headers; our schemas declare no such headers, so there is nothing to check.
    server: Server[Any] = Server(
        name, on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=lambda _name: None
    )
    # The SDK's default OpenTelemetry middleware opens a span per message: measurable per call, unused.
    server.middleware = []
    return server


def _session_of(ctx: Any) -> _CaseSession:
    session: _CaseSession = ctx.request.scope[_SCOPE_KEY]
    return session


async def _not_found(send: Send, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class CaseToolServer:
    """One streamable-HTTP MCP server on 127.0.0.1 hosting many case sessions, each at its own URL.

    Use as ``async with CaseToolServer() as server: url = server.open(tools, handler)``. The server
    runs as a task of the current event loop (no thread): handlers run on that loop too.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._sessions: dict[str, _CaseSession] = {}
        self._manager: StreamableHTTPSessionManager | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind the port and start serving; raises :class:`ServeError` (one line) if it cannot."""
        if self._task is not None:
            raise ServeError("the MCP tool server is already started")
        sock = self._bind()
        self.port = sock.getsockname()[1]
        self._manager = StreamableHTTPSessionManager(
            app=_build_server("callbench", _session_of),
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
            ),
        )
        # Loopback only, no proxy in front: skip uvicorn's proxy-header and Date/Server header work.
        config = uvicorn.Config(
            self._asgi,
            interface="asgi3",
            lifespan="off",
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            server_header=False,
            date_header=False,
        )
        self._uvicorn = uvicorn.Server(config)
        started = asyncio.Event()
        self._task = asyncio.create_task(self._run(sock, started), name="callbench-mcp-server")
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():
            waiter.cancel()
            error = self._task.exception() if not self._task.cancelled() else None
            self._task = None
            raise ServeError(f"MCP tool server on {self.host}:{self.port} did not start: {error!r}")

    def _bind(self) -> socket.socket:
        if self.host not in ("127.0.0.1", "localhost"):
            raise ServeError(f"MCP tool server host {self.host!r}: only 127.0.0.1 is served")
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only then (else ~40 ms per reply).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", self.port))
        except OSError as error:
            sock.close()
            raise ServeError(f"MCP tool server cannot bind 127.0.0.1:{self.port}: {error.strerror}") from None
        sock.listen(1024)
        sock.setblocking(False)
        return sock

    async def _run(self, sock: socket.socket, started: asyncio.Event) -> None:
        # The session manager's task group must be entered and left in one task: this one.
        assert self._manager is not None and self._uvicorn is not None
        server = self._uvicorn
        async with self._manager.run():
            serving = asyncio.create_task(server.serve(sockets=[sock]))
            while not server.started and not serving.done():
                await asyncio.sleep(0.001)
            if server.started:
                started.set()
            await serving

    async def stop(self) -> None:
        """Stop serving and forget every case session (idempotent)."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except TimeoutError:
            task.cancel()
        except asyncio.CancelledError:
            task.cancel()
            raise
        except Exception as error:  # a crash while shutting down: nothing left to serve
            logger.warning("MCP tool server stopped with %r", error)
        self._sessions.clear()

    async def __aenter__(self) -> CaseToolServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- case sessions ---------------------------------------------------------------------------

    def open(
        self,
        tools: Sequence[ToolContract],
        handler: ToolHandler,
        *,
        label: str = "",
        on_error: ErrorCallback | None = None,
    ) -> str:
        """Register a case session; return its URL ``http://127.0.0.1:PORT/case/<token>/mcp``.

        ``label`` names the case in log lines. ``on_error`` is told of every exception the handler
        raises (the client gets an error reply); without it they are kept for :meth:`errors`.
        """
        if self._task is None:
            raise ServeError("open a case session after start() (use 'async with CaseToolServer()')")
        token = secrets.token_urlsafe(16)
        self._sessions[token] = _CaseSession(_list_result(tools), handler, label, on_error)
        return f"http://127.0.0.1:{self.port}/case/{token}/mcp"

    def close(self, url: str) -> None:
        """End a case session: later requests to its URL get 404. Unknown URLs are ignored."""
        self._sessions.pop(self._token(url), None)

    def protocol_version(self, url: str) -> str | None:
        """The MCP protocol version the client of an open session named in its requests (``None``:
        none yet, or a closed session)."""
        session = self._sessions.get(self._token(url))
        return session.protocol_version if session is not None else None

    def errors(self, url: str) -> list[BaseException]:
        """Exceptions the handler of an open session raised, when it was opened without ``on_error``."""
        session = self._sessions.get(self._token(url))
        return list(session.errors) if session is not None else []

    @staticmethod
    def _token(url: str) -> str:
        path = url.split("://", 1)[-1]
        path = path[path.find("/") :] if "/" in path else ""
        match = _PATH.match(path)
        return match.group(1) if match else ""

    # -- ASGI ------------------------------------------------------------------------------------

    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Route ``/case/<token>/mcp`` to the SDK's manager with the case in the scope; else 404."""
        if scope["type"] != "http":
            return
        match = _PATH.match(scope["path"])
        session = self._sessions.get(match.group(1)) if match else None
        if session is None:
            await _not_found(send, "no such case session (closed or unknown token)")
            return
        for name, value in scope.get("headers") or ():
            if name == b"mcp-protocol-version":
                session.protocol_version = value.decode("latin-1")
        assert self._manager is not None
        await self._manager.handle_request({**scope, _SCOPE_KEY: session}, receive, send)


async def serve_stdio(
    tools: Sequence[ToolContract],
    handler: ToolHandler,
    *,
    label: str = "",
    on_error: ErrorCallback | None = None,
) -> None:
    """Serve one case over stdin/stdout until the client closes.

    Handler exceptions are answered as error replies and passed to ``on_error`` (logged without it).
    """
    session = _CaseSession(_list_result(tools), handler, label, on_error)
    server = _build_server("callbench", lambda _ctx: session)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
