"""A tiny MCP server whose version is its argument: ``python versioned_server.py VERSION`` (stdio), or
``@FILE`` to read the version from a file when the server starts (the same command, another version:
a resumed run's server can change under it).

It reports ``versioned`` at ``VERSION`` in ``initialize`` and lists ``echo`` (the same in every version)
and ``lookup``, whose schema gains an optional ``exact`` flag from version 2 on: two runs against
versions 1 and 2 measured one changed tool.
"""

from __future__ import annotations

import sys
from typing import Any


def server(version: str) -> Any:
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("versioned", version=version)

    @app.tool(name="echo", description="Echo a message", structured_output=False)
    def echo(message: str) -> str:
        return message

    if int(version.split(".")[0]) >= 2:

        @app.tool(name="lookup", description="Look a name up", structured_output=False)
        def lookup_v2(name: str, exact: bool = False) -> str:
            return f"found {name}" + (" (exact)" if exact else "")

    else:

        @app.tool(name="lookup", description="Look a name up", structured_output=False)
        def lookup_v1(name: str) -> str:
            return f"found {name}"

    return app._lowlevel_server


def main() -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    version = sys.argv[1]
    if version.startswith("@"):
        with open(version[1:], encoding="utf-8") as handle:
            version = handle.read().strip()
    lowlevel = server(version)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
