"""callbench.mcp.client and callbench.tools.mcp_source against the tiny servers of client_servers.py."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from callbench.errors import ConfigError
from callbench.mcp.client import McpConnection, McpServerError, McpServerSpec, McpTool
from callbench.tools.mcp_source import contracts_from_tools, fetch_listing, strictness_actions

SERVERS = Path(__file__).with_name("client_servers.py")


def stdio(mode: str) -> str:
    return f"stdio:{sys.executable} {SERVERS} {mode}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- specs ----------------------------------------------------------------------------------------
def test_spec_parses_stdio_with_shell_quoting_and_the_mcp_prefix():
    spec = McpServerSpec.parse("mcp:stdio:python -m server --name 'two words'")
    assert spec.kind == "stdio"
    assert spec.command == ("python", "-m", "server", "--name", "two words")
    assert spec.text == "stdio:python -m server --name 'two words'"


def test_spec_parses_http_and_https_urls():
    assert McpServerSpec.parse("http://127.0.0.1:8000/mcp").url == "http://127.0.0.1:8000/mcp"
    spec = McpServerSpec.parse("mcp:https://example.org/mcp")
    assert (spec.kind, spec.url) == ("http", "https://example.org/mcp")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("stdio:", "no command after 'stdio:'"),
        ("stdio:python 'unclosed", "cannot split the command"),
        ("ftp://host/x", "write 'stdio:COMMAND ARGS' or 'http://HOST/PATH'"),
        ("http://", "the URL names no host"),
    ],
)
def test_bad_specs_are_one_config_error_line(text, fragment):
    with pytest.raises(ConfigError) as info:
        McpServerSpec.parse(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


# -- start failures -------------------------------------------------------------------------------
def connect_error(spec: str, **options) -> str:
    async def attempt() -> None:
        async with McpConnection(spec, **options):
            pass

    with pytest.raises(McpServerError) as info:
        asyncio.run(attempt())
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_command_names_the_spec_and_the_command():
    message = connect_error("stdio:no-such-mcp-server --flag")
    assert message == "MCP server 'stdio:no-such-mcp-server --flag': command 'no-such-mcp-server' not found"


def test_server_exiting_at_start_reports_its_stderr_tail():
    message = connect_error(stdio("exits"))
    assert message.startswith(f"MCP server {stdio('exits')!r}: the server exited at start")
    assert "stderr: fatal: configuration file missing" in message


def test_refused_url_says_so():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    message = connect_error(url, connect_timeout_s=10)
    assert message.startswith(f"MCP server {url!r}: connection refused or unreachable")


def test_silent_server_times_out_in_the_handshake():
    spec = f"stdio:{sys.executable} -c 'import time; time.sleep(30)'"
    started = time.perf_counter()
    message = connect_error(spec, connect_timeout_s=1.0)
    assert message.endswith("no answer to the handshake within 1 s")
    assert time.perf_counter() - started < 10


def test_invalid_schema_is_one_line_naming_server_and_tool():
    with pytest.raises(McpServerError) as info:
        asyncio.run(fetch_listing(stdio("bad_schema")))
    assert str(info.value) == (
        f"MCP server {stdio('bad_schema')!r}: tool 'broken': invalid input schema: "
        "invalid JSON Schema at properties/x/type: 'strnig' is not valid under any of the given schemas"
    )


# -- listings as contracts ------------------------------------------------------------------------
def test_loose_listing_becomes_strict_contracts_with_one_note_per_tool():
    listing = asyncio.run(fetch_listing(stdio("loose")))
    assert listing.registry.names() == ["echo", "plot", "fail", "die"]
    assert len(listing.notes) == 4
    echo = listing.registry.get("echo")
    assert echo.read_only is True
    assert echo.description == "Echo a message"
    assert echo.parameters["additionalProperties"] is False
    assert echo.parameters["required"] == ["message"]
    note = next(n for n in listing.notes if "'plot'" in n)
    assert "added additionalProperties: false (root, $defs.Point)" in note
    assert "kept optional properties optional (label)" in note
    assert "kept $ref (resolved by the validator) (point)" in note
    assert "kept nullable values (anyOf with null) (label)" in note
    plot = listing.registry.get("plot")
    assert plot.parameters["$defs"]["Point"]["additionalProperties"] is False


def test_strict_listing_has_no_notes():
    listing = asyncio.run(fetch_listing(stdio("strict")))
    assert listing.registry.names() == ["lookup"]
    assert listing.notes == []


def test_listing_over_streamable_http():
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVERS), "loose", "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def use() -> tuple[list[str], str]:
            async with McpConnection(f"mcp:http://127.0.0.1:{port}/mcp") as connection:
                names = [tool.name for tool in await connection.list_tools()]
                reply = await connection.call_tool("echo", {"message": "hi", "times": 2})
                return names, reply.text

        names, text = asyncio.run(use())
        assert names == ["echo", "plot", "fail", "die"]
        assert text == "hi hi"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_strictness_actions_of_a_strict_schema_are_empty():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert strictness_actions(schema) == []


def test_duplicate_and_badly_named_tools_are_errors_naming_the_server():
    tool = McpTool(name="same", description="", input_schema={"type": "object", "properties": {}})
    with pytest.raises(McpServerError, match=r"^MCP server 'srv': duplicate tool name 'same'$"):
        contracts_from_tools("srv", [tool, tool])
    bad = McpTool(name="has space", description="", input_schema={"type": "object"})
    with pytest.raises(McpServerError, match=r"^MCP server 'srv': tool 'has space': the name does not match"):
        contracts_from_tools("srv", [bad])
    root = McpTool(name="arr", description="", input_schema={"type": "array"})
    with pytest.raises(McpServerError, match="parameters schema must have type 'object'"):
        contracts_from_tools("srv", [root])


def test_a_caller_cancelled_mid_handshake_takes_the_server_down_with_it():
    spec = f"stdio:{sys.executable} -c 'import time; time.sleep(30)'"

    async def attempt() -> bool:
        connection = McpConnection(spec, connect_timeout_s=20)
        entering = asyncio.create_task(connection.__aenter__())
        await asyncio.sleep(1.0)
        entering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await entering
        owner = connection._owner
        deadline = time.monotonic() + 10
        while not owner.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return owner.done()

    assert asyncio.run(attempt()) is True
