"""A small stateful MCP server for the isolation tests (tests/mcp/test_isolation.py).

``claim(name)`` succeeds once per name (a second claim of the same name is an ``isError`` reply),
``reset()`` forgets every claim, ``where()`` says where the server runs (working folder, ``HOME``,
``TMPDIR``), ``hang()`` never answers. The claims live in the JSON file named by the first argument,
so a server that is not started fresh keeps them. When ``CLAIMS_STARTS`` names a file, every start
appends a line to it (the tests count the servers a run started).

    python claims_server.py STATE_FILE              # over stdio
    python claims_server.py STATE_FILE --http PORT  # over streamable HTTP on 127.0.0.1
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def build(state: Path) -> MCPServer:
    server = MCPServer("claims")

    def claimed() -> list[str]:
        return list(json.loads(state.read_text())) if state.exists() else []

    @server.tool(structured_output=False)
    def claim(name: str) -> str:
        """Claim a name; each name can be claimed once."""
        names = claimed()
        if name in names:
            raise ValueError(f"{name} is already claimed")
        state.write_text(json.dumps([*names, name]))
        return f"claimed {name}"

    @server.tool(structured_output=False)
    def reset() -> str:
        """Forget every claim."""
        state.unlink(missing_ok=True)
        return "reset"

    @server.tool(structured_output=False)
    def where() -> str:
        """Where this server runs."""
        return json.dumps(
            {"cwd": os.getcwd(), "home": os.environ.get("HOME"), "tmpdir": os.environ.get("TMPDIR")}
        )

    @server.tool(structured_output=False)
    async def hang() -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "unreachable"

    return server


def main() -> None:
    starts = os.environ.get("CLAIMS_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()}\n")
    server = build(Path(sys.argv[1]))
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
        return
    server.run("stdio")


if __name__ == "__main__":
    main()
