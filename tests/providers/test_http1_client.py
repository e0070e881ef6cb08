"""The lean HTTP/1.1 client against a raw socket server that answers exactly the bytes a test scripts:
framings, encodings, interim responses, servers that close, cancellation."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from callbench.errors import TransientProviderError
from callbench.providers.http1 import Http1Pool, HttpConnectionError, split_http_url
from callbench.providers.wire import ClientHolder, Endpoint, dumps_bytes, loads_bytes, post_json

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]
WHERE = Endpoint("openai", "m", "http://127.0.0.1/v1", None)


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:] if h)}
    return head[0], headers, await reader.readexactly(int(headers["content-length"]))


def reply(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def serve(handler: Handler, test: Callable[[int], Awaitable[Any]]) -> tuple[Any, list[int]]:
    """Run ``test(port)`` against ``handler``; also returns how many connections were opened."""
    opened: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        try:
            while await handler(reader, writer, len(opened)):
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await test(port), opened
    finally:
        server.close()


def fixed(payload: bytes, keep: bool = True) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        await read_request(reader)
        writer.write(payload)
        await writer.drain()
        return keep

    return handler


async def post(port: int, pool: Http1Pool | None = None) -> Any:
    pool = pool or Http1Pool("127.0.0.1", port)
    return await pool.post("/v1/chat/completions", b'{"a": 1}', {"Content-Type": "application/json"})


def test_the_request_is_a_well_formed_post() -> None:
    seen: list[tuple[str, dict[str, str], bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        seen.append(await read_request(reader))
        writer.write(reply(b"{}"))
        return True

    response, _ = asyncio.run(serve(handler, post))
    line, headers, body = seen[0]
    assert line == "POST /v1/chat/completions HTTP/1.1"
    assert headers["host"].startswith("127.0.0.1:") and headers["content-type"] == "application/json"
    assert body == b'{"a": 1}' and response.status == 200 and response.body == b"{}"


@pytest.mark.parametrize(
    "raw, body",
    [
        (reply(b'{"ok": true}', "Content-Type: application/json"), b'{"ok": true}'),
        (
            b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n4;x=1\r\n: 1}\r\n0\r\n\r\n',
            b'{"a": 1}',
        ),
        (b"HTTP/1.1 100 Continue\r\n\r\n" + reply(b"[1]"), b"[1]"),
        (reply(gzip.compress(b'{"z": 1}'), "Content-Encoding: gzip"), b'{"z": 1}'),
    ],
    ids=["content-length", "chunked", "interim-100", "gzip"],
)
def test_framings_and_encodings(raw: bytes, body: bytes) -> None:
    response, _ = asyncio.run(serve(fixed(raw), post))
    assert response.status == 200 and response.body == body


def test_a_body_framed_by_the_end_of_the_connection() -> None:
    response, _ = asyncio.run(serve(fixed(b"HTTP/1.0 200 OK\r\n\r\nall of it", keep=False), post))
    assert response.body == b"all of it"


def test_responses_arriving_byte_by_byte_are_put_together() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        await read_request(reader)
        for byte in reply(b'{"slow": 1}', "Retry-After: 3", status="429 Too Many"):
            writer.write(bytes([byte]))
            await writer.drain()
        return True

    response, _ = asyncio.run(serve(handler, post))
    assert (
        response.status == 429 and response.headers["retry-after"] == "3" and response.body == b'{"slow": 1}'
    )


def test_keep_alive_reuses_one_connection_and_close_opens_a_new_one() -> None:
    async def twice(port: int) -> list[bytes]:
        pool = Http1Pool("127.0.0.1", port)
        return [(await post(port, pool)).body for _ in range(3)]

    bodies, opened = asyncio.run(serve(fixed(reply(b"1")), twice))
    assert bodies == [b"1"] * 3 and len(opened) == 1
    bodies, opened = asyncio.run(serve(fixed(reply(b"1", "Connection: close"), keep=False), twice))
    assert bodies == [b"1"] * 3 and len(opened) == 3


def test_a_kept_connection_the_server_dropped_is_replaced_without_an_error() -> None:
    """The server answers once per connection but says keep-alive (an idle timeout on its side)."""

    async def then_again(port: int) -> list[bytes]:
        pool = Http1Pool("127.0.0.1", port)
        first = await post(port, pool)
        await asyncio.sleep(0.05)  # the close reaches the client while the connection is idle
        return [first.body, (await post(port, pool)).body]

    bodies, opened = asyncio.run(serve(fixed(reply(b"x"), keep=False), then_again))
    assert bodies == [b"x", b"x"] and len(opened) == 2


@pytest.mark.parametrize(
    "raw, kind, partial",
    [
        (b"", "ServerDisconnectedError", False),
        (b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"half', "ClientPayloadError", True),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}",
            "ClientResponseError",
            False,
        ),
    ],
    ids=["nothing", "truncated", "unknown-encoding"],
)
def test_broken_responses_raise_with_aiohttp_names(raw: bytes, kind: str, partial: bool) -> None:
    with pytest.raises(HttpConnectionError) as info:
        asyncio.run(serve(fixed(raw, keep=False), post))
    assert info.value.kind == kind and info.value.partial is partial


def test_a_refused_connection_names_the_host() -> None:
    with pytest.raises(HttpConnectionError, match=r"Cannot connect to host 127\.0\.0\.1:1 ") as info:
        asyncio.run(post(1))
    assert info.value.kind == "ClientConnectorError"


def test_a_request_cancelled_midway_aborts_its_connection() -> None:
    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        await read_request(reader)
        await asyncio.sleep(10)
        return False

    async def cut(port: int) -> int:
        pool = Http1Pool("127.0.0.1", port)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await post(port, pool)
        return len(pool._idle)

    idle, _ = asyncio.run(serve(never, cut))
    assert idle == 0  # never handed to the next request: its answer could still arrive


def test_post_json_maps_lean_failures_to_the_messages_records_carried_before() -> None:
    async def through_wire(port: int) -> Any:
        holder = ClientHolder()
        try:
            return await post_json(holder, f"http://127.0.0.1:{port}/v1/chat", {"q": 1}, {}, WHERE, 5)
        finally:
            await holder.aclose()

    with pytest.raises(TransientProviderError, match=r"^openai: truncated response body$"):
        asyncio.run(serve(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{", keep=False), through_wire))
    with pytest.raises(
        TransientProviderError, match=r"connection error \(ServerDisconnectedError: Server disc"
    ):
        asyncio.run(serve(fixed(b"", keep=False), through_wire))
    with pytest.raises(TransientProviderError, match=r"truncated or invalid JSON body \(3 bytes\)"):
        asyncio.run(serve(fixed(reply(b"{x}")), through_wire))
    body, _ = asyncio.run(serve(fixed(reply(b'{"n": 1e400, "s": "\\ud800"}')), through_wire))
    assert body["n"] == float("inf") and body["s"] == "\ud800"  # what orjson refuses, the stdlib reads


def test_only_plain_http_without_a_proxy_takes_the_lean_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert split_http_url("http://localhost:8000/v1/chat?x=1") == ("localhost", 8000, "/v1/chat?x=1")
    assert split_http_url("https://api.openai.com/v1") is None

    async def pools() -> list[bool]:
        holder = ClientHolder()
        return [holder.lean_pool(u) is not None for u in ("http://h:1/a", "https://h/a")]

    assert asyncio.run(pools()) == [True, False]
    monkeypatch.setenv("http_proxy", "http://proxy:3128")
    assert asyncio.run(pools()) == [False, False]


def test_json_codec_matches_the_stdlib() -> None:
    payload = {"text": "é ✓ \u2028", "n": [1, 2.5, -0.0, 10**30], "nested": {"k": None, "t": True}}
    assert json.loads(dumps_bytes(payload)) == payload
    assert loads_bytes(json.dumps(payload).encode()) == payload
    assert loads_bytes(b"[12345678901234567890123]") == [12345678901234567890123]  # an int, not a float
    with pytest.raises(json.JSONDecodeError):
        loads_bytes(b'{"a": ')


def test_the_aiohttp_path_words_its_failures_as_the_lean_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """https endpoints and proxies keep aiohttp: same results, same messages."""
    monkeypatch.setattr("callbench.providers.wire.split_http_url", lambda url: None)

    def through_aiohttp(timeout: float = 5) -> Callable[[int], Awaitable[Any]]:
        async def call(port: int) -> Any:
            holder = ClientHolder()
            try:
                return await post_json(
                    holder, f"http://127.0.0.1:{port}/v1/chat", {"q": 1}, {}, WHERE, timeout
                )
            finally:
                await holder.aclose()

        return call

    body, _ = asyncio.run(serve(fixed(reply(b'{"ok": 1}')), through_aiohttp()))
    assert body == {"ok": 1}
    with pytest.raises(TransientProviderError, match=r"^openai: truncated response body$"):
        asyncio.run(
            serve(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{", keep=False), through_aiohttp())
        )

    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        await read_request(reader)
        await asyncio.sleep(5)
        return False

    with pytest.raises(TransientProviderError, match=r"timed out after 0\.2s$"):
        asyncio.run(serve(never, through_aiohttp(0.2)))
