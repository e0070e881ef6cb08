"""A lean HTTP/1.1 client for plain ``http://`` model servers (vLLM, llama.cpp, Ollama, test servers).

aiohttp spends about 0.25 ms of CPU on every request (request and response objects, header
multidicts, tracing hooks, timers); at 100 requests in flight that alone makes the event loop the
bottleneck of a local-server run. This client speaks only what a JSON POST needs, on pooled
keep-alive connections: one write per request, one parser per connection (about 0.05 ms).

It is used for ``http://`` URLs when no proxy is configured; TLS endpoints and proxies keep aiohttp
(see :func:`callbench.providers.wire.post_json`). Responses may be framed by ``Content-Length``,
``chunked`` transfer coding or the end of the connection, and may be gzip/deflate encoded.

Errors are raised as :class:`HttpConnectionError` (nothing or not all of the response arrived) with
the names aiohttp gives the same failures, so the messages in error records read as before.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections import deque
from urllib.parse import urlsplit

IDLE_TIMEOUT_S = 15.0
"""An idle connection older than this is closed instead of reused (aiohttp's keep-alive default)."""
_MAX_HEAD = 65536


class HttpConnectionError(Exception):
    """The exchange failed: ``kind`` names it as aiohttp would, ``partial`` when part of the body came."""

    def __init__(self, kind: str, message: str, partial: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.partial = partial


class Response:
    """Status, lower-cased headers and the decoded body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class _Connection(asyncio.Protocol):
    """One keep-alive connection; parses the response to the request in flight."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[Response] | None = None
        self.closed = False
        self.idle_since = 0.0
        self._reset()

    def _reset(self) -> None:
        self.buffer = bytearray()
        self.received = False
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body_start = -1
        self.length: int | None = None
        self.chunked = False
        self.keep_alive = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, data: bytes, waiter: asyncio.Future[Response]) -> None:
        self._reset()
        self.waiter = waiter
        assert self.transport is not None
        self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.received = True
        self.buffer += data
        try:
            self._parse()
        except (ValueError, zlib.error) as exc:
            self._fail(HttpConnectionError("ClientResponseError", f"invalid HTTP response ({exc})"))
            self.abort()

    def _parse(self) -> None:
        if self.body_start < 0 and not self._parse_head():
            return
        if self.chunked:
            body = self._dechunk()
            if body is None:
                return
        elif self.length is not None:
            if len(self.buffer) - self.body_start < self.length:
                return
            body = bytes(self.buffer[self.body_start : self.body_start + self.length])
        else:
            return  # framed by the end of the connection: connection_lost finishes it
        self._finish(body)

    def _parse_head(self) -> bool:
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > _MAX_HEAD:
                    raise ValueError("response head too long")
                return False
            lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            version, _, rest = lines[0].partition(" ")
            status = int(rest[:3])
            if 100 <= status < 200:  # an interim response: the real one follows
                del self.buffer[: end + 4]
                continue
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            self.status, self.headers, self.body_start = status, headers, end + 4
            connection = headers.get("connection", "").lower()
            self.keep_alive = "close" not in connection and (
                version != "HTTP/1.0" or "keep-alive" in connection
            )
            self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            if not self.chunked and "content-length" in headers:
                self.length = int(headers["content-length"])
            elif not self.chunked and (status in (204, 304)):
                self.length = 0
            elif not self.chunked:
                self.keep_alive = False
            return True

    def _dechunk(self) -> bytes | None:
        """The body once every chunk has arrived, else ``None``."""
        out, at = bytearray(), self.body_start
        while True:
            line_end = self.buffer.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(bytes(self.buffer[at:line_end]).split(b";")[0], 16)
            if size == 0:
                trailer_end = self.buffer.find(b"\r\n\r\n", line_end)
                return bytes(out) if trailer_end >= 0 else None
            start = line_end + 2
            if len(self.buffer) < start + size + 2:
                return None
            out += self.buffer[start : start + size]
            at = start + size + 2

    def _finish(self, body: bytes) -> None:
        encoding = self.headers.get("content-encoding", "identity").lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            body = zlib.decompress(body, 47 if "gzip" in encoding else zlib.MAX_WBITS)
        elif encoding not in ("identity", ""):
            raise ValueError(f"unsupported content-encoding {encoding!r}")
        response = Response(self.status, self.headers, body)
        if not self.keep_alive:
            self.abort()
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(response)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is None:
            return
        if self.body_start >= 0 and self.length is None and not self.chunked:
            try:
                self._finish(bytes(self.buffer[self.body_start :]))  # framed by the end of the connection
            except (ValueError, zlib.error) as error:
                self._fail(HttpConnectionError("ClientResponseError", f"invalid HTTP response ({error})"))
            return
        if self.body_start >= 0:
            self._fail(HttpConnectionError("ClientPayloadError", "Response payload is not completed", True))
        else:
            self._fail(HttpConnectionError("ServerDisconnectedError", "Server disconnected"))

    def _fail(self, error: HttpConnectionError) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class Http1Pool:
    """Keep-alive connections to one ``host:port`` (no limit: the Model wrapper limits requests)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.authority = host if port == 80 else f"{host}:{port}"
        if ":" in host:  # an IPv6 literal
            self.authority = f"[{host}]" if port == 80 else f"[{host}]:{port}"
        self._idle: deque[_Connection] = deque()

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """POST ``body``; a reused connection the server closed meanwhile is replaced once."""
        head = [f"POST {path} HTTP/1.1", f"Host: {self.authority}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        while True:
            connection, reused = await self._connection()
            try:
                response = await self._exchange(connection, data)
            except HttpConnectionError as exc:
                if reused and not connection.received:
                    continue  # closed by the server while idle: not an answer, try a fresh one
                raise exc from None
            if not connection.closed:
                connection.idle_since = time.monotonic()
                self._idle.append(connection)
            return response

    async def _exchange(self, connection: _Connection, data: bytes) -> Response:
        waiter: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        connection.send(data, waiter)
        try:
            return await waiter
        except BaseException:
            if not waiter.done() or waiter.cancelled():  # cancelled mid-exchange: the stream is unusable
                connection.abort()
            raise

    async def _connection(self) -> tuple[_Connection, bool]:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()  # the most recently used: the least likely to be stale
            if not connection.closed and now - connection.idle_since < IDLE_TIMEOUT_S:
                return connection, True
            connection.abort()
        loop = asyncio.get_running_loop()
        try:
            _transport, connection = await loop.create_connection(_Connection, self.host, self.port)
        except OSError as exc:
            raise HttpConnectionError(
                "ClientConnectorError",
                f"Cannot connect to host {self.authority} ssl:default [{exc.strerror or exc}]",
            ) from None
        return connection, False

    def close(self) -> None:
        """Close the idle connections (those in flight close when their requests end)."""
        while self._idle:
            self._idle.pop().abort()


def split_http_url(url: str) -> tuple[str, int, str] | None:
    """``(host, port, path?query)`` of a plain ``http://`` URL, else ``None``."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        port = parts.port or 80
    except ValueError:
        return None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, path
