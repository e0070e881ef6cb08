"""A client for live MCP servers, on the official ``mcp`` SDK (2.x).

:class:`McpServerSpec` parses what a user writes after ``--tools mcp:`` (the ``mcp:`` prefix is
accepted and stripped here, so callers may pass the option value as it came):

* ``stdio:COMMAND ARGS`` launches ``COMMAND`` (split like a shell would, with :func:`shlex.split`) and
  talks to it over its stdin/stdout; ``NAME=value`` words before the command set its environment, as
  in a shell (``stdio:MEMORY_FILE_PATH={workdir}/memory.jsonl npx -y ...``; ``{workdir}``: see
  :mod:`callbench.mcp.isolation`);
* ``http://HOST/PATH`` or ``https://...`` connects to a streamable HTTP endpoint.

:class:`McpConnection` is an async context manager that connects (handshake included), lists tools and
calls them. Every failure to *start* (command not found, server exits at start, connection refused,
handshake failure, time-out) is one :class:`McpServerError` line naming the spec, with the tail of a
stdio server's stderr when it died. A failure *after* the connection was up (the server died, the
connection broke, a call timed out) is :class:`McpConnectionLost`: infrastructure, not the caller's
input, so it is not a ``UserError``. An answer over the size limit on one message of a stdio server
(:func:`max_message_bytes`) is :class:`McpResultTooLarge`, and a line on its stdout that is not
JSON-RPC is one :class:`McpServerNoise` warning (see :mod:`callbench.mcp.stdio`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio

from callbench.errors import CallbenchError, ConfigError

DEFAULT_CONNECT_TIMEOUT_S = 30.0
DEFAULT_CALL_TIMEOUT_S = 60.0
STDERR_TAIL_CHARS = 400
MAX_MESSAGE_ENV = "CALLBENCH_MCP_MAX_MESSAGE_MB"
DEFAULT_MAX_MESSAGE_MB = 16
"""The largest message (one JSON-RPC line: a tool's answer) read from a stdio server, in MiB."""
NOISE_CHARS = 160
"""How much of a stray stdout line a warning shows."""
STDERR_READ_BYTES = 16 << 10
"""How much of the end of a stdio server's stderr file is read for its tail (a chatty server's log
may be large; the tail is its last lines)."""

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
"""A leading ``NAME=value`` word of a stdio command: an environment variable of the server."""

# JSON-RPC codes the SDK uses for a dead peer and a request time-out; other error replies to a
# tools/call (e.g. -32602 for an unknown tool or bad parameters) come from a live server.
_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001


class McpServerError(ConfigError):
    """An MCP server could not be started or reached, or its tool listing is unusable."""


class McpConnectionLost(CallbenchError):
    """A connected MCP server died, broke the connection or stopped answering (infrastructure)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        """The server did not answer within the call time-out (rather than going away)."""


class McpResultTooLarge(CallbenchError):
    """A stdio server's answer was over the size limit on one message (:func:`max_message_bytes`): it
    was dropped unread, which is neither the caller's fault nor a time-out."""


class McpServerNoise(UserWarning):
    """A stdio server wrote a line that is not JSON-RPC on its stdout (it was skipped)."""

    one_line = True
    """The CLI prints it as one ``callbench: warning:`` line."""


def max_message_bytes() -> int:
    """The size limit on one message from a stdio server: ``CALLBENCH_MCP_MAX_MESSAGE_MB`` MiB (default
    :data:`DEFAULT_MAX_MESSAGE_MB`); a value that is not a positive number is one ConfigError line."""
    raw = os.environ.get(MAX_MESSAGE_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_MESSAGE_MB << 20
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = 0.0
    if not 0 < megabytes < float("inf"):
        raise ConfigError(f"{MAX_MESSAGE_ENV} must be a positive number of MiB, got {raw!r}")
    return max(1, int(megabytes * (1 << 20)))


class McpBadResult(CallbenchError):
    """A server answered a call with structured content that breaks the ``outputSchema`` it declared
    for the tool (or declared one it cannot validate against): the server's fault, not the caller's."""


# The official SDK checks every structuredContent against the tool's declared outputSchema and raises
# a RuntimeError with one of these texts when it does not hold.
_BAD_RESULT_TEXTS = (
    "Invalid structured content returned by tool",
    "has an output schema but did not return structured content",
    "Invalid schema for tool",
)


def _is_bad_result(error: RuntimeError) -> bool:
    return any(text in str(error) for text in _BAD_RESULT_TEXTS)


@dataclass(frozen=True)
class McpServerSpec:
    """Where an MCP server is: a stdio command or a streamable HTTP URL."""

    kind: Literal["stdio", "http"]
    text: str
    """The spec as written (without ``mcp:``), used to name the server in messages."""
    command: tuple[str, ...] = ()
    url: str = ""
    env: tuple[tuple[str, str], ...] = field(default=())
    """Extra environment variables of a stdio server (the spec's leading ``NAME=value`` words, and
    what code adds with :meth:`with_env`)."""
    cwd: str | None = None

    @classmethod
    def parse(cls, text: str) -> McpServerSpec:
        """Parse ``[mcp:]stdio:COMMAND ARGS`` or ``[mcp:]http(s)://HOST/PATH``; bad text is one line."""
        raw = text.strip()
        body = raw[len("mcp:") :] if raw.startswith("mcp:") else raw
        if body.startswith("stdio:"):
            try:
                words = tuple(shlex.split(body[len("stdio:") :]))
            except ValueError as exc:
                raise McpServerError(f"MCP server {body!r}: cannot split the command: {exc}") from None
            env = []
            while words and _ASSIGNMENT.match(words[0]):  # NAME=value before the command, as in a shell
                name, _, value = words[0].partition("=")
                env.append((name, value))
                words = words[1:]
            if not words:
                raise McpServerError(f"MCP server {body!r}: no command after 'stdio:'")
            return cls(kind="stdio", text=body, command=words, env=tuple(sorted(env)))
        if body.startswith(("http://", "https://")):
            if len(body.split("://", 1)[1].strip("/")) == 0:
                raise McpServerError(f"MCP server {body!r}: the URL names no host")
            return cls(kind="http", text=body, url=body)
        raise McpServerError(
            f"MCP server {raw!r}: write 'stdio:COMMAND ARGS' or 'http://HOST/PATH' (optionally after 'mcp:')"
        )

    def with_env(self, env: Mapping[str, str], cwd: str | Path | None = None) -> McpServerSpec:
        """A copy whose stdio server also gets ``env`` (and runs in ``cwd`` when given)."""
        merged = dict(self.env) | dict(env)
        return McpServerSpec(
            kind=self.kind,
            text=self.text,
            command=self.command,
            url=self.url,
            env=tuple(sorted(merged.items())),
            cwd=str(cwd) if cwd is not None else self.cwd,
        )


@dataclass(frozen=True)
class McpTool:
    """One tool as a server lists it."""

    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    output_schema: Any = None
    """The ``outputSchema`` the tool declares for its ``structuredContent`` (``None``: none)."""


@dataclass(frozen=True)
class McpCallResult:
    """A ``tools/call`` reply: its text, whether the tool reported an error, and structured content."""

    text: str
    is_error: bool
    structured: dict[str, Any] | None = None


class McpConnection:
    """One connection to a live MCP server (``async with McpConnection(spec) as conn``).

    Enter and exit it in the same task (the SDK's transports hold task groups); calls may come from
    any task of the same event loop.
    """

    def __init__(
        self,
        spec: McpServerSpec | str,
        *,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    ) -> None:
        self.spec = spec if isinstance(spec, McpServerSpec) else McpServerSpec.parse(spec)
        self.connect_timeout_s = connect_timeout_s
        self.call_timeout_s = call_timeout_s
        self.max_message_bytes = max_message_bytes()
        self.noise_lines = 0
        """Lines on a stdio server's stdout that were not JSON-RPC (the first one is warned about)."""
        self.dropped_size: int | None = None
        """The size of the last answer dropped for the size limit."""
        self._client: Any = None
        self._errlog: TextIO | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    # The SDK's transports hold task groups that must be exited by the task that entered them, and
    # a run's executor opens a connection in one case's task and closes it at the end of the run
    # in another. So the connection lives in an owner task of its own: entering starts it and
    # waits for the handshake, exiting tells it to stop and waits for it.
    async def __aenter__(self) -> McpConnection:
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._failure: BaseException | None = None
        self._owner = asyncio.create_task(self._own(), name=f"mcp:{self.spec.text}")
        try:
            await asyncio.wait_for(self._ready.wait(), self.connect_timeout_s)
        except asyncio.CancelledError:
            # The caller was cancelled (a case time limit) mid-handshake: the owner must not outlive
            # it, or the server process would run until the event loop ends.
            self._owner.cancel()
            raise
        except TimeoutError:
            await self._halt()
            message = self._start_failure(TimeoutError())
            self._close_errlog()
            raise McpServerError(message) from None
        if self._failure is not None:
            await self._halt()
            message = self._start_failure(self._failure)
            self._close_errlog()
            raise McpServerError(message) from None
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self._halt()
        finally:
            self._close_errlog()

    async def _own(self) -> None:
        from mcp import Client

        try:
            transport = self._transport()
            async with Client(transport, read_timeout_seconds=self.call_timeout_s, cache=None) as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - reported by the entering task, or as a lost connection
            self._failure = exc
        finally:
            self._client = None
            self._ready.set()

    async def _halt(self) -> None:
        owner = getattr(self, "_owner", None)
        if owner is None:
            return
        self._stop.set()
        if self._client is None and not owner.done():
            owner.cancel()  # still in the handshake: nothing to wait for
        try:
            # The SDK bounds its own shutdown (stdin close, grace, kill); this bounds a stuck one.
            await asyncio.wait_for(asyncio.shield(owner), 15.0)
        except TimeoutError:
            owner.cancel()
        except asyncio.CancelledError:
            if not owner.cancelled():
                raise
        except Exception:  # noqa: BLE001 - a server that died reports it on the way out; closing stays quiet
            pass

    def _transport(self) -> Any:
        spec = self.spec
        if spec.kind == "http":
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(spec.url)
        from mcp.client.stdio import StdioServerParameters

        from callbench.mcp.stdio import stdio_transport

        program = spec.command[0]
        if shutil.which(program, path=dict(spec.env).get("PATH")) is None:
            raise McpServerError(f"MCP server {spec.text!r}: command {program!r} not found")
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(
            command=program, args=list(spec.command[1:]), env=dict(spec.env) or None, cwd=spec.cwd
        )
        return stdio_transport(
            params,
            errlog=self._errlog,
            max_message_bytes=self.max_message_bytes,
            on_noise=self._noise,
            on_too_large=self._dropped,
        )

    def _noise(self, line: bytes) -> None:
        self.noise_lines += 1
        if self.noise_lines > 1:
            return
        text = " ".join(line.decode("utf-8", "replace").split())
        if len(text) > NOISE_CHARS:
            text = f"{text[:NOISE_CHARS]}… ({len(line)} bytes)"
        warnings.warn(
            McpServerNoise(
                f"MCP server {self.spec.text!r} wrote a line that is not JSON-RPC on its stdout, skipped: "
                f"{text!r} (later such lines are skipped without a word)"
            ),
            stacklevel=2,
        )

    def _dropped(self, size: int) -> None:
        self.dropped_size = size

    def _too_large(self, size: int) -> str:
        return (
            f"MCP server {self.spec.text!r}: its answer was {size / (1 << 20):.1f} MiB, over the size limit "
            f"of {self.max_message_bytes / (1 << 20):g} MiB on one MCP message ({MAX_MESSAGE_ENV}); "
            "it was dropped unread"
        )

    def _close_errlog(self) -> None:
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    def stderr_tail(self) -> str:
        """The last characters a stdio server wrote to its stderr, on one line (empty if none)."""
        if self._errlog is None or self._errlog.closed:
            return ""
        try:
            self._errlog.flush()
            raw = self._errlog.buffer
            raw.seek(max(0, raw.seek(0, os.SEEK_END) - STDERR_READ_BYTES))
            text = raw.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""
        return " | ".join(line.strip() for line in text.strip().splitlines()[-6:] if line.strip())[
            -STDERR_TAIL_CHARS:
        ]

    def _start_failure(self, exc: BaseException) -> str:
        """One line saying why the connection could not be made."""
        spec = self.spec
        leaf = _leaf(exc)
        tail = self.stderr_tail()
        where = f"MCP server {spec.text!r}"
        if isinstance(leaf, McpServerError):
            return str(leaf)
        if isinstance(leaf, TimeoutError):
            reason = f"no answer to the handshake within {self.connect_timeout_s:g} s"
        elif isinstance(leaf, FileNotFoundError | PermissionError) and spec.kind == "stdio":
            reason = f"cannot run {spec.command[0]!r}: {leaf.strerror or leaf}"
        elif spec.kind == "http" and _is_connect_error(leaf):
            reason = f"connection refused or unreachable ({type(leaf).__name__}: {leaf})"
        elif spec.kind == "stdio" and _code(leaf) == _CONNECTION_CLOSED:
            reason = "the server exited at start"
        else:
            reason = f"handshake failed: {type(leaf).__name__}: {leaf}"
        return f"{where}: {reason}" + (f"; stderr: {tail}" if tail else "")

    # -- requests ------------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """True while the handshake is done and the server has not gone away."""
        owner = getattr(self, "_owner", None)
        alive = owner is not None and not owner.done() and not getattr(self, "_broken", False)
        return self._client is not None and alive

    def server_info(self) -> tuple[str | None, str | None, str | None]:
        """``(name, version, protocol version)`` as the handshake gave them (``None``: not said)."""
        client = self._require()
        info = getattr(client, "server_info", None)
        protocol = getattr(client, "protocol_version", None)
        return (
            str(getattr(info, "name", "") or "") or None,
            str(getattr(info, "version", "") or "") or None,
            str(protocol or "") or None,
        )

    async def list_tools(self) -> list[McpTool]:
        """Every tool the server lists (all pages)."""
        client = self._require()
        tools: list[McpTool] = []
        cursor: str | None = None
        for _ in range(1000):  # a paginator that never ends must not hang the run
            try:
                page = await client.list_tools(cursor=cursor)
            except Exception as exc:  # noqa: BLE001 - a broken listing names the server
                raise McpServerError(
                    f"MCP server {self.spec.text!r}: tools/list failed: {_describe(exc)}"
                ) from None
            for tool in page.tools:
                annotations = (
                    tool.annotations.model_dump(exclude_none=True, by_alias=True) if tool.annotations else {}
                )
                tools.append(
                    McpTool(
                        name=tool.name,
                        description=tool.description or "",
                        input_schema=tool.input_schema,
                        annotations=annotations,
                        title=tool.title,
                        output_schema=tool.output_schema,
                    )
                )
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> McpCallResult:
        """Call one tool. A reply (even ``isError`` or a JSON-RPC error about the call) is a result;
        a dead server, a broken connection or a time-out raises :class:`McpConnectionLost`."""
        from mcp.shared.exceptions import MCPError

        from callbench.mcp.stdio import too_large_size

        client = self._require()
        try:
            reply = await client.call_tool(name, arguments)
        except asyncio.CancelledError:
            # The caller gave up (its case's time limit): the call may still be running on the server,
            # or the server may be hung; the next user gets a fresh connection, never this one.
            self._broken = True
            raise
        except MCPError as exc:
            size = too_large_size(exc.data)
            if size is not None:  # the answer was dropped for its size; the connection goes on
                raise McpResultTooLarge(self._too_large(size)) from None
            if exc.code == _REQUEST_TIMEOUT:
                raise McpConnectionLost(self._timed_out(), timed_out=True) from None
            if exc.code == _CONNECTION_CLOSED:
                if self.dropped_size is not None:  # closed by the transport over a message too large
                    self._broken = True
                    raise McpResultTooLarge(self._too_large(self.dropped_size)) from None
                raise McpConnectionLost(self._lost(exc)) from None
            # The server answered the call with a protocol error (unknown tool, invalid params):
            # alive and talking, so it is the call that failed, not the connection.
            return McpCallResult(text=f"Error {exc.code}: {exc.message}", is_error=True)
        except TimeoutError:
            raise McpConnectionLost(self._timed_out(), timed_out=True) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise McpConnectionLost(self._lost(exc)) from None
        except RuntimeError as exc:
            if not _is_bad_result(exc):
                raise
            # the SDK's first line says what broke; the rest is jsonschema's multi-line detail
            raise McpBadResult(f"MCP server {self.spec.text!r}: {str(exc).splitlines()[0]}") from None
        return McpCallResult(
            text=content_text(reply.content),
            is_error=bool(reply.is_error),
            structured=reply.structured_content if isinstance(reply.structured_content, dict) else None,
        )

    def _timed_out(self) -> str:
        self._broken = True  # a server that does not answer may be hung: the next user reconnects
        tail = self.stderr_tail()
        return f"MCP server {self.spec.text!r}: no answer to the call within {self.call_timeout_s:g} s" + (
            f"; stderr: {tail}" if tail else ""
        )

    def _lost(self, exc: BaseException) -> str:
        self._broken = True  # the next user reconnects instead of calling into a dead transport
        tail = self.stderr_tail()
        return f"MCP server {self.spec.text!r}: {_describe(exc)}" + (f"; stderr: {tail}" if tail else "")

    def _require(self) -> Any:
        if self._client is None:
            raise McpConnectionLost(f"MCP server {self.spec.text!r}: not connected")
        return self._client


def content_text(content: Any) -> str:
    """The text of a tool reply's content blocks; non-text blocks are named, not inlined."""
    parts: list[str] = []
    for block in content or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        else:
            mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", None)
            parts.append(f"[{kind} content{f' ({mime})' if mime else ''}]")
    return "\n".join(parts)


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (task groups wrap transport errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    return code if isinstance(code, int) else None


def _is_connect_error(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"ConnectError", "ConnectTimeout", "NetworkError", "TransportError"})


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__
