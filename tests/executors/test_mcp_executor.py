"""callbench.executors.mcp: calls forwarded to a live server, tool errors vs infrastructure failures."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from callbench.errors import ToolServerFault
from callbench.executors.mcp import McpExecutor, McpToolSource, load_mcp_tools
from callbench.mcp.client import McpServerError

SERVERS = Path(__file__).parents[1] / "mcp" / "client_servers.py"
LOOSE = f"stdio:{sys.executable} {SERVERS} loose"


def test_load_mcp_tools_gives_registry_notes_and_an_executor():
    source = load_mcp_tools(f"mcp:{LOOSE}")
    assert isinstance(source, McpToolSource)
    assert source.registry.names() == ["echo", "plot", "fail", "die"]
    assert len(source.notes) == 4
    executor = source.executor()
    assert isinstance(executor, McpExecutor)
    assert executor.spec == source.spec


def test_load_mcp_tools_bad_input_is_one_line_before_anything_runs():
    with pytest.raises(
        McpServerError, match=r"^MCP server 'stdio:nope-not-here': command 'nope-not-here' not found$"
    ):
        load_mcp_tools("mcp:stdio:nope-not-here")


def test_calls_are_forwarded_and_tool_errors_are_failures(tmp_path):
    executor = McpExecutor(LOOSE)

    async def play():
        session = executor.start(None, tmp_path, None)  # type: ignore[arg-type]
        try:
            ok = await session.call("echo", {"message": "hey", "times": 3})
            nested = await session.call("plot", {"point": {"x": 1, "y": 2}, "label": "A"})
            failed = await session.call("fail", {"reason": "no"})
            unknown = await session.call("missing_tool", {})
            return ok, nested, failed, unknown
        finally:
            await executor.aclose()

    ok, nested, failed, unknown = asyncio.run(play())
    assert (ok.ok, ok.result, ok.content) == (True, "hey hey hey", "hey hey hey")
    assert nested.result == "plotted 1,2 A"
    assert failed.ok is False
    assert failed.error == "Error executing tool fail: refused: no"  # the server's own text
    assert failed.annotations == {"mcp_is_error": True}
    assert unknown.ok is False  # the server answered: the call failed, the connection did not
    assert "missing_tool" in (unknown.error or "")


def test_concurrent_cases_share_one_connection(tmp_path):
    executor = McpExecutor(LOOSE)

    async def play():
        sessions = [executor.start(None, tmp_path, None) for _ in range(8)]  # type: ignore[arg-type]
        try:
            outcomes = await asyncio.gather(
                *(s.call("echo", {"message": f"m{i}"}) for i, s in enumerate(sessions))
            )
            return outcomes, len(executor._connections)
        finally:
            await executor.aclose()

    outcomes, connections = asyncio.run(play())
    assert [o.result for o in outcomes] == [f"m{i}" for i in range(8)]
    assert connections == 1


def test_a_dead_server_is_a_lost_tool_server_and_the_next_call_reconnects(tmp_path):
    executor = McpExecutor(LOOSE)

    async def play():
        session = executor.start(None, tmp_path, None)  # type: ignore[arg-type]
        try:
            with pytest.raises(ToolServerFault) as info:
                await session.call("die", {})
            after = await session.call("echo", {"message": "back"})
            return info.value, after
        finally:
            await executor.aclose()

    fault, after = asyncio.run(play())
    assert fault.kind == "tool_server_lost"
    assert "Connection closed" in str(fault)
    assert after.ok and after.result == "back"


def test_a_server_that_cannot_start_is_a_lost_tool_server_in_a_run(tmp_path):
    executor = McpExecutor(f"stdio:{sys.executable} {SERVERS} exits")

    async def play():
        session = executor.start(None, tmp_path, None)  # type: ignore[arg-type]
        await session.call("echo", {"message": "x"})

    with pytest.raises(ToolServerFault) as info:
        asyncio.run(play())
    assert info.value.kind == "tool_server_lost"
    assert "the server exited at start" in str(info.value)
    assert "fatal: configuration file missing" in str(info.value)


def test_through_a_run_tool_errors_are_scored_and_a_dead_server_is_an_error_record(tmp_path):
    import callbench
    from callbench.suites.suite import Suite
    from callbench.types.case import Case

    source = load_mcp_tools(LOOSE)
    cases = [
        Case(id="echo", instruction="Echo hi.", expected=[{"tool": "echo", "arguments": {"message": "hi"}}]),
        Case(id="fails", instruction="Fail.", expected=[{"tool": "fail", "arguments": {"reason": "x"}}]),
        Case(id="dies", instruction="Die.", expected=[{"tool": "die", "arguments": {}}]),
    ]
    suite = Suite(name="mcp-live", cases=cases, registry=source.registry, executor=source.executor())
    result = callbench.run(
        suite, "oracle", "real-tool-execution", out_dir=tmp_path / "run", progress="quiet", concurrency=1
    )
    records = {r.key.split(":")[-1]: r for r in result.records}
    assert records["echo"].status == "completed"
    assert records["echo"].verdicts["real-tool-execution"].passed
    assert records["echo"].trace.calls[0].result == "hi"
    assert records["fails"].status == "completed"
    assert not records["fails"].verdicts["real-tool-execution"].passed
    assert records["fails"].trace.calls[0].error == "Error executing tool fail: refused: x"
    assert records["dies"].status == "error"
    assert records["dies"].error.type == "tool_server_lost"


TYPED = f"stdio:{sys.executable} {SERVERS} typed"


def test_declared_output_schemas_become_result_schemas_and_a_broken_one_is_noted():
    source = load_mcp_tools(f"mcp:{TYPED}")
    sku = source.registry.get("lookup_sku")
    assert sku.result_schema is not None and set(sku.result_schema["properties"]) == {"sku", "name"}
    assert source.registry.get("vague").result_schema is None  # 'numbr' is no JSON Schema type
    vague_note = next(note for note in source.notes if "'vague'" in note)
    assert "ignored its outputSchema" in vague_note and "numbr" in vague_note


def test_structured_content_breaking_the_declared_schema_is_the_servers_fault(tmp_path):
    """A reply whose structuredContent its own outputSchema refuses is no answer the model can be
    scored on: an error record (``tool_server_bad_result``), and the connection keeps serving."""
    executor = McpExecutor(TYPED)

    async def play():
        session = executor.start(None, tmp_path, None)  # type: ignore[arg-type]
        try:
            with pytest.raises(ToolServerFault) as broken:
                await session.call("miscount", {})
            after = await session.call("lookup_sku", {"name": "mug"})
            return broken.value, after
        finally:
            await executor.aclose()

    broken, after = asyncio.run(play())
    assert broken.kind == "tool_server_bad_result"
    assert "Invalid structured content returned by tool miscount" in str(broken)
    assert "\n" not in str(broken)
    assert after.ok and after.result == {"sku": "SKU-329", "name": "mug"}  # structuredContent, not text
