"""Isolation of live MCP tool servers: what a case may see of another case's (or run's) calls.

A tool source runs under one of three isolations:

* ``case``: every case gets a server of its own. A stdio server is a fresh process in a fresh folder
  (:class:`ServerFolder`: its working folder, a temporary ``HOME`` and ``TMPDIR``), started ahead of
  the cases that need it by a :class:`WarmPool`; a server callbench cannot start (HTTP) gets a fresh
  connection and the suite's :class:`ResetHook` before each case, one case at a time;
* ``run``: one server for the whole run, in a fresh folder of the run (cases share it: for servers
  whose tools only read);
* ``shared``: one server, started as the command says, in callbench's own folder and ``HOME``; what
  one case (or run) leaves, the next sees, so verdicts may depend on the order of the cases.

``{workdir}`` in a stdio command's words or in its environment values names the server's working
folder (:func:`materialize`), so a server that keeps its state in a file (the reference memory server:
``MEMORY_FILE_PATH={workdir}/memory.jsonl``) starts clean too. The default isolation comes from the
tool listing (:func:`default_isolation`): ``case`` unless every tool says ``readOnlyHint: true``.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from callbench.errors import ConfigError
from callbench.mcp.client import McpConnection, McpServerError, McpServerSpec

Isolation = Literal["case", "run", "shared"]
ISOLATIONS: tuple[Isolation, ...] = ("case", "run", "shared")
WORKDIR = "{workdir}"
"""The placeholder of a server's working folder in its command and environment values."""
FOLDER_PREFIX = "callbench-{pid}-mcp"
"""Server folders: ``<tempdir>/callbench-<pid>-mcp<random>`` (a run killed with ``kill -9`` leaves
them to the next run's clean-up, as it does its cases' work folders)."""
ORDER_NOTE = "verdicts may depend on the order of the cases"
"""What ``show`` and the report say of a ``shared`` tool source."""
RESET_TIMEOUT_S = 60.0

DecidedBy = Literal["option", "suite", "executor", "default"]
"""Where the isolation came from: ``--tools-isolation``, the suite's ``tool_source`` declaration,
the suite's executor, or the tool listing's annotations."""

# Launchers that find their own files through HOME: a server started with a fresh HOME keeps using
# the user's (npx would fetch its package again per case, a pyenv shim would not find pyenv).
_LAUNCHER_HOMES: tuple[tuple[str, str], ...] = (
    ("npm_config_cache", ".npm"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("PIPX_HOME", ".local/pipx"),
    ("PYENV_ROOT", ".pyenv"),
    ("PYTHONUSERBASE", ".local"),
    ("NVM_DIR", ".nvm"),
    ("VOLTA_HOME", ".volta"),
    ("ASDF_DATA_DIR", ".asdf"),
    ("RUSTUP_HOME", ".rustup"),
    ("CARGO_HOME", ".cargo"),
    ("GOPATH", "go"),
)


class IsolationWarning(UserWarning):
    """An isolation that may not give what it seems to (``run`` for tools that change state, an HTTP
    server under ``case`` at a concurrency above 1)."""

    one_line = True
    """The CLI prints it as one ``callbench: warning:`` line."""


def parse_isolation(value: object, where: str) -> Isolation:
    """``case``, ``run`` or ``shared``; anything else is one line naming ``where``."""
    text = value.strip().lower() if isinstance(value, str) else value
    for isolation in ISOLATIONS:
        if text == isolation:
            return isolation
    raise ConfigError(f"{where} must be case, run or shared, got {value!r}")


@dataclass(frozen=True)
class ResetHook:
    """How a server callbench does not start per case is brought back to a clean state: a tool to
    call (with its arguments) or a shell command to run."""

    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    command: str | None = None

    @classmethod
    def parse(cls, value: object, where: str) -> ResetHook:
        """``{tool: NAME, arguments: {...}}`` or ``{command: "..."}`` (a bare string is a tool name)."""
        if isinstance(value, str) and value.strip():
            return cls(tool=value.strip())
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be {{tool: NAME}} or {{command: SHELL COMMAND}}, got {value!r}")
        unknown = sorted(set(value) - {"tool", "arguments", "command"})
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (keys: tool, arguments, command)")
        tool, command, arguments = value.get("tool"), value.get("command"), value.get("arguments", {})
        if (tool is None) == (command is None):
            raise ConfigError(f"{where} needs exactly one of tool and command")
        if tool is not None and not (isinstance(tool, str) and tool.strip()):
            raise ConfigError(f"{where}.tool must be a tool name, got {tool!r}")
        if command is not None and not (isinstance(command, str) and command.strip()):
            raise ConfigError(f"{where}.command must be a shell command, got {command!r}")
        if not isinstance(arguments, Mapping) or (command is not None and arguments):
            raise ConfigError(f"{where}.arguments must be a mapping of a tool's arguments")
        return cls(tool=tool.strip() if tool else None, arguments=dict(arguments), command=command)

    def describe(self) -> str:
        return f"tool {self.tool!r}" if self.tool else f"command {self.command!r}"

    def to_json(self) -> dict[str, Any]:
        if self.tool:
            return {"tool": self.tool, "arguments": dict(self.arguments)}
        return {"command": self.command}


@dataclass(frozen=True)
class ToolSourceDeclaration:
    """A suite's ``tool_source`` mapping (``suite.yaml``): the isolation its cases need, and the reset
    hook of a server that cannot be started per case."""

    isolation: Isolation | None = None
    reset: ResetHook | None = None

    @classmethod
    def parse(cls, value: object, where: str) -> ToolSourceDeclaration:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a mapping with isolation and/or reset, got {value!r}")
        unknown = sorted(set(value) - {"isolation", "reset"})
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (keys: isolation, reset)")
        isolation = value.get("isolation")
        reset = value.get("reset")
        return cls(
            isolation=parse_isolation(isolation, f"{where}.isolation") if isolation is not None else None,
            reset=ResetHook.parse(reset, f"{where}.reset") if reset is not None else None,
        )


@dataclass(frozen=True)
class IsolationChoice:
    """The isolation a tool source runs under, where it came from and why."""

    isolation: Isolation
    by: DecidedBy
    why: str
    reset: ResetHook | None = None

    def to_json(self, source: str, suites: Iterable[str]) -> dict[str, Any]:
        """The entry of ``run.json``'s ``options.tool_isolation``."""
        entry: dict[str, Any] = {
            "source": source,
            "suites": list(suites),
            "isolation": self.isolation,
            "by": self.by,
            "why": self.why,
        }
        if self.reset is not None:
            entry["reset"] = self.reset.to_json()
        return entry


def default_isolation(tools: Iterable[tuple[str, bool]]) -> tuple[Isolation, str]:
    """The isolation a listing of ``(tool name, readOnlyHint is true)`` asks for, and why: ``case``
    when any tool may change state (or does not say), ``run`` when every tool only reads."""
    listed = list(tools)
    changing = [name for name, read_only in listed if not read_only]
    if not changing:
        return "run", f"all {len(listed)} tools say readOnlyHint: true"
    shown = ", ".join(changing[:4]) + (f" and {len(changing) - 4} more" if len(changing) > 4 else "")
    return "case", f"{len(changing)} of {len(listed)} tools do not say readOnlyHint: true ({shown})"


def names_workdir(spec: McpServerSpec) -> bool:
    """Whether the command, its environment values or its folder name ``{workdir}``."""
    texts = [*spec.command, *(value for _, value in spec.env), spec.cwd or "", spec.url]
    return any(WORKDIR in text for text in texts)


# --- fresh folders ------------------------------------------------------------------------------


@dataclass
class ServerFolder:
    """A fresh folder for one server: ``work`` (its working folder, ``{workdir}``), ``home`` and
    ``tmp`` (its ``HOME`` and ``TMPDIR``); removed with everything in it by :meth:`remove`."""

    root: Path

    @classmethod
    def create(cls) -> ServerFolder:
        root = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX.format(pid=os.getpid())))
        folder = cls(root)
        for part in (folder.work, folder.home, folder.tmp):
            part.mkdir()
        return folder

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def launcher_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Where package launchers and version managers keep their files (npm's cache, uv's, pyenv...),
    as the user's environment says or at their usual place under the real ``HOME`` when it exists: a
    server given a fresh ``HOME`` still starts from the user's installs and caches."""
    environ = os.environ if environ is None else environ
    home = environ.get("HOME") or str(Path.home())
    out: dict[str, str] = {}
    for name, default in _LAUNCHER_HOMES:
        value = environ.get(name) or environ.get(name.upper())
        if value:
            out[name] = value
        elif (Path(home) / default).exists():
            out[name] = str(Path(home) / default)
    return out


def substitute(text: str, workdir: Path) -> str:
    return text.replace(WORKDIR, str(workdir))


def materialize(spec: McpServerSpec, folder: ServerFolder) -> McpServerSpec:
    """``spec`` started in ``folder``: ``{workdir}`` replaced in its words, environment values and
    folder, its working folder ``folder.work``, a fresh ``HOME`` and ``TMPDIR`` (the launchers'
    files kept, :func:`launcher_env`); what the spec's own environment says wins."""
    work = folder.work
    fresh = {
        "HOME": str(folder.home),
        "TMPDIR": str(folder.tmp),
        "TMP": str(folder.tmp),
        "TEMP": str(folder.tmp),
    }
    env = launcher_env() | fresh | {name: substitute(value, work) for name, value in spec.env}
    return replace(
        spec,
        command=tuple(substitute(word, work) for word in spec.command),
        env=tuple(sorted(env.items())),
        cwd=substitute(spec.cwd, work) if spec.cwd else str(work),
    )


# --- servers started in fresh folders, and the warm pool -----------------------------------------


@dataclass(eq=False)
class IsolatedServer:
    """A connected server and what to release with it (its folder, a lock)."""

    connection: McpConnection
    folder: ServerFolder | None = None
    on_stop: Callable[[], None] | None = None

    async def stop(self) -> None:
        """Close the connection (the process and its whole tree, for stdio), then the rest."""
        try:
            await self.connection.__aexit__(None, None, None)
        finally:
            if self.folder is not None:
                self.folder.remove()
            if self.on_stop is not None:
                self.on_stop()


async def start_in_folder(
    template: McpServerSpec, *, connect_timeout_s: float, call_timeout_s: float
) -> IsolatedServer:
    """Start the stdio server ``template`` in a fresh :class:`ServerFolder` and connect to it; a
    server that does not start is one :class:`McpServerError` line (its folder removed)."""
    folder = ServerFolder.create()
    connection = McpConnection(
        materialize(template, folder), connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s
    )
    try:
        await connection.__aenter__()
    except BaseException:
        folder.remove()
        raise
    return IsolatedServer(connection, folder)


async def run_reset(reset: ResetHook, connection: McpConnection, workdir: Path | None, where: str) -> None:
    """Run the reset hook: its tool through ``connection``, or its command in a shell (``{workdir}``
    replaced when the server has one). A failure is one :class:`McpServerError` line."""
    if reset.tool is not None:
        try:
            reply = await connection.call_tool(reset.tool, dict(reset.arguments))
        except Exception as exc:  # noqa: BLE001 - said as the reset's failure
            raise McpServerError(
                f"MCP server {where!r}: the reset hook ({reset.describe()}) failed: {exc}"
            ) from None
        if reply.is_error:
            said = reply.text[:300]
            raise McpServerError(
                f"MCP server {where!r}: the reset hook ({reset.describe()}) answered an error: {said}"
            )
        return
    command = substitute(reset.command or "", workdir) if workdir is not None else reset.command or ""
    process = await asyncio.create_subprocess_shell(
        command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, start_new_session=True
    )
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), RESET_TIMEOUT_S)
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    if process.returncode != 0:
        tail = " | ".join(stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
        raise McpServerError(
            f"MCP server {where!r}: the reset hook ({reset.describe()}) exited with {process.returncode}"
            + (f": {tail}" if tail else "")
        )


class WarmPool:
    """Servers started ahead of the cases that will lease them, on one event loop.

    :meth:`plan` says how many leases the run will make and how many cases run at once: the pool then
    keeps up to ``ahead`` servers started (or starting) beyond those leased, never more than the
    leases still to come, and starts at most ``parallel`` at a time (a start is mostly CPU). Without
    a plan every lease starts its server then, and :meth:`release` waits for its stop (no one would
    wait for a background one). A server that failed to start fails the lease that takes it.
    """

    def __init__(
        self,
        start: Callable[[], Awaitable[IsolatedServer]],
        *,
        parallel: int | None = None,
    ) -> None:
        self._start = start
        self._queue: deque[asyncio.Task[IsolatedServer]] = deque()
        self._gate = asyncio.Semaphore(max(2, parallel or os.cpu_count() or 2))
        self._stopping: set[asyncio.Task[None]] = set()
        self._out: set[IsolatedServer] = set()
        """Leased and not yet released (stopped at :meth:`aclose` if a session never ended)."""
        self.expected: int | None = None
        """Leases the run will make (``None``: not planned)."""
        self.ahead = 0
        self.leased = 0
        self.started = 0
        """Servers this pool started (for the bench and the tests)."""
        self.closed = False

    def plan(self, expected: int, ahead: int) -> None:
        self.expected, self.ahead = max(0, expected), max(0, ahead)

    @property
    def planned(self) -> bool:
        return self.expected is not None

    def _spawn(self) -> asyncio.Task[IsolatedServer]:
        # A context of its own: the server's tasks must not inherit the case (its clock, its watchdog
        # entry) that happened to ask for it.
        task = asyncio.get_running_loop().create_task(self._started_one(), context=contextvars.Context())
        self._queue.append(task)
        return task

    async def _started_one(self) -> IsolatedServer:
        async with self._gate:
            if self.closed:
                raise McpServerError("the run is over: no more tool servers start")
            self.started += 1
            return await self._start()

    def _top_up(self) -> None:
        if self.expected is None or self.closed:
            return
        wanted = min(self.ahead, self.expected - self.leased)
        while len(self._queue) < wanted:
            self._spawn()

    async def lease(self) -> IsolatedServer:
        """A started server of the lease's own (waiting for the oldest one being started)."""
        if self.closed:
            raise McpServerError("the run is over: no more tool servers start")
        task = self._queue.popleft() if self._queue else self._spawn_unqueued()
        self.leased += 1
        self._top_up()
        try:
            server = await asyncio.shield(task)
        except asyncio.CancelledError:
            # The case gave up (its time limit) while its server was starting: stopped once started.
            task.add_done_callback(self._stop_if_started)
            raise
        self._out.add(server)
        return server

    def _spawn_unqueued(self) -> asyncio.Task[IsolatedServer]:
        task = self._spawn()
        self._queue.remove(task)
        return task

    def _stop_if_started(self, task: asyncio.Task[IsolatedServer]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._stop_later(task.result())

    def _stop_later(self, server: IsolatedServer) -> None:
        stopping = asyncio.get_running_loop().create_task(server.stop(), context=contextvars.Context())
        self._stopping.add(stopping)
        stopping.add_done_callback(self._stopping.discard)

    async def release(self, server: IsolatedServer) -> None:
        """Stop a leased server: in the background when the pool is planned (its owner closes it at the
        end of the run and waits for every stop then), else now."""
        self._out.discard(server)
        if self.planned and not self.closed:
            self._stop_later(server)
        else:
            await server.stop()

    async def aclose(self) -> None:
        """Stop the servers started for no case (the run ended first) and any a session never released,
        and wait for every stop."""
        self.closed = True
        pending = list(self._queue)
        self._queue.clear()
        results = await asyncio.gather(*pending, return_exceptions=True)
        unreleased, self._out = list(self._out), set()
        started = [r for r in results if isinstance(r, IsolatedServer)]
        await asyncio.gather(*(server.stop() for server in started + unreleased), return_exceptions=True)
        while self._stopping:
            await asyncio.gather(*list(self._stopping), return_exceptions=True)
