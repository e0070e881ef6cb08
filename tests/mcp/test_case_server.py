"""callbench.mcp.serve: a case's tools over streamable HTTP (real SDK clients) and over stdio."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters

from callbench.mcp.serve import CaseToolServer, ServeError, ToolReply
from callbench.types.contract import ToolContract

ADD = ToolContract(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
NOTE = ToolContract(
    name="notes.save",
    description="Save a note.",
    parameters={
        "type": "object",
        "properties": {"text": {"type": "string"}, "meta": {"type": "object", "properties": {"tag": {}}}},
    },
    result_schema={"type": "object"},
)
TOOLS = [ADD, NOTE]


class Recorder:
    """A handler that records every call and answers with what it got (or an error for 'fail')."""

    def __init__(self, tag: str = "") -> None:
        self.tag = tag
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, name: str, arguments: dict[str, Any]) -> ToolReply:
        self.calls.append((name, arguments))
        if name == "fail":
            return ToolReply(json.dumps({"error": "no such tool: fail"}), is_error=True)
        return ToolReply(json.dumps({"tag": self.tag, "tool": name, "arguments": arguments}))


async def _boom(name: str, arguments: dict[str, Any]) -> ToolReply:
    raise RuntimeError(f"executor fell over on {name}")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_list_tools_answers_exactly_the_case_tools_with_strict_schemas(mode: str) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with CaseToolServer() as server:
            url = server.open(TOOLS, Recorder())
            async with Client(url, mode=mode) as client:
                listed = await client.list_tools()
        return [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]

    tools = asyncio.run(scenario())
    assert [t["name"] for t in tools] == ["add", "notes.save"]
    assert [t["description"] for t in tools] == ["Add two integers.", "Save a note."]
    assert tools[0]["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    # strict down to nested objects, exactly as the offline loop offers it
    assert tools[1]["inputSchema"] == NOTE.provider_schema()
    assert tools[1]["inputSchema"]["properties"]["meta"]["additionalProperties"] is False
    assert all("outputSchema" not in t for t in tools)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_call_reaches_the_handler_unvalidated(mode: str) -> None:
    handler = Recorder()

    async def scenario() -> list[Any]:
        async with CaseToolServer() as server:
            url = server.open(TOOLS, handler)
            async with Client(url, mode=mode) as client:
                await client.list_tools()
                return [
                    await client.call_tool("add", {"a": 1, "b": 2}),
                    await client.call_tool("add", {"a": "one", "extra": True}),  # schema-invalid
                    await client.call_tool("no_such_tool", {"x": 1}),  # unknown name
                    await client.call_tool("notes.save"),  # arguments absent
                    await client.call_tool("fail", {}),  # the handler's own error reply
                ]

    replies = asyncio.run(scenario())
    assert handler.calls == [
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": "one", "extra": True}),
        ("no_such_tool", {"x": 1}),
        ("notes.save", {}),
        ("fail", {}),
    ]
    assert [r.is_error for r in replies] == [False, False, False, False, True]
    assert all(len(r.content) == 1 and r.content[0].type == "text" for r in replies)
    assert json.loads(replies[0].content[0].text) == {"tag": "", "tool": "add", "arguments": {"a": 1, "b": 2}}
    assert replies[4].content[0].text == '{"error": "no such tool: fail"}'
    assert all(r.structured_content is None for r in replies)


def test_a_raising_handler_answers_an_error_and_reports_the_exception() -> None:
    seen: list[BaseException] = []

    async def scenario() -> tuple[Any, Any, list[BaseException], list[BaseException]]:
        async with CaseToolServer() as server:
            reported = server.open([ADD], _boom, label="starter:add", on_error=seen.append)
            kept = server.open([ADD], _boom)
            async with Client(reported) as client:
                first = await client.call_tool("add", {"a": 1, "b": 2})
            async with Client(kept) as client:
                second = await client.call_tool("add", {})
            # the server is still serving after both failures
            healthy = server.open([ADD], Recorder("ok"))
            async with Client(healthy) as client:
                third = await client.call_tool("add", {"a": 1, "b": 1})
            assert not third.is_error
            return first, second, server.errors(kept), server.errors(reported)

    first, second, kept_errors, reported_errors = asyncio.run(scenario())
    assert first.is_error and second.is_error
    assert json.loads(first.content[0].text) == {
        "error": "callbench tool endpoint failed: RuntimeError: executor fell over on add"
    }
    assert [str(e) for e in seen] == ["executor fell over on add"]
    assert reported_errors == []  # given to the callback, not kept
    assert [str(e) for e in kept_errors] == ["executor fell over on add"]


def test_twenty_concurrent_sessions_never_see_each_others_calls() -> None:
    handlers = [Recorder(f"case{i}") for i in range(20)]

    async def one_case(server: CaseToolServer, i: int) -> list[str]:
        url = server.open(TOOLS, handlers[i], label=f"case{i}")
        texts = []
        async with Client(url) as client:
            for j in range(5):
                reply = await client.call_tool("add", {"a": i, "b": j})
                texts.append(reply.content[0].text)
                await asyncio.sleep(0)
        return texts

    async def scenario() -> tuple[list[list[str]], set[str]]:
        async with CaseToolServer() as server:
            results = await asyncio.gather(*(one_case(server, i) for i in range(20)))
            urls = {server.open(TOOLS, Recorder()) for _ in range(20)}
        return list(results), urls

    results, urls = asyncio.run(scenario())
    assert len(urls) == 20  # every session gets its own token
    for i, (handler, texts) in enumerate(zip(handlers, results, strict=True)):
        assert handler.calls == [("add", {"a": i, "b": j}) for j in range(5)]
        assert [json.loads(t)["tag"] for t in texts] == [f"case{i}"] * 5


def test_closed_and_unknown_tokens_get_404() -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    async def scenario() -> tuple[int, int, int, int, list[Any]]:
        handler = Recorder()
        async with CaseToolServer() as server:
            url = server.open([ADD], handler)
            base = url.split("/case/")[0]
            async with httpx2.AsyncClient() as http:
                open_status = (await http.post(url, json=body, headers=headers)).status_code
                server.close(url)
                closed_status = (await http.post(url, json=body, headers=headers)).status_code
                unknown = (await http.post(f"{base}/case/nope/mcp", json=body, headers=headers)).status_code
                other_path = (await http.post(f"{base}/mcp", json=body, headers=headers)).status_code
        return open_status, closed_status, unknown, other_path, handler.calls

    open_status, closed_status, unknown, other_path, calls = asyncio.run(scenario())
    assert open_status == 200
    assert (closed_status, unknown, other_path) == (404, 404, 404)
    assert calls == []


def test_a_taken_port_is_one_clear_error() -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]

    async def scenario() -> None:
        async with CaseToolServer(port=port):
            pass

    try:
        with pytest.raises(ServeError, match=rf"cannot bind 127.0.0.1:{port}: ") as caught:
            asyncio.run(scenario())
    finally:
        taken.close()
    assert "\n" not in str(caught.value)


def test_only_loopback_is_served() -> None:
    with pytest.raises(ServeError, match="only 127.0.0.1"):
        asyncio.run(CaseToolServer(host="0.0.0.0").start())


def test_open_before_start_is_refused() -> None:
    with pytest.raises(ServeError, match="after start"):
        CaseToolServer().open([ADD], Recorder())


STDIO_SERVER = textwrap.dedent(
    """
    import asyncio, json, sys
    from callbench.mcp.serve import ToolReply, serve_stdio
    from callbench.types.contract import ToolContract

    tools = [ToolContract.model_validate(t) for t in json.loads(sys.argv[1])]
    log = open(sys.argv[2], "a")

    async def handler(name, arguments):
        log.write(json.dumps([name, arguments]) + "\\n"); log.flush()
        if name == "boom":
            raise RuntimeError("exploded")
        return ToolReply(json.dumps({"echo": arguments}), is_error=name == "bad")

    def failed(error):
        log.write("ERR " + str(error) + "\\n")

    asyncio.run(serve_stdio(tools, handler, label="stdio-case", on_error=failed))
    """
)


def test_serve_stdio_with_the_sdk_stdio_client(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    tools_json = json.dumps([ADD.model_dump(), NOTE.model_dump()])
    params = StdioServerParameters(command=sys.executable, args=["-c", STDIO_SERVER, tools_json, str(log)])

    async def scenario() -> tuple[Any, list[Any]]:
        async with Client(params) as client:
            listed = await client.list_tools()
            replies = [
                await client.call_tool("add", {"a": 2, "b": 3}),
                await client.call_tool("unknown", {"z": [1]}),
                await client.call_tool("bad", {}),
                await client.call_tool("boom", {}),
            ]
        return listed, replies

    listed, replies = asyncio.run(scenario())
    assert [t.name for t in listed.tools] == ["add", "notes.save"]
    assert listed.tools[0].input_schema == ADD.provider_schema()
    assert [r.is_error for r in replies] == [False, False, True, True]
    assert json.loads(replies[0].content[0].text) == {"echo": {"a": 2, "b": 3}}
    assert "RuntimeError: exploded" in replies[3].content[0].text
    lines = log.read_text().splitlines()
    assert [json.loads(line) for line in lines[:4]] == [
        ["add", {"a": 2, "b": 3}],
        ["unknown", {"z": [1]}],
        ["bad", {}],
        ["boom", {}],
    ]
    assert lines[4] == "ERR exploded"
