"""A small keep-alive HTTP/1.1 client for the providers' JSON requests.

Every non-streamed model request is one ``POST`` of a JSON body whose whole answer is read before
anything is done with it. aiohttp does that with a general machinery (cookie jar, redirects, trace
hooks, multidict headers, a response object per request) that costs about 0.1 ms of CPU per request,
which at concurrency 100 against a local serving stack is a large share of the harness's CPU
(``bench/concurrency.py``; issue 26). This client does only what those requests need, on asyncio's
own transports: one connection pool per event loop, the request written in one piece, the reply
parsed as it arrives (``Content-Length``, chunked, or up to the close; ``gzip``/``deflate``
decoded), TLS through the standard ``ssl`` module with the system's default verification.

What it leaves to aiohttp (:class:`callbench.providers.wire.ClientHolder` picks): streamed
requests, a configured proxy (``HTTP(S)_PROXY``), credentials written into the URL, and every
request when ``CALLBENCH_HTTP_CLIENT=aiohttp`` is set.

Errors raised here are the ones :func:`callbench.providers.wire.post_json` maps: ``TimeoutError``,
:class:`ConnectionFault` (refused, reset, closed before a complete reply) and :class:`TruncatedBody`
(the reply ended inside its body).
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

USER_AGENT = "callbench"
MAX_HEAD_BYTES = 64 * 1024
"""A reply head (status line and headers) longer than this is refused as a broken server."""


class ConnectionFault(Exception):
    """The connection failed before a complete reply: refused, reset, or closed by the server."""


class TruncatedBody(ConnectionFault):
    """The reply's head arrived but its body ended early (a cut transfer)."""


class Headers(dict[str, str]):
    """Reply headers with lower-case names; :meth:`get` takes any case."""

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(key.lower(), default)


@dataclass
class Reply:
    """One complete reply."""

    status: int
    headers: Headers
    body: bytes


@dataclass(frozen=True)
class Target:
    """Where a URL points: scheme, host, port, and the request line's path."""

    tls: bool
    host: str
    port: int
    path: str
    host_header: str

    @classmethod
    def of(cls, url: str) -> Target | None:
        """The target of an ``http``/``https`` URL, or ``None`` when this client does not serve it
        (another scheme, credentials in the URL)."""
        parts: SplitResult = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None:
            return None
        tls = parts.scheme == "https"
        try:
            port = parts.port or (443 if tls else 80)
        except ValueError:
            return None
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(tls, parts.hostname, port, path, parts.netloc)


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection: writes a request, gathers the reply into :class:`Reply`."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[Reply] | None = None
        self.parser: _ReplyParser | None = None
        self.closed = False
        self.received_any = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.received_any = True
        if self.parser is None:  # bytes nobody asked for: the connection is not reusable
            self.close()
            return
        try:
            reply = self.parser.feed(data)
        except ConnectionFault as exc:
            self._fail(exc)
            return
        if reply is not None:
            self._finish(reply)

    def eof_received(self) -> bool:
        self._end_of_stream()
        return False  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._end_of_stream()

    # requests
    def send(self, data: bytes, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Reply]:
        """Write one request; the future completes with its reply."""
        assert self.transport is not None
        if not self.reusable():
            raise ConnectionFault("the connection was closed")
        self.parser = _ReplyParser()
        self.received_any = False
        self.waiter = loop.create_future()
        self.transport.write(data)
        return self.waiter

    def reusable(self) -> bool:
        return not self.closed and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _end_of_stream(self) -> None:
        self.closed = True
        if self.waiter is None or self.waiter.done() or self.parser is None:
            return
        try:
            reply = self.parser.finish()
        except ConnectionFault as exc:
            self._fail(exc)
            return
        self._finish(reply)

    def _finish(self, reply: Reply) -> None:
        keep = self.parser is not None and self.parser.keep_alive and not self.closed
        self.parser = None
        if not keep:
            self.close()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(reply)

    def _fail(self, exc: Exception) -> None:
        self.parser = None
        self.close()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)


@dataclass
class _ReplyParser:
    """Incremental HTTP/1.1 reply parser (one reply)."""

    buffer: bytearray = field(default_factory=bytearray)
    status: int = 0
    headers: Headers | None = None
    keep_alive: bool = True
    length: int | None = None
    """Body bytes expected (``Content-Length``); ``None`` with chunks or up to the close."""
    chunked: bool = False
    body: bytearray = field(default_factory=bytearray)
    chunk_left: int = -1
    """Bytes left in the current chunk; -1 before a chunk's size line."""
    trailers: bool = False
    """Reading the trailer section after the last chunk."""

    def feed(self, data: bytes) -> Reply | None:
        self.buffer += data
        if self.headers is None and not self._read_head():
            return None
        return self._read_body()

    def finish(self) -> Reply:
        """The reply when the server closed the connection."""
        if self.headers is None:
            raise ConnectionFault("the server closed the connection before answering")
        reply = self._read_body()
        if reply is not None:
            return reply
        if self.length is None and not self.chunked:
            self.keep_alive = False
            self.body += self.buffer
            self.buffer.clear()
            return self._reply()  # a body delimited by the close
        raise TruncatedBody("the reply ended before its body was complete")

    def _read_head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD_BYTES:
                raise ConnectionFault("the reply head is too long")
            return False
        head = bytes(self.buffer[:end]).decode("latin-1")
        del self.buffer[: end + 4]
        status_line, *lines = head.split("\r\n")
        version, _, rest = status_line.partition(" ")
        try:
            self.status = int(rest[:3])
        except ValueError:
            raise ConnectionFault(f"not an HTTP reply: {status_line[:60]!r}") from None
        if 100 <= self.status < 200:  # an interim reply (100 Continue...): the real one follows
            self.status = 0
            return self._read_head()
        headers = Headers()
        for line in lines:
            name, _, value = line.partition(":")
            key, value = name.strip().lower(), value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        self.headers = headers
        connection = (headers.get("connection") or "").lower()
        self.keep_alive = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
        if "chunked" in (headers.get("transfer-encoding") or "").lower():
            self.chunked = True
        elif self.status in (204, 304):
            self.length = 0
        elif headers.get("content-length") is not None:
            try:
                self.length = int(headers["content-length"])
            except ValueError:
                raise ConnectionFault("the reply has an invalid Content-Length") from None
        else:
            self.keep_alive = False  # the body runs to the close
        return True

    def _read_body(self) -> Reply | None:
        if self.chunked:
            return self._read_chunks()
        if self.length is None:
            return None
        if len(self.buffer) < self.length:
            return None
        self.body += self.buffer[: self.length]
        del self.buffer[: self.length]
        return self._reply()

    def _read_chunks(self) -> Reply | None:
        while True:
            if self.trailers:
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return None
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 2]
                if not line:
                    return self._reply()
                continue
            if self.chunk_left < 0:
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return None
                size_text = bytes(self.buffer[:end]).split(b";", 1)[0].strip()
                del self.buffer[: end + 2]
                try:
                    self.chunk_left = int(size_text, 16)
                except ValueError:
                    raise ConnectionFault("the reply has a broken chunk size") from None
                if self.chunk_left == 0:
                    self.trailers = True
                continue
            if len(self.buffer) < self.chunk_left + 2:
                return None
            self.body += self.buffer[: self.chunk_left]
            del self.buffer[: self.chunk_left + 2]
            self.chunk_left = -1

    def _reply(self) -> Reply:
        assert self.headers is not None
        body = bytes(self.body)
        encoding = (self.headers.get("content-encoding") or "").lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            try:
                # wbits 47: zlib or gzip header, detected; raw deflate as the fallback some servers send
                body = zlib.decompress(body, 47) if body else body
            except zlib.error:
                try:
                    body = zlib.decompress(body, -15)
                except zlib.error:
                    raise ConnectionFault(f"the reply body is not valid {encoding}") from None
        return Reply(self.status, self.headers, body)


class LeanPool:
    """Idle keep-alive connections of one event loop, by (TLS, host, port)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[bool, str, int], list[_Connection]] = {}
        self._ssl: ssl.SSLContext | None = None

    async def post(self, target: Target, body: bytes, headers: dict[str, str], timeout_s: float) -> Reply:
        """``POST`` ``body`` to ``target`` and read the whole reply within ``timeout_s`` seconds.

        A reused connection that the server had closed while it was idle (no byte of reply) is
        replaced once by a new one, as browsers and HTTP libraries do: the request never reached a
        handler.

        Raises:
            TimeoutError: no complete reply in time (the connection is dropped).
            ConnectionFault: refused, reset or closed connection; TruncatedBody for a cut body.
            ValueError: a header name or value holds a line break.
        """
        request = _request_bytes(target, body, headers)
        async with asyncio.timeout(timeout_s):
            while True:
                connection, reused = await self._acquire(target)
                try:
                    reply = await connection.send(request, asyncio.get_running_loop())
                except ConnectionFault:
                    if reused and not connection.received_any:
                        continue  # an idle connection the server had closed: once more, fresh
                    raise
                except BaseException:  # timeout, cancellation: the reply may still come; drop it
                    connection.close()
                    raise
                if connection.reusable():
                    self._idle.setdefault((target.tls, target.host, target.port), []).append(connection)
                return reply

    async def _acquire(self, target: Target) -> tuple[_Connection, bool]:
        idle = self._idle.get((target.tls, target.host, target.port))
        while idle:
            connection = idle.pop()
            if connection.reusable():
                return connection, True
        loop = asyncio.get_running_loop()
        context = self._context() if target.tls else None
        try:
            _transport, connection = await loop.create_connection(
                _Connection, target.host, target.port, ssl=context
            )
        except OSError as exc:
            raise ConnectionFault(f"{type(exc).__name__}: {exc}") from None
        return connection, False

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    def close(self) -> None:
        """Close every idle connection."""
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()


def _request_bytes(target: Target, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [
        f"POST {target.path} HTTP/1.1",
        f"Host: {target.host_header}",
        f"Content-Length: {len(body)}",
    ]
    sent = {"host", "content-length"}
    for name, value in headers.items():
        text = f"{name}: {value}"
        if "\r" in text or "\n" in text:
            raise ValueError(f"header {name!r} holds a line break")
        lines.append(text)
        sent.add(name.lower())
    for name, value in (("User-Agent", USER_AGENT), ("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate")):
        if name.lower() not in sent:
            lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
