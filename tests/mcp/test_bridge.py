"""callbench.mcp.bridge: a stdio MCP server proxying a case URL, driven by the SDK's stdio client."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from typing import Any

from mcp import Client, StdioServerParameters

from callbench.mcp.serve import CaseToolServer, ToolReply
from callbench.types.contract import ToolContract

SEARCH = ToolContract(
    name="search_notes",
    description="Search the notes.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
DELETE = ToolContract(
    name="delete_note",
    description="Delete a note by id.",
    parameters={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
)


def _bridge(url: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "callbench.mcp.bridge", url])


def test_the_bridge_proxies_tools_and_calls_unchanged() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    async def handler(name: str, arguments: dict[str, Any]) -> ToolReply:
        calls.append((name, arguments))
        if name != "search_notes":
            return ToolReply(json.dumps({"error": f"unknown tool {name}"}), is_error=True)
        return ToolReply(json.dumps({"hits": [arguments.get("query")]}))

    async def scenario() -> tuple[Any, list[Any]]:
        async with CaseToolServer() as server:
            url = server.open([SEARCH, DELETE], handler, label="bridge-case")
            async with Client(_bridge(url)) as client:
                listed = await client.list_tools()
                replies = [
                    await client.call_tool("search_notes", {"query": "milk"}),
                    await client.call_tool("search_notes", {"query": 7, "limit": 1}),  # schema-invalid
                    await client.call_tool("launch_rocket", {}),  # unknown
                ]
        return listed, replies

    listed, replies = asyncio.run(scenario())
    assert [t.name for t in listed.tools] == ["search_notes", "delete_note"]
    assert [t.description for t in listed.tools] == ["Search the notes.", "Delete a note by id."]
    assert [t.input_schema for t in listed.tools] == [SEARCH.provider_schema(), DELETE.provider_schema()]
    assert calls == [
        ("search_notes", {"query": "milk"}),
        ("search_notes", {"query": 7, "limit": 1}),
        ("launch_rocket", {}),
    ]
    assert [r.content[0].text for r in replies] == [
        '{"hits": ["milk"]}',
        '{"hits": [7]}',
        '{"error": "unknown tool launch_rocket"}',
    ]
    assert [r.is_error for r in replies] == [False, False, True]


def test_an_unreachable_case_url_is_one_line_and_exit_1() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/case/x/mcp"
    done = subprocess.run(
        [sys.executable, "-m", "callbench.mcp.bridge", url],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # stdout is the protocol channel
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith(f"callbench.mcp.bridge: cannot serve {url}: ")
    assert "Traceback" not in done.stderr


def test_a_missing_url_prints_the_usage_and_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "callbench.mcp.bridge"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m callbench.mcp.bridge URL")
