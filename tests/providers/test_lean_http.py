"""The lean HTTP client against raw servers that answer as real ones do, faults included.

Each server here is a plain asyncio TCP server writing exact bytes, so every framing the client must
read (Content-Length, chunked with extensions and trailers, a body up to the close, gzip, interim
100 replies) and every fault (a refused port, a reset, a cut body, an idle connection the server
closed, a hang) is what goes over the wire, not what a library chose to send.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from callbench.errors import FatalProviderError, RateLimitedError, TransientProviderError
from callbench.providers.lean_http import ConnectionFault, LeanPool, Target, TruncatedBody
from callbench.providers.wire import HTTP_CLIENT_ENV, ClientHolder, Endpoint, post_json

Answer = Callable[[bytes, asyncio.StreamWriter], Awaitable[bool]]
"""Writes the reply to one request (its raw bytes); returns whether to keep the connection."""


class RawServer:
    """Counts connections and requests; each request is answered by ``answer``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                if not await self.answer(request, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serve(answer: Answer) -> AsyncIterator[RawServer]:
    server = RawServer(answer)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()


def json_reply(payload: object, extra: str = "", status: str = "200 OK") -> bytes:
    body = json.dumps(payload).encode()
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n".encode()
        + body
    )


async def post(
    pool: LeanPool, port: int, payload: object = None, timeout_s: float = 5.0
) -> tuple[int, object]:
    target = Target.of(f"http://127.0.0.1:{port}/v1/chat/completions")
    assert target is not None
    reply = await pool.post(target, json.dumps(payload or {"n": 1}).encode(), {"X-Test": "1"}, timeout_s)
    return reply.status, json.loads(reply.body)


def test_requests_share_one_keep_alive_connection_and_say_what_they_send() -> None:
    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(json_reply({"echo": json.loads(request.split(b"\r\n\r\n", 1)[1])}))
        return True

    async def main() -> None:
        async with serve(answer) as server:
            pool = LeanPool()
            for i in range(20):
                assert await post(pool, server.port, {"n": i}) == (200, {"echo": {"n": i}})
            pool.close()
            assert server.connections == 1 and len(server.requests) == 20
            head = server.requests[0].split(b"\r\n\r\n")[0].decode()
            assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
            assert f"Host: 127.0.0.1:{server.port}" in head and "X-Test: 1" in head
            assert "Content-Length: 8" in head

    asyncio.run(main())


def test_chunked_gzip_close_delimited_and_interim_replies_are_read_whole() -> None:
    body = json.dumps({"text": "é" * 3000}).encode()
    packed = gzip.compress(body)
    replies = [
        # chunked, with a chunk extension and a trailer, written a few bytes at a time
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(
            f"{len(body[i : i + 700]):x};ext=1\r\n".encode() + body[i : i + 700] + b"\r\n"
            for i in range(0, len(body), 700)
        )
        + b"0\r\nX-Trailer: yes\r\n\r\n",
        # gzip with Content-Length
        f"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {len(packed)}\r\n\r\n".encode()
        + packed,
        # an interim 100 reply first
        b"HTTP/1.1 100 Continue\r\n\r\n" + json_reply(json.loads(body)),
        # HTTP/1.0 style: no length, the body ends with the connection
        b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body,
    ]

    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        data = replies.pop(0)
        for i in range(0, len(data), 97):
            writer.write(data[i : i + 97])
            await writer.drain()
        return bool(replies)

    async def main() -> None:
        async with serve(answer) as server:
            pool = LeanPool()
            for _ in range(4):
                assert await post(pool, server.port) == (200, json.loads(body))
            pool.close()
            # the close-delimited reply could not share its connection; the others did
            assert server.connections == 1

    asyncio.run(main())


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(json_reply({"ok": True}))  # keep-alive promised, then the server closes it
        await writer.drain()
        return False

    async def main() -> None:
        async with serve(answer) as server:
            pool = LeanPool()
            for _ in range(3):
                assert await post(pool, server.port) == (200, {"ok": True})
                await asyncio.sleep(0.05)  # the close reaches the client while the connection idles
            assert server.connections == 3

    asyncio.run(main())


def test_faults_are_the_errors_the_providers_map() -> None:
    async def cut(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial":')
        return False

    async def silent(request: bytes, writer: asyncio.StreamWriter) -> bool:
        return False  # closes without a byte

    async def hang(request: bytes, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(30)
        return False

    async def main() -> None:
        pool = LeanPool()
        async with serve(cut) as server:
            with pytest.raises(TruncatedBody):
                await post(pool, server.port)
        async with serve(silent) as server:
            with pytest.raises(ConnectionFault, match="before answering"):
                await post(pool, server.port)
        async with serve(hang) as server:
            with pytest.raises(TimeoutError):
                await post(pool, server.port, timeout_s=0.3)
            assert not pool._idle.get((False, "127.0.0.1", server.port))  # the hung one is not kept
        unused = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = unused.sockets[0].getsockname()[1]
        unused.close()
        await unused.wait_closed()
        with pytest.raises(ConnectionFault, match="ConnectionRefusedError"):
            await post(pool, port)

    asyncio.run(main())


def test_post_json_maps_statuses_and_faults_like_the_aiohttp_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same server answers through both clients; the provider sees the same errors."""
    # each reply closes its connection and says so: neither client races the close
    close = "Connection: close\r\n"
    script = [
        json_reply(
            {"error": {"message": "slow down"}}, "retry-AFTER: 7\r\n" + close, "429 Too Many Requests"
        ),
        json_reply({"error": {"message": "bad key"}}, close, "401 Unauthorized"),
        b'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 50\r\n\r\n{"cut',
        json_reply({"id": "x", "choices": []}, close),
    ]

    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(script[len(server.requests) - 1 - offset])
        await writer.drain()
        return False

    where = Endpoint(provider="openai", model="m", base_url="http://127.0.0.1", key_env=None)

    async def outcomes() -> list[str]:
        holder = ClientHolder()
        url = f"http://127.0.0.1:{server.port}/v1/chat/completions"
        out: list[str] = []
        for _ in script:
            try:
                out.append(json.dumps(await post_json(holder, url, {"a": 1}, {}, where, 5.0)))
            except RateLimitedError as exc:
                out.append(f"rate limited, wait {exc.retry_after}")
            except FatalProviderError as exc:
                out.append(f"fatal: {'bad key' in str(exc)}")
            except TransientProviderError as exc:
                out.append(f"transient: {'truncated' in str(exc)}")
        await holder.aclose()
        return out

    async def main() -> list[list[str]]:
        nonlocal server, offset
        results = []
        async with serve(answer) as server:
            for client in ("lean", "aiohttp"):
                offset = len(server.requests)
                monkeypatch.setenv(HTTP_CLIENT_ENV, client)
                results.append(await outcomes())
        return results

    server: RawServer
    offset = 0
    lean, through_aiohttp = asyncio.run(main())
    assert lean == ["rate limited, wait 7.0", "fatal: True", "transient: True", '{"id": "x", "choices": []}']
    assert lean == through_aiohttp


def test_what_the_lean_client_leaves_to_aiohttp(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Target.of("https://user:secret@example.com/v1") is None  # credentials in the URL
    assert Target.of("unix:///tmp/socket") is None
    target = Target.of("https://[::1]:8443/v1/x?a=1")
    assert target is not None and (target.tls, target.host, target.port, target.path) == (
        True,
        "::1",
        8443,
        "/v1/x?a=1",
    )

    async def lean_for(url: str) -> object:
        return ClientHolder().lean_for(url)

    assert asyncio.run(lean_for("http://127.0.0.1:1/v1")) is not None
    monkeypatch.setenv(HTTP_CLIENT_ENV, "aiohttp")
    assert asyncio.run(lean_for("http://127.0.0.1:1/v1")) is None
    monkeypatch.delenv(HTTP_CLIENT_ENV)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert asyncio.run(lean_for("http://127.0.0.1:1/v1")) is None


def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    async def main() -> None:
        pool = LeanPool()
        target = Target.of("http://127.0.0.1:9/v1")
        assert target is not None
        with pytest.raises(ValueError, match="line break"):
            await pool.post(target, b"{}", {"Authorization": "Bearer x\r\nX-Evil: 1"}, 1.0)

    asyncio.run(main())


def test_a_reused_connection_closed_without_a_byte_is_retried_once_on_a_fresh_one() -> None:
    """The race a keep-alive client must survive: the server drops an idle connection just as a
    request goes out on it. A fresh connection that closes without a byte is an error (not retried)."""
    answered: set[int] = set()

    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        if id(writer) in answered:
            return False  # the second request on a connection: closed unanswered
        answered.add(id(writer))
        writer.write(json_reply({"ok": True}))
        await writer.drain()
        return True

    async def main() -> None:
        async with serve(answer) as server:
            pool = LeanPool()
            for _ in range(3):
                assert await post(pool, server.port) == (200, {"ok": True})
            assert (server.connections, len(server.requests)) == (3, 5)
            pool.close()

    asyncio.run(main())
