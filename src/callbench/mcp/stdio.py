"""callbench's stdio transport for MCP servers: the SDK's process handling, its own reading of stdout.

The SDK's stdio client (mcp 2.3) reads a server's stdout by joining each chunk that arrives to what
it holds of the current line, so one long line costs time quadratic in its length: a 50 MB tool
result took 35 s of CPU, past the call time-out, and was reported as a server that did not answer.
It sets no limit on a line, and it logs a line that is not JSON-RPC (a server that prints to its
stdout) with a full traceback. This transport starts and stops the server process exactly as the SDK
does (with the SDK's own helpers) and reads its stdout in linear time:

* a line longer than ``max_message_bytes`` is dropped as it arrives, never held whole. When its head
  shows it is the answer to a request, that request gets a JSON-RPC error with the code
  :data:`MESSAGE_TOO_LARGE` (read by :func:`too_large_size`) and the connection goes on; otherwise
  the connection is closed. ``on_too_large(size)`` hears of it either way;
* a line that is not a JSON-RPC message is handed to ``on_noise(line)`` and skipped: the session
  goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.lowlevel

MESSAGE_TOO_LARGE = -32099
"""JSON-RPC error code of the reply this transport puts in place of an answer over the size limit
(the implementation-defined range; the error's ``data`` names callbench, so a server's own -32099
is not mistaken for it)."""
TOO_LARGE_MARK = "callbench_message_too_large"

HEAD_BYTES = 4096
"""How much of an oversized line is kept to find the id of the request it answers."""

_ANSWER_HEAD = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*,'
    rb'\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(?:result|error)"\s*:'
)
"""The start of an answer as servers write it: ``{"jsonrpc":"2.0","id":7,"result":...``."""


@dataclass
class Oversized:
    """A line dropped for its size: its first bytes and its whole length."""

    head: bytes
    size: int


class LineReader:
    """Cuts a byte stream into lines in linear time; a line over ``limit`` bytes is dropped as it
    arrives and comes out as :class:`Oversized`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._held = 0
        self._skipping: Oversized | None = None

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines ``chunk`` completes (without their newline)."""
        done: list[bytes | Oversized] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            self._add(chunk[start:] if end < 0 else chunk[start:end])
            if end < 0:
                return done
            done.append(self._finish())
            start = end + 1

    def _add(self, piece: bytes) -> None:
        if self._skipping is not None:
            self._skipping.size += len(piece)
            return
        if piece:
            self._parts.append(piece)
            self._held += len(piece)
        if self._held > self.limit:
            head = bytearray()
            for part in self._parts:
                head += part[: HEAD_BYTES - len(head)]
                if len(head) >= HEAD_BYTES:
                    break
            self._skipping = Oversized(bytes(head), self._held)
            self._parts, self._held = [], 0

    def _finish(self) -> bytes | Oversized:
        if self._skipping is not None:
            dropped, self._skipping = self._skipping, None
            return dropped
        line = b"".join(self._parts)
        self._parts, self._held = [], 0
        return line


def answered_id(head: bytes) -> int | str | None:
    """The id of the request an answer's first bytes name (``None``: not an answer, or unreadable)."""
    found = _ANSWER_HEAD.match(head)
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if isinstance(value, int | str) else None


def too_large_size(data: Any) -> int | None:
    """The size of the dropped answer when ``data`` is the data of this transport's size error."""
    if isinstance(data, dict) and data.get(TOO_LARGE_MARK) is True and isinstance(data.get("size"), int):
        return int(data["size"])
    return None


@asynccontextmanager
async def stdio_transport(
    server: Any,
    *,
    errlog: TextIO,
    max_message_bytes: int,
    on_noise: Callable[[bytes], None],
    on_too_large: Callable[[int], None],
) -> AsyncGenerator[tuple[Any, Any], None]:
    """Start the stdio server ``server`` (the SDK's ``StdioServerParameters``) and connect to it;
    yields the read and write streams the SDK's ``Client`` takes as a transport."""
    import mcp_types as types
    from mcp.client import stdio as sdk
    from mcp.shared.message import SessionMessage

    command = await sdk._get_executable_command(server.command)
    process = await sdk._create_platform_compatible_process(
        command=command,
        args=server.args,
        env=sdk.get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # As in the SDK: no awaits between the spawn and the task group, or a cancellation in the gap
    # would leak the live process.
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    lines = LineReader(max_message_bytes)

    def message_of(line: bytes | Oversized) -> SessionMessage | None:
        """What the session gets for one line; ``None``: nothing. Raises EOFError to close."""
        if isinstance(line, Oversized):
            on_too_large(line.size)
            request = answered_id(line.head)
            if request is None:  # not an answer the session waits for: nothing can stand in for it
                raise EOFError
            error = types.ErrorData(
                code=MESSAGE_TOO_LARGE,
                message=f"the answer was {line.size} bytes, over the {max_message_bytes}-byte limit",
                data={TOO_LARGE_MARK: True, "size": line.size, "limit": max_message_bytes},
            )
            return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request, error=error))
        if not line.strip():
            return None
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError:
            pass
        try:
            # Valid JSON pydantic's reader refuses: an escaped lone surrogate, or bytes that are not
            # UTF-8 in a string. The tool's text is data: read with the standard library, kept as is.
            value = json.loads(line.decode("utf-8", "surrogateescape"))
            return SessionMessage(types.jsonrpc_message_adapter.validate_python(value, by_name=False))
        except (ValueError, RecursionError):
            on_noise(line)
            return None

    async def stdout_reader() -> None:
        assert process.stdout, "the server process is spawned with pipes"
        try:
            async with read_stream_writer:
                try:
                    async for chunk in process.stdout:
                        for line in lines.feed(chunk):
                            try:
                                message = message_of(line)
                            except EOFError:
                                return
                            if message is None:
                                continue
                            try:
                                await read_stream_writer.send(message)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session is gone; only the drain below remains
                finally:
                    await sdk._drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # shutdown closed the pipe under the read, or the server broke it: the session sees the end

    async def stdin_writer() -> None:
        assert process.stdin, "the server process is spawned with pipes"
        try:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    data = (text + "\n").encode(server.encoding, server.encoding_error_handler)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may still be alive: closing the read side ends the session's waits.
            await read_stream_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(stdout_reader)
        tasks.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            # Bounded waits inside; shielded so that a cancelled caller cannot leak the process.
            with anyio.CancelScope(shield=True):
                await shutdown()
            tasks.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
