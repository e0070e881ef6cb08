"""MCP overhead: time added per tool call when an agent calls a case's tools over MCP (issue 14).

Part 1 (this script): the same starter tool is called N times through one executor session

* ``direct``      -- ``session.call`` plus the reply text, as callbench's offline loop executes a call;
* ``mcp 2026``    -- a real ``mcp`` SDK client over streamable HTTP to :class:`CaseToolServer` on
  127.0.0.1, whose handler does exactly the ``direct`` work (``Client(url)``: protocol 2026-07-28,
  one self-contained POST per call);
* ``mcp legacy``  -- the same with ``Client(url, mode="legacy")`` (initialize handshake, 2025-11-25):
  what clients built on older SDKs speak;
* ``raw 2026`` / ``raw legacy`` -- a bare JSON-RPC ``tools/call`` POST with ``httpx2`` (no SDK client)
  at each protocol: the server's share of the MCP cost (plus one plain HTTP client round trip).

and prints the median and p95 per call side by side with the difference from ``direct``. Client and
server share this process and its event loop, as they do for ``py:`` agents; a ``cmd:`` agent's
client runs in its own process, so there the server's share (``raw ...``) is what callbench adds.
Target: <= 2 ms median added per call.

Part 2 (wall / ideal for 200 agent cases at --concurrency 50) is appended after
:func:`print_call_overhead` as its own functions; :func:`main` calls each part in turn.

    python bench/mcp_overhead.py              # 2000 calls per path
    python bench/mcp_overhead.py --calls 500
    python bench/mcp_overhead.py --quick      # 100 calls per path (smoke run)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

import callbench
from callbench.executors.base import ExecutorSession, ToolOutcome
from callbench.mcp.serve import CaseToolServer, ToolReply
from callbench.suites.suite import Suite

SUITE = "starter"
CASE = "weather_paris"
TOOL = "get_weather"
ARGUMENTS: dict[str, Any] = {"city": "Paris", "unit": "celsius"}
WARMUP = 20


class Row:
    """Per-call times of one path, in milliseconds.

    (A plain class: the bench smoke test loads this file without registering it as a module, which a
    dataclass cannot resolve its annotations without.)
    """

    def __init__(self, path: str, times_ms: list[float]) -> None:
        self.path = path
        self.times_ms = times_ms

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def p95(self) -> float:
        ordered = sorted(self.times_ms)
        return ordered[max(0, int(0.95 * len(ordered)) - 1)]


def reply_text(outcome: ToolOutcome) -> ToolReply:
    """The text callbench's offline loop would give the model for this outcome."""
    if outcome.content is not None:
        return ToolReply(outcome.content, is_error=not outcome.ok)
    if outcome.ok:
        return ToolReply(json.dumps(outcome.result, ensure_ascii=False, default=str))
    return ToolReply(json.dumps({"error": outcome.error}, ensure_ascii=False), is_error=True)


async def _timed(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    for _ in range(WARMUP):
        await call()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


async def _measure(n: int, suite: Suite, session: ExecutorSession) -> list[Row]:
    async def direct() -> ToolReply:
        return reply_text(await session.call(TOOL, dict(ARGUMENTS)))

    async def handler(name: str, arguments: dict[str, Any]) -> ToolReply:
        return reply_text(await session.call(name, arguments))

    offered = [suite.registry.get(TOOL)]
    rows = [Row("direct", await _timed(n, direct))]
    async with CaseToolServer() as server:
        url = server.open(offered, handler, label=f"{SUITE}:{CASE}")
        for label, mode in (("mcp 2026", "auto"), ("mcp legacy", "legacy")):
            async with Client(url, mode=mode) as client:
                await client.list_tools()
                reply = await client.call_tool(TOOL, dict(ARGUMENTS))
                assert not reply.is_error, reply.content
                rows.append(Row(label, await _timed(n, lambda c=client: c.call_tool(TOOL, dict(ARGUMENTS)))))
        async with httpx2.AsyncClient() as http:
            for label, protocol in (("raw 2026", "2026-07-28"), ("raw legacy", "2025-11-25")):
                post = _raw_post(http, url, protocol)
                await post()
                rows.append(Row(label, await _timed(n, post)))
    return rows


def _raw_post(http: httpx2.AsyncClient, url: str, protocol: str) -> Callable[[], Awaitable[None]]:
    """One bare JSON-RPC tools/call POST at ``protocol`` (no SDK client): the server's share."""
    params: dict[str, Any] = {"name": TOOL, "arguments": ARGUMENTS}
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": protocol,
    }
    if protocol != "2025-11-25":  # the 2026 wire: routing headers, and the envelope in _meta
        headers |= {"mcp-method": "tools/call", "mcp-name": TOOL}
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: protocol, CLIENT_CAPABILITIES_META_KEY: {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

    async def post() -> None:
        answer = await http.post(url, json=body, headers=headers)
        assert answer.status_code == 200 and "error" not in answer.json(), answer.text

    return post


def measure_call_overhead(n: int) -> list[Row]:
    """Part 1: per-call times of the direct path and the MCP paths, ``n`` calls each."""
    suite = callbench.load_suite(SUITE)
    case = next(c for c in suite.cases if c.id == CASE)
    with tempfile.TemporaryDirectory() as tmp:
        session = suite.executor.start(case, Path(tmp) / "work", suite)
        try:
            return asyncio.run(_measure(n, suite, session))
        finally:
            session.close()


def print_call_overhead(rows: list[Row]) -> None:
    """Part 1's table: medians and p95 side by side, and what each path adds to ``direct``."""
    base = rows[0]
    n = len(base.times_ms)
    print(f"per tool call, {SUITE}:{CASE} -> {TOOL}, {n} calls per path (ms)")
    print(f"{'path':>11} {'median':>8} {'p95':>8} {'+median':>8} {'+p95':>8}")
    for row in rows:
        print(
            f"{row.path:>11} {row.median:>8.3f} {row.p95:>8.3f} "
            f"{row.median - base.median:>8.3f} {row.p95 - base.p95:>8.3f}"
        )
    print("target: <= 2 ms median added per call")


# -- Part 2 (wall / ideal for 200 agent cases) goes below this line, as its own functions. --------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="calls per path (default 2000)")
    parser.add_argument("--quick", action="store_true", help="100 calls per path: a smoke run")
    args = parser.parse_args()
    print_call_overhead(measure_call_overhead(100 if args.quick else args.calls))


if __name__ == "__main__":
    main()
