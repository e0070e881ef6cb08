"""A stdio MCP server that proxies one case session served over streamable HTTP.

    python -m callbench.mcp.bridge http://127.0.0.1:PORT/case/TOKEN/mcp

This is the command behind ``CALLBENCH_MCP_STDIO``: an agent that only speaks stdio starts it and
sees exactly the case's tools. ``tools/list`` and ``tools/call`` are forwarded unchanged (names,
arguments, replies, ``isError``); nothing is validated here, so unknown tools and schema-invalid
arguments reach callbench and are recorded as they would be over HTTP. The bridge ends when its
client closes stdin. If the case URL cannot be reached, it prints one line to stderr and exits 1.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

__all__ = ["bridge", "main"]

USAGE = "usage: python -m callbench.mcp.bridge URL  (a case's streamable-HTTP MCP endpoint)"


def _proxy(upstream: Client) -> Server[Any]:
    """A server whose tool handlers forward to ``upstream`` and return its answers as they came."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        listed = await upstream.list_tools(cursor=params.cursor if params is not None else None)
        return types.ListToolsResult(tools=listed.tools, next_cursor=listed.next_cursor)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await upstream.call_tool(params.name, params.arguments)

    server: Server[Any] = Server("callbench-bridge", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware = []  # no per-message tracing span: pure overhead for a proxy
    return server


async def bridge(url: str) -> None:
    """Serve ``url``'s tools on stdin/stdout until the client closes stdin."""
    async with Client(url) as upstream:
        server = _proxy(upstream)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m callbench.mcp.bridge URL``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].startswith(("http://", "https://")):
        print(USAGE, file=sys.stderr)
        return 2
    # stdout carries the protocol: every log line goes to stderr, warnings only.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        anyio.run(bridge, args[0])
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # one line, not a traceback: the agent's stderr is recorded
        print(f"callbench.mcp.bridge: cannot serve {args[0]}: {_reason(error)}", file=sys.stderr)
        return 1
    return 0


def _reason(error: BaseException) -> str:
    """The innermost useful message of an error (the SDK wraps failures in exception groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


if __name__ == "__main__":
    sys.exit(main())
