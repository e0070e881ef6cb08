"""Tiny MCP servers for the client, tool-source and executor tests, on the official SDK.

Run as ``python client_servers.py MODE`` (stdio) or ``python client_servers.py MODE --http PORT``
(streamable HTTP on 127.0.0.1). Modes:

* ``loose``: tools listed the way real servers list them (optional properties, titles, defaults,
  ``$defs``), plus ``fail`` (an ``isError`` reply) and ``die`` (the process exits mid-call);
* ``strict``: one tool whose schema is already strict;
* ``bad_schema``: one tool with an invalid JSON Schema;
* ``exits``: writes a line to stderr and exits with status 3 before speaking MCP;
* ``shop``: ``lookup_sku`` and ``order``, answering with JSON documents in text blocks;
* ``typed``: ``lookup_sku`` and ``order`` declaring an ``outputSchema`` and answering with
  ``structuredContent``, ``miscount`` whose answer breaks its own ``outputSchema``, and ``vague`` whose
  ``outputSchema`` is no valid JSON Schema;
* ``faulty``: ``echo``, plus ``hang`` (blocks the server's event loop: the whole server stops
  answering), ``slow`` (answers after 1.5 s, or ``$FAULTY_SLOW_S`` seconds) and ``die`` (writes to
  stderr, then the process exits);
* ``noisy``: ``echo``, which first prints a line that is not JSON-RPC on the server's stdout (as a
  server that logs to stdout does), then answers;
* ``huge``: ``big``, whose answer is a text of ``megabytes`` MB (one JSON-RPC line that long).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import mcp_types as types
from pydantic import BaseModel


class Point(BaseModel):
    """A nested model: MCPServer lists it under ``$defs`` and refers to it with ``$ref``."""

    x: int
    y: int


def loose_server() -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = MCPServer("loose")

    @server.tool(
        name="echo",
        description="Echo a message",
        annotations=ToolAnnotations(read_only_hint=True),
        structured_output=False,
    )
    def echo(message: str, times: int = 1) -> str:
        return " ".join([message] * times)

    @server.tool(name="plot", description="Plot a point", structured_output=False)
    def plot(point: Point, label: str | None = None) -> str:
        return f"plotted {point.x},{point.y} {label or ''}".strip()

    @server.tool(name="fail", description="Always fails", structured_output=False)
    def fail(reason: str) -> str:
        raise ToolError(f"refused: {reason}")

    @server.tool(name="die", description="Kills the server", structured_output=False)
    def die() -> str:
        os._exit(7)

    return server._lowlevel_server


def faulty_server() -> Any:
    import time

    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("faulty")

    @server.tool(
        name="echo",
        description="Echo a message",
        annotations=ToolAnnotations(read_only_hint=True),
        structured_output=False,
    )
    def echo(message: str) -> str:
        return message

    @server.tool(name="hang", description="Never answers", structured_output=False)
    async def hang() -> str:
        time.sleep(600)  # blocking on purpose: the server's loop stops, as a hung server's does
        return "late"

    # A test that only needs "slower than its case's limit" sets less (each wait is the test's time).
    slow_s = float(os.environ.get("FAULTY_SLOW_S", "1.5"))

    @server.tool(name="slow", description="Answers after a while", structured_output=False)
    async def slow() -> str:
        await anyio.sleep(slow_s)
        return "slow done"

    @server.tool(name="die", description="Kills the server", structured_output=False)
    def die() -> str:
        print("faulty server: dying on purpose", file=sys.stderr, flush=True)
        os._exit(7)

    return server._lowlevel_server


def noisy_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("noisy")
    # The SDK's stdio_server diverts fd 1 while it serves; a copy of it reaches the pipe, as a stray
    # print() in a server built on another SDK (or a child process it starts) does.
    pipe = os.dup(1)
    os.write(pipe, b"noisy server starting (a banner, not JSON-RPC)\n")

    @server.tool(name="echo", description="Echo a message", structured_output=False)
    def echo(message: str) -> str:
        os.write(pipe, f"DEBUG echoing {message!r} ".encode() + b"x" * 300 + b"\n")
        return message

    return server._lowlevel_server


def huge_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("huge")

    @server.tool(name="big", description="Answer with a large text", structured_output=False)
    def big(megabytes: int) -> str:
        return "y" * (megabytes * 1024 * 1024)

    return server._lowlevel_server


def shop_server() -> Any:
    """Answers as most servers do: a JSON document in a text block, no ``structuredContent``."""
    import json

    from mcp.server.mcpserver import MCPServer

    server = MCPServer("shop")

    @server.tool(name="lookup_sku", description="Find the SKU of a product by name", structured_output=False)
    def lookup_sku(name: str) -> str:
        return json.dumps({"sku": f"SKU-{sum(map(ord, name)) % 1000:03d}", "name": name})

    @server.tool(name="order", description="Order a quantity of a SKU", structured_output=False)
    def order(sku: str, quantity: int) -> str:
        return json.dumps({"order_id": f"O-{sku}-{quantity}", "sku": sku, "quantity": quantity})

    return server._lowlevel_server


SKU_SCHEMA = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "name": {"type": "string"}},
    "required": ["sku", "name"],
    "additionalProperties": False,  # so a $ref to any other key can never resolve
}
ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
TYPED_TOOLS = [
    types.Tool(
        name="lookup_sku",
        description="Find the SKU of a product by name",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        output_schema=SKU_SCHEMA,
    ),
    types.Tool(
        name="order",
        description="Order a quantity of a SKU",
        input_schema={
            "type": "object",
            "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
            "required": ["sku", "quantity"],
        },
        output_schema=ORDER_SCHEMA,
    ),
    types.Tool(
        name="miscount",
        description="Count items (its answer breaks its own output schema)",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
    ),
    types.Tool(
        name="vague",
        description="A tool whose output schema is not a valid JSON Schema",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {"n": {"type": "numbr"}}},
    ),
]


def typed_server() -> Any:
    """Tools that declare an ``outputSchema`` and answer with ``structuredContent`` (low level, so that
    one of them can break its own schema, which the SDK's high-level server would not let it do)."""
    import json

    from mcp.server import Server

    def answer(value: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))], structured_content=value
        )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TYPED_TOOLS)

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "lookup_sku":
            name = arguments["name"]
            return answer({"sku": f"SKU-{sum(map(ord, name)) % 1000:03d}", "name": name})
        if params.name == "order":
            return answer({"order_id": f"O-{arguments['sku']}-{arguments['quantity']}"})
        if params.name == "miscount":
            return answer({"count": "many"})
        return answer({"n": 1})

    return Server("typed", on_list_tools=list_tools, on_call_tool=call_tool)


def listed_server(tool: types.Tool) -> Any:
    from mcp.server import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    return Server("listed", on_list_tools=list_tools, on_call_tool=call_tool)


STRICT_TOOL = types.Tool(
    name="lookup",
    description="Look a key up",
    input_schema={
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
        "additionalProperties": False,
    },
)
BAD_TOOL = types.Tool(
    name="broken",
    description="A tool with an invalid schema",
    input_schema={"type": "object", "properties": {"x": {"type": "strnig"}}},
)


def main() -> None:
    mode = sys.argv[1]
    if mode == "exits":
        print("fatal: configuration file missing", file=sys.stderr)
        sys.exit(3)
    lowlevel = {
        "loose": loose_server,
        "faulty": faulty_server,
        "noisy": noisy_server,
        "huge": huge_server,
        "shop": shop_server,
        "typed": typed_server,
        "strict": lambda: listed_server(STRICT_TOOL),
        "bad_schema": lambda: listed_server(BAD_TOOL),
    }[mode]()
    import anyio

    if "--http" in sys.argv:
        import uvicorn
        from mcp.server.mcpserver import MCPServer

        port = int(sys.argv[sys.argv.index("--http") + 1])
        wrapper = MCPServer("http")
        wrapper._lowlevel_server = lowlevel
        app = wrapper.streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return

    from mcp.server.stdio import stdio_server

    async def run() -> None:
        async with stdio_server() as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
