"""Agents with a fixed model latency for bench/mcp_overhead.py (part 2: wall / ideal).

* :func:`slow_oracle_starter` -- a ``py:`` agent under test (``--agent py:agent_helpers:slow_oracle_starter``
  with ``bench/`` on ``PYTHONPATH``): a plain agent loop over the official ``mcp`` client whose "model"
  is callbench's ``oracle`` playing the starter case's gold path, after a sleep of :data:`LATENCY_S`
  per model turn. It measures callbench's MCP path, not a model. It opens one MCP client per case on
  an HTTP client that reuses one SSL context (see :func:`http_client`).
* :func:`slow_oracle_starter_sdk_default` -- the same with ``Client(url)``, the SDK's default: every
  client builds a fresh SSL context and loads the system CA bundle (~20-120 ms of CPU each, even for
  an ``http://`` URL), which in a ``py:`` agent stalls callbench's event loop too.
* :func:`serve` -- :func:`slow_oracle_starter` as an ``http:`` agent service in a process of its own.
* :class:`SlowOracle` -- the same "model" (oracle + the same sleep per turn) as a callbench
  :class:`~callbench.providers.base.Provider`, for the offline loop: the same cases, turns and sleeps
  through callbench's own round loop.

Model turns per case = gold-path turns + 1 final text turn (:func:`model_turns`), on both sides.
``CALLBENCH_BENCH_LATENCY`` (seconds) overrides the latency, also for the CLI subprocess.

    PYTHONPATH=bench python bench/agent_helpers.py   # one pass over the starter suite, each side
    python bench/agent_helpers.py --serve            # the same agent as an http: service (prints the port)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import ssl
import tempfile
import time
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import callbench
from callbench.providers.agents.oracle import gold_plan, make_provider
from callbench.providers.base import Provider
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn

SUITE = "starter"
LATENCY_S = float(os.environ.get("CALLBENCH_BENCH_LATENCY", "0.1"))
"""Seconds the "model" takes per turn (an ``asyncio.sleep``: it holds no CPU, like a remote model)."""
MAX_TURNS = 12


class TurnCounter:
    """Model turns taken in this process (both sides count here; the bench checks it against the
    plan, so an ideal computed from the plan is the ideal of what actually ran)."""

    def __init__(self) -> None:
        self.turns = 0

    def reset(self) -> None:
        self.turns = 0


COUNTER = TurnCounter()

_SUITES: dict[str, Suite] = {}
_BY_INSTRUCTION: dict[str, Case] = {}


def starter() -> Suite:
    """The starter suite, loaded once per process."""
    if SUITE not in _SUITES:
        suite = callbench.load_suite(SUITE)
        _SUITES[SUITE] = suite
        _BY_INSTRUCTION.update({c.prompt_text(): c for c in suite.cases})
    return _SUITES[SUITE]


def model_turns(case: Case) -> int:
    """Model turns the oracle takes on ``case``: one per gold-path turn, plus the final answer."""
    return len(gold_plan(case)) + 1


async def _model_turn(player: Provider, messages: list[Message], tools: list[ToolContract]) -> ModelTurn:
    await asyncio.sleep(LATENCY_S)
    COUNTER.turns += 1
    return await player.generate(messages, tools, GenerationSettings())


_SSL_CONTEXT: list[ssl.SSLContext] = []


def http_client() -> httpx2.AsyncClient:
    """A fresh HTTP client for one case's MCP connection, on one SSL context for the whole process
    (building one loads the CA bundle: the SDK's default client does that for every connection)."""
    if not _SSL_CONTEXT:
        _SSL_CONTEXT.append(ssl.create_default_context())
    # The SDK's default timeouts (create_mcp_http_client): 30 s, and 300 s to read a held stream.
    return httpx2.AsyncClient(verify=_SSL_CONTEXT[0], timeout=httpx2.Timeout(30.0, read=300.0))


async def slow_oracle_starter(instruction: str, mcp_url: str) -> str:
    """Agent under test: the oracle's gold path for the starter case with this instruction, one
    :data:`LATENCY_S` sleep per model turn, every call over MCP; returns the final answer."""
    async with http_client() as http, Client(streamable_http_client(mcp_url, http_client=http)) as client:
        return await _play(instruction, client)


async def slow_oracle_starter_sdk_default(instruction: str, mcp_url: str) -> str:
    """:func:`slow_oracle_starter` on the SDK's default client, ``Client(mcp_url)``."""
    async with Client(mcp_url) as client:
        return await _play(instruction, client)


async def _play(instruction: str, client: Client) -> str:
    suite = starter()
    case = _BY_INSTRUCTION[instruction]
    player = make_provider("").for_case(case)
    listed = (await client.list_tools()).tools
    # The oracle fills "$ref" arguments using the contracts' schemas: hand it the suite's contracts
    # for the listed names (the listing itself is tested in tests/mcp/).
    tools = [suite.registry.get(t.name) for t in listed]
    messages = ([Message.system(suite.system_prompt)] if suite.system_prompt else []) + case.start_messages()
    for _ in range(MAX_TURNS):
        turn = await _model_turn(player, messages, tools)
        messages.append(Message.assistant(turn))
        if not turn.tool_calls:
            return turn.text
        for call in turn.tool_calls:
            result = await client.call_tool(call.name, call.arguments or {})
            messages.append(Message.tool(call, "".join(getattr(b, "text", "") for b in result.content)))
    return ""


class SlowOracle(Provider):
    """The offline side's model: ``oracle`` bound to each case, sleeping :data:`LATENCY_S` per turn."""

    name = "oracle+latency"
    model = "oracle+latency"
    needs_network = False

    def __init__(self, player: Provider | None = None) -> None:
        self.player = player

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        if self.player is None:
            raise RuntimeError("SlowOracle must be bound to a case with for_case()")
        await asyncio.sleep(LATENCY_S)
        COUNTER.turns += 1
        return await self.player.generate(messages, tools, settings)

    def for_case(self, case: Case) -> Provider:
        return SlowOracle(make_provider("").for_case(case))

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "latency_s": LATENCY_S}


async def serve(port: int, max_seconds: float) -> None:
    """:func:`slow_oracle_starter` as an ``http:`` agent service on 127.0.0.1 (POST the request JSON
    to ``/agent``; the reply is ``{"answer": ...}``): the agent's MCP client then runs in a process of
    its own, so the caller's CPU time is callbench's alone. Prints the port; stops after ``max_seconds``."""
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"answer": await slow_oracle_starter(body["instruction"], body["mcp_url"])})

    app = web.Application()
    app.router.add_post("/agent", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    starter()  # load the suite before the first request, not during it
    print(runner.addresses[0][1], flush=True)
    try:
        await asyncio.sleep(max_seconds)
    finally:
        await runner.cleanup()


def sanity_pass() -> None:
    """One pass over the starter suite through each side; prints pass counts and turns."""
    # Run as a script this file is ``__main__``; ``py:agent_helpers:...`` imports it again as
    # ``agent_helpers``, with a counter of its own: use that module on every side.
    helpers = importlib.import_module("agent_helpers")
    suite = starter()
    expected = sum(model_turns(c) for c in suite.cases)
    for label, options in (
        ("offline", {"model": helpers.SlowOracle(), "cache": False}),
        ("agent", {"agent": "py:agent_helpers:slow_oracle_starter"}),
        ("agent/sdk", {"agent": "py:agent_helpers:slow_oracle_starter_sdk_default"}),
    ):
        helpers.COUNTER.reset()
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            result = callbench.run(SUITE, out_dir=tmp, concurrency=16, progress="quiet", **options)
            records = result.records  # read from the run folder: before it goes
        passed = sum(r.verdicts["task-completion-execution"].passed for r in records)
        print(
            f"{label:>9}: {passed}/{len(records)} pass task-completion, "
            f"{helpers.COUNTER.turns} turns (plan: {expected}), {time.perf_counter() - started:.2f} s"
        )


def main() -> None:
    """``--serve``: the ``http:`` agent service; otherwise a sanity pass over the starter suite."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", action="store_true", help="run the http: agent service (prints its port)")
    parser.add_argument("--port", type=int, default=0, help="--serve: port on 127.0.0.1 (default: any free)")
    parser.add_argument("--max-seconds", type=float, default=900.0, help="--serve: stop after this long")
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.port, args.max_seconds))
    else:
        sanity_pass()


if __name__ == "__main__":
    main()
