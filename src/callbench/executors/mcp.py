"""The ``mcp`` executor: forwards every call to a live MCP server.

A reply the tool marks ``isError`` (or a JSON-RPC error about the call from a live server) is an
expected failure: the model hears the message and the call is scored as a failed execution. A server
that died, a broken connection or a call that timed out is infrastructure: the session raises
:class:`~callbench.errors.ToolServerFault` (``tool_server_lost``, ``tool_server_timeout``; a
reply whose structured content breaks the tool's own declared ``outputSchema`` is
``tool_server_bad_result``; an answer over the size limit on one message is
``tool_server_too_large``), so the case becomes an error record (counted, excluded from accuracy,
re-run by ``--resume``). The time a call waits on the server is the server's, not the model's: the
case clock hears of it as of a model request, and a case limit that runs out during it is a
``tool_server_timeout`` error record too.

Connections are per run, not per case. Starting a real server costs seconds (``mcp-server-git``
imports GitPython and the SDK: about 2 s here) while a call costs milliseconds, so one connection per
case would make process start-up the whole cost of a run; MCP servers serve concurrent requests
over one connection, so cases still run side by side. A server whose tools keep per-connection state
would leak it between cases: such a suite isolates cases through its arguments (the ``mcp-git`` suite
gives every case its own repository) or subclasses :class:`McpExecutor` to connect per case. The
connection is opened on the first call of the run, kept per event loop (a gold replay run through
:func:`~callbench.executors.base.run_sync` has a loop of its own), replaced by a fresh one (a new
server process for stdio) after a call that timed out, was cut by its case's limit or lost the
server, so one hung or crashed call never reaches the next case, and closed by
:meth:`McpExecutor.aclose`.

:func:`load_mcp_tools` is what ``--tools mcp:SPEC`` calls: the server's tools as a registry, the
notes on schemas that were not strict, and an executor bound to the same server.
"""

from __future__ import annotations

import asyncio
import traceback
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.errors import ToolBug, ToolServerFault
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome, run_sync
from callbench.mcp.client import (
    McpBadResult,
    McpCallResult,
    McpConnection,
    McpConnectionLost,
    McpResultTooLarge,
    McpServerError,
    McpServerSpec,
)
from callbench.suites.suite import Suite
from callbench.tools.mcp_source import fetch_listing
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.jsoncodec import depth_exceeds, parse_json_value, utf8_encodable
from callbench.types.waits import TOOL_SERVER, endpoint_waits


class McpExecutor(Executor):
    """Sessions that forward calls to the MCP server ``spec`` over one connection per run (per loop)."""

    name = "mcp"

    def __init__(
        self,
        spec: McpServerSpec | str,
        *,
        connect_timeout_s: float = 30.0,
        call_timeout_s: float = 60.0,
    ) -> None:
        self.spec = spec if isinstance(spec, McpServerSpec) else McpServerSpec.parse(spec)
        self.connect_timeout_s = connect_timeout_s
        self.call_timeout_s = call_timeout_s
        self._connections: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, McpConnection] = (
            weakref.WeakKeyDictionary()
        )
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._retiring: set[asyncio.Task[None]] = set()
        """Lost connections being closed (kept so that the tasks are not collected mid-close)."""

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        return McpSession(self)

    async def connection(self) -> McpConnection:
        """This event loop's connection, opened (or reopened after a loss) on demand."""
        loop = asyncio.get_running_loop()
        lock = self._locks.setdefault(loop, asyncio.Lock())
        async with lock:  # concurrent first calls of many cases open one connection, not many
            current = self._connections.get(loop)
            if current is not None and current.connected:
                return current
            if current is not None:  # lost or hung: closed beside the new one, never waited for here
                self._connections.pop(loop, None)
                self._retire(current)
            fresh = McpConnection(
                self.spec, connect_timeout_s=self.connect_timeout_s, call_timeout_s=self.call_timeout_s
            )
            await fresh.__aenter__()
            self._connections[loop] = fresh
            return fresh

    def _discard(self, connection: McpConnection) -> None:
        """Stop using ``connection`` (if it is still this loop's) and close it in the background."""
        loop = asyncio.get_running_loop()
        if self._connections.get(loop) is connection:
            self._connections.pop(loop, None)
            self._retire(connection)

    def _retire(self, connection: McpConnection) -> None:
        """Close a lost connection in the background: a hung stdio server takes the SDK's grace period
        and a kill to stop, which the next case must not wait for."""
        task = asyncio.get_running_loop().create_task(connection.__aexit__(None, None, None))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def forward(self, name: str, arguments: dict[str, Any]) -> McpCallResult:
        """Call ``name`` on the server.

        The wait is the tool server's time, not the model's (the case clock hears of it, as of a model
        request), and a case limit that runs out during it makes an error record. A server that does
        not answer in time or goes away is a :class:`ToolServerFault`; the next call, in this case or
        the next, gets a fresh connection (a new process for a stdio server).
        """
        waits = endpoint_waits.get()
        if waits is not None:
            waits.begin()
            waits.note(TOOL_SERVER)
        try:
            connection = await self.connection()
            try:
                return await connection.call_tool(name, arguments)
            except (asyncio.CancelledError, McpConnectionLost):
                # Replaced now, not at the next call: the other calls in flight on a hung server fail
                # at once (their cases become error records) instead of each waiting out its time-out.
                self._discard(connection)
                raise
        except McpConnectionLost as exc:
            raise ToolServerFault(
                "tool_server_timeout" if exc.timed_out else "tool_server_lost", str(exc)
            ) from exc
        except McpServerError as exc:  # could not be started again after a loss
            raise ToolServerFault("tool_server_lost", str(exc)) from exc
        except McpBadResult as exc:  # the server broke its own outputSchema: its fault, not the model's
            raise ToolServerFault("tool_server_bad_result", str(exc)) from exc
        except McpResultTooLarge as exc:  # an answer over the message size limit: not a time-out
            raise ToolServerFault("tool_server_too_large", str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - infrastructure, never the model's fault
            raise ToolBug(name, exc, traceback.format_exc()) from exc
        finally:
            if waits is not None:
                waits.end()

    async def aclose(self) -> None:
        """Close this loop's connection (the others close with their loops) and the retired ones."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        connection = self._connections.pop(loop, None)
        if connection is not None:
            await connection.__aexit__(None, None, None)
        retiring = [task for task in self._retiring if task.get_loop() is loop]
        if retiring:
            await asyncio.gather(*retiring, return_exceptions=True)


def json_text_value(text: str) -> Any:
    """A tool result given as text: the JSON object or array it holds, else the text itself.

    Most MCP servers answer with a JSON document in a text block and no ``structuredContent``; read
    as a value, a later call's ``$ref`` (``lookup_sku.sku``) resolves against it as it does against a
    Python tool's result. Only a whole object or array counts: a text that merely looks like a
    number (a commit id, ``42``) stays text."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return text
    try:
        return parse_json_value(stripped)
    except ValueError:  # not JSON, or JSON nested too deep to keep as a value: the text itself
        return text


class McpSession(ExecutorSession):
    """One case's calls, forwarded. Subclasses map arguments and reply texts and read the state."""

    def __init__(self, executor: McpExecutor) -> None:
        self.executor = executor

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if not utf8_encodable(arguments):
            # JSON allows a lone surrogate; JSON-RPC over UTF-8 cannot carry it (the SDK would drop
            # the connection). The model's call is refused to it, like any other bad argument.
            return ToolOutcome.failure(
                "the arguments hold a lone UTF-16 surrogate, which an MCP message cannot carry: "
                "the call was not sent to the tool server"
            )
        reply = await self.executor.forward(name, self.map_arguments(name, arguments))
        text = self.map_text(reply.text)
        if reply.is_error:
            return ToolOutcome.failure(text or f"tool {name!r} reported an error", mcp_is_error=True)
        result: Any = reply.structured
        if result is None or depth_exceeds(result):  # too deep to keep as a value: its text
            result = json_text_value(text)
        return ToolOutcome(ok=True, result=result, content=text)

    def map_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments sent to the server (default: as the model wrote them)."""
        return arguments

    def map_text(self, text: str) -> str:
        """The reply text the model hears (default: as the server wrote it)."""
        return text


@dataclass
class McpToolSource:
    """A live MCP server as a tool source: its registry, the notes on its schemas, its executor."""

    spec: McpServerSpec
    registry: ToolRegistry
    notes: list[str] = field(default_factory=list)

    def executor(self) -> McpExecutor:
        """An executor forwarding calls to the same server."""
        return McpExecutor(self.spec)


def load_mcp_tools(spec: str) -> McpToolSource:
    """List the tools of the server ``spec`` (``[mcp:]stdio:COMMAND ARGS`` or ``[mcp:]http(s)://...``).

    Bad input (unparsable spec, command not found, server exits at start, connection refused,
    handshake failure, time-out, a tool with an invalid schema) is one
    :class:`~callbench.mcp.client.McpServerError` line naming the server, before any case runs.
    """
    listing = run_sync(fetch_listing(spec))
    return McpToolSource(spec=listing.spec, registry=listing.registry, notes=listing.notes)
