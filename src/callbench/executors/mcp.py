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

Where a case's calls go depends on the tool source's isolation (:mod:`callbench.mcp.isolation`,
set by the run through :meth:`McpExecutor.isolate`). Under ``case`` every session leases a server of
its own on its first call (a stdio server started ahead by the executor's warm pool, in a fresh
folder; an HTTP server through a fresh connection after the suite's reset hook, one case at a time)
and :meth:`McpSession.aclose` stops it when the case ends, however it ended. Under ``run`` and
``shared`` (and when no isolation was set) the cases share one connection per run: MCP servers serve
concurrent requests over one connection, so cases still run side by side; ``run`` starts that server
in a fresh folder of the run, ``shared`` as its command says. That connection is opened on the first
call of the run, kept per event loop (a gold replay run through
:func:`~callbench.executors.base.run_sync` has a loop of its own), replaced by a fresh one (a new
server process for stdio) after a call that timed out, was cut by its case's limit or lost the
server, so one hung or crashed call never reaches the next case, and closed by
:meth:`McpExecutor.aclose`. A case's own server that is lost is replaced the same way.

:func:`load_mcp_tools` is what ``--tools mcp:SPEC`` calls: the server's tools as a registry, the
notes on schemas that were not strict, and an executor bound to the same server.
"""

from __future__ import annotations

import asyncio
import contextvars
import traceback
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

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
from callbench.mcp.isolation import (
    IsolatedServer,
    Isolation,
    IsolationChoice,
    ServerFolder,
    WarmPool,
    materialize,
    names_workdir,
    run_reset,
    start_in_folder,
)
from callbench.suites.suite import Suite
from callbench.tools.mcp_source import fetch_listing, fetch_manifest
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.jsoncodec import depth_exceeds, parse_json_value, utf8_encodable
from callbench.types.manifest import ToolSourceManifest
from callbench.types.tape import active_tape
from callbench.types.waits import TOOL_SERVER, endpoint_waits

_CASE_SERVER: contextvars.ContextVar[CaseServer | None] = contextvars.ContextVar(
    "callbench_mcp_case_server", default=None
)
"""The server of the case whose call is being forwarded (``case`` isolation), set by its session."""


class McpExecutor(Executor):
    """Sessions that forward calls to the MCP server ``spec``: one connection per run (per loop), or
    one server per case under ``case`` isolation."""

    name = "mcp"
    declared_isolation: ClassVar[Isolation | None] = None
    """The isolation this executor's cases need whatever the listing says (a subclass that isolates
    cases through their arguments, like ``mcp-git``'s, says ``run``); ``None``: from the listing."""
    declared_isolation_why: ClassVar[str] = ""
    """Why, as ``run.json`` records it."""

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
        self.choice: IsolationChoice | None = None
        """The run's isolation of this server (:meth:`isolate`); ``None``: shared, as before any."""
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WarmPool] = (
            weakref.WeakKeyDictionary()
        )
        self._run_specs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, McpServerSpec] = (
            weakref.WeakKeyDictionary()
        )
        self._one_case: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._run_folders: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ServerFolder] = (
            weakref.WeakKeyDictionary()
        )
        self._run_reset_done: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

    @property
    def isolation(self) -> Isolation:
        return self.choice.isolation if self.choice is not None else "shared"

    def preflight(self) -> None:
        """Called before a run first starts the live server (its manifest's listing, a recording's):
        a subclass checks what its server needs and raises one :class:`~callbench.errors.ConfigError`
        line saying how to install what is missing (``mcp-memory``: Node.js and the npm package). A
        ``--replay`` never calls it."""

    def isolate(self, choice: IsolationChoice) -> None:
        """Run under ``choice``. A choice the server cannot honour is one line: ``case`` for an HTTP
        server without a reset hook, ``{workdir}`` where there is no fresh folder (``shared``, HTTP)."""
        where = f"MCP server {self.spec.text!r}"
        if self.spec.kind == "http" and names_workdir(self.spec):
            raise McpServerError(
                f"{where}: {{workdir}} names a stdio server's own folder; an HTTP server has none"
            )
        if choice.isolation == "case" and self.spec.kind == "http" and choice.reset is None:
            raise McpServerError(
                f"{where}: isolation case needs a fresh server per case, which callbench cannot start for an "
                "HTTP server: declare a reset hook (tool_source.reset in suite.yaml) or choose "
                f"--tools-isolation shared ({choice.why})"
            )
        if choice.isolation == "shared" and names_workdir(self.spec):
            raise McpServerError(
                f"{where}: isolation shared starts the server as its command says, in no fresh folder, so "
                "{workdir} names nothing: choose run or case"
            )
        self.choice = choice

    def plan_cases(self, cases: int, concurrency: int) -> None:
        """``case`` isolation of a stdio server: the warm pool of this loop starts up to ``concurrency``
        servers ahead of the cases, never more than ``cases`` in all."""
        if self.isolation == "case" and self.spec.kind == "stdio":
            self._pool().plan(cases, concurrency)

    def _pool(self) -> WarmPool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = WarmPool(self._start_case_server)
        return pool

    async def _start_case_server(self) -> IsolatedServer:
        return await start_in_folder(
            self.spec, connect_timeout_s=self.connect_timeout_s, call_timeout_s=self.call_timeout_s
        )

    async def lease(self) -> IsolatedServer:
        """A server for one case (``case`` isolation), its reset hook run: a started stdio server of
        the warm pool, or a fresh connection to an HTTP server while no other case holds it."""
        reset = self.choice.reset if self.choice is not None else None
        if self.spec.kind == "stdio":
            pool = self._pool()
            server = await pool.lease()
            if reset is not None:
                try:
                    await run_reset(
                        reset,
                        server.connection,
                        server.folder.work if server.folder else None,
                        self.spec.text,
                    )
                except BaseException:
                    await pool.release(server)
                    raise
            return server
        loop = asyncio.get_running_loop()
        gate = self._one_case.setdefault(loop, asyncio.Lock())
        await gate.acquire()  # one case at a time: the reset makes the server clean for this case only
        connection = McpConnection(
            self.spec, connect_timeout_s=self.connect_timeout_s, call_timeout_s=self.call_timeout_s
        )
        try:
            await connection.__aenter__()
            server = IsolatedServer(connection, on_stop=gate.release)
        except BaseException:
            gate.release()
            raise
        try:
            assert reset is not None  # isolate() refuses case isolation of an HTTP server without one
            await run_reset(reset, connection, None, self.spec.text)
        except BaseException:
            await server.stop()
            raise
        return server

    async def release(self, server: IsolatedServer) -> None:
        """Stop a case's server (in the background when the run's warm pool waits for it at the end)."""
        if server.folder is not None:
            await self._pool().release(server)
        else:
            await server.stop()

    def _run_spec(self) -> McpServerSpec:
        """The spec of this loop's shared connection: under ``run`` (stdio), the server in a fresh folder
        of the run, removed when the loop is closed or collected; else the spec as written."""
        if self.isolation != "run" or self.spec.kind != "stdio":
            return self.spec
        loop = asyncio.get_running_loop()
        spec = self._run_specs.get(loop)
        if spec is None:
            folder = ServerFolder.create()
            weakref.finalize(loop, folder.remove)  # a replay loop of its own is never aclose()d
            spec = self._run_specs[loop] = materialize(self.spec, folder)
            self._run_folders[loop] = folder
        return spec

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        return McpSession(self)

    async def connection(self) -> McpConnection:
        """The forwarded case's own server (``case`` isolation), else this event loop's connection,
        opened (or reopened after a loss) on demand."""
        case_server = _CASE_SERVER.get()
        if case_server is not None and case_server.executor is self:
            return await case_server.connection()
        loop = asyncio.get_running_loop()
        lock = self._locks.setdefault(loop, asyncio.Lock())
        async with lock:  # concurrent first calls of many cases open one connection, not many
            current = self._connections.get(loop)
            if current is not None and current.connected:
                return current
            if current is not None:  # lost or hung: closed beside the new one, never waited for here
                self._connections.pop(loop, None)
                self._retire(current)
            spec = self._run_spec()
            fresh = McpConnection(
                spec, connect_timeout_s=self.connect_timeout_s, call_timeout_s=self.call_timeout_s
            )
            await fresh.__aenter__()
            reset = self.choice.reset if self.choice is not None else None
            if self.isolation == "run" and reset is not None and loop not in self._run_reset_done:
                try:  # once per run: the server starts this run clean
                    await run_reset(reset, fresh, Path(spec.cwd) if spec.cwd else None, self.spec.text)
                except BaseException:
                    await fresh.__aexit__(None, None, None)
                    raise
                self._run_reset_done.add(loop)
            self._connections[loop] = fresh
            return fresh

    def _discard(self, connection: McpConnection) -> None:
        """Stop using ``connection`` (if it is still this loop's, or the case's own) and close it in the
        background."""
        case_server = _CASE_SERVER.get()
        if case_server is not None and case_server.executor is self:
            case_server.discard(connection)
            return
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
        the next, gets a fresh connection (a new process for a stdio server). Under ``--record`` or
        ``--replay`` the session's tape takes the call (:mod:`callbench.executors.cassette`).
        """
        tape = active_tape.get()
        if tape is not None:
            return await tape(self, name, arguments)
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
        """Close this loop's connection (the others close with their loops), the retired ones, and the
        warm pool (servers started for no case, stops still running); remove the run's folder."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        try:
            connection = self._connections.pop(loop, None)
            if connection is not None:
                await connection.__aexit__(None, None, None)
            retiring = [task for task in self._retiring if task.get_loop() is loop]
            if retiring:
                await asyncio.gather(*retiring, return_exceptions=True)
        finally:
            pool = self._pools.pop(loop, None)
            if pool is not None:
                await pool.aclose()
            folder = self._run_folders.pop(loop, None)
            self._run_specs.pop(loop, None)
            if folder is not None:
                folder.remove()


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


class CaseServer:
    """The server of one case under ``case`` isolation: leased on the case's first call, replaced
    after a loss, released (stopped) by :meth:`release` when the case ends."""

    def __init__(self, executor: McpExecutor) -> None:
        self.executor = executor
        self.server: IsolatedServer | None = None
        self._lock: asyncio.Lock | None = None
        self.released = False

    async def connection(self) -> McpConnection:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # an agent's parallel calls must not lease two servers
            if self.released:
                raise McpServerError(f"MCP server {self.executor.spec.text!r}: the case is over")
            current = self.server
            if current is not None and current.connection.connected:
                return current.connection
            if current is not None:
                self.discard(current.connection)
            self.server = await self.executor.lease()
            return self.server.connection

    def discard(self, connection: McpConnection) -> None:
        """A lost or cut connection: its server is stopped in the background; a later call leases
        another."""
        server = self.server
        if server is not None and server.connection is connection:
            self.server = None
            task = asyncio.get_running_loop().create_task(
                self.executor.release(server), context=contextvars.Context()
            )
            self.executor._retiring.add(task)
            task.add_done_callback(self.executor._retiring.discard)

    async def release(self) -> None:
        self.released = True
        server, self.server = self.server, None
        if server is not None:
            await self.executor.release(server)


class McpSession(ExecutorSession):
    """One case's calls, forwarded. Subclasses map arguments and reply texts and read the state."""

    def __init__(self, executor: McpExecutor) -> None:
        self.executor = executor
        self.case_server = CaseServer(executor) if executor.isolation == "case" else None
        """The case's own server under ``case`` isolation (leased on the first call)."""

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if not utf8_encodable(arguments):
            # JSON allows a lone surrogate; JSON-RPC over UTF-8 cannot carry it (the SDK would drop
            # the connection). The model's call is refused to it, like any other bad argument.
            return ToolOutcome.failure(
                "the arguments hold a lone UTF-16 surrogate, which an MCP message cannot carry: "
                "the call was not sent to the tool server"
            )
        token = _CASE_SERVER.set(getattr(self, "case_server", None))
        try:
            reply = await self.executor.forward(name, self.map_arguments(name, arguments))
        finally:
            _CASE_SERVER.reset(token)
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

    async def aclose(self) -> None:
        """Stop the case's own server (``case`` isolation), then :meth:`close`."""
        try:
            case_server = getattr(self, "case_server", None)
            if case_server is not None:
                await case_server.release()
        finally:
            self.close()


@dataclass
class McpToolSource:
    """A live MCP server as a tool source: its registry, the notes on its schemas, its executor."""

    spec: McpServerSpec
    registry: ToolRegistry
    notes: list[str] = field(default_factory=list)
    manifest: ToolSourceManifest | None = None
    """The server's manifest entry (name, version, protocol, package, schema hashes)."""

    def executor(self) -> McpExecutor:
        """An executor forwarding calls to the same server."""
        return McpExecutor(self.spec)


def load_mcp_tools(spec: str) -> McpToolSource:
    """List the tools of the server ``spec`` (``[mcp:]stdio:COMMAND ARGS`` or ``[mcp:]http(s)://...``).

    Bad input (unparsable spec, command not found, server exits at start, connection refused,
    handshake failure, time-out, a tool with an invalid schema) is one
    :class:`~callbench.mcp.client.McpServerError` line naming the server, before any case runs.
    """
    server = McpServerSpec.parse(spec)
    with _listing_folder(server) as listed:
        listing = run_sync(fetch_listing(listed))
    return McpToolSource(
        spec=server, registry=listing.registry, notes=listing.notes, manifest=listing.manifest
    )


@contextmanager
def _listing_folder(spec: McpServerSpec) -> Iterator[McpServerSpec]:
    """``spec`` as it can be listed: a command that names ``{workdir}`` is started in a fresh folder of
    its own (removed afterwards); any other spec as written."""
    if spec.kind != "stdio" or not names_workdir(spec):
        yield spec
        return
    folder = ServerFolder.create()
    try:
        yield materialize(spec, folder)
    finally:
        folder.remove()


def probe_manifest(executor: McpExecutor) -> ToolSourceManifest:
    """The manifest entry of the server ``executor`` calls, from a handshake and a listing of its own
    (the run's connections open later, on the first call); a server that cannot start is one
    :class:`~callbench.mcp.client.McpServerError` line, before any case runs."""
    executor.preflight()
    with _listing_folder(executor.spec) as spec:
        return run_sync(fetch_manifest(spec, connect_timeout_s=executor.connect_timeout_s))
