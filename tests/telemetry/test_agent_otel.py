"""``--agent-otel`` end to end: the example agent ``examples/agents/openai_mcp_agent.py`` sends its own
GenAI spans to its case's endpoint, and its model's tokens (reasoning and cached included) appear in
the record, the summary and the report beside callbench's own tool trace. The agent's model is a
local OpenAI-compatible stand-in (``tests/helpers/protocol_server.py``) playing the starter suite's
gold calls; nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from protocol_server import ProtocolServer
from scripted_responder import ScriptedResponder

import callbench
from callbench.errors import ConfigError
from callbench.suites.resolve import load_suite
from callbench.telemetry.otlp import decode_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
sys.path.insert(0, str(ROOT / "tests" / "agents"))
from agent_verdicts import MODEL, agent_environment  # noqa: E402 - beside the example agents' tests

CASE = "email_after_lookup"
"""Two calls, the second reading the first's result: three model requests."""
REASONING, CACHED = 3, 4


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ProtocolServer]:
    """The agent's model: the starter suite's gold calls, each answer reporting reasoning and cached
    tokens besides the stand-in's 10 input and 5 output tokens."""
    settings, removed = agent_environment(tmp_path / "env")
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    for name in removed:
        monkeypatch.delenv(name, raising=False)
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    script = ScriptedResponder(load_suite("starter"), "oracle")

    def answer(api: Any, body: dict[str, Any]) -> Any:
        return dataclasses.replace(script(api, body), reasoning_tokens=REASONING, cached_input_tokens=CACHED)

    with ProtocolServer(answer) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


def check_agent_account(record: Any) -> None:
    """Three model requests, as the agent's spans reported them, are the case's rounds and usage."""
    otel = record.trace.agent.details["otel"]
    assert otel["requests"] == 3 and otel["rounds"] is True and otel["services"] == ["openai_mcp_agent"]
    assert otel["usage"] == {
        "input_tokens": 30,
        "output_tokens": 15,
        "reasoning_tokens": 9,
        "cached_tokens": 12,
    }
    assert otel["models"] == [MODEL] and otel["providers"] == ["openai"] and otel["tool_spans"] == 2
    rounds = record.trace.rounds
    assert [r.agent_reported for r in rounds] == [True, True, True]
    assert [len(r.call_ids) for r in rounds] == [1, 1, 0]  # each call follows the request that made it
    assert [r.finish_reason for r in rounds] == ["tool_calls", "tool_calls", "stop"]
    usage = record.trace.usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.cached_tokens) == (
        30,
        15,
        9,
        12,
    )
    assert [c.tool for c in record.trace.calls] == ["get_contact", "send_email"]  # callbench's own trace
    assert record.trace.agent.details["mcp_protocol_version"]


def test_a_command_agents_spans_give_its_tokens(model: ProtocolServer, tmp_path: Path) -> None:
    spec = f"cmd:{sys.executable} {EXAMPLES / 'openai_mcp_agent.py'} --model {MODEL}"
    spans = tmp_path / "spans.jsonl"
    result = callbench.run(
        "starter",
        agent=spec,
        case_ids=[CASE],
        out_dir=tmp_path / "run",
        agent_otel=True,
        otel=f"file:{spans}",
    )
    (record,) = result.records
    assert record.status == "completed" and record.trace.stop_reason == "answer"
    check_agent_account(record)
    tokens = result.summary["usage"]["tokens"]
    assert (tokens["input"], tokens["reasoning"], tokens["cached_input"], tokens["requests"]) == (
        30,
        9,
        12,
        3,
    )
    # --otel out: the agent's reported requests and callbench's tool spans, with the MCP attributes
    (line,) = spans.read_text().splitlines()
    out = decode_json(json.loads(line))
    chats = [s for s in out if s.name == f"chat {MODEL}"]
    assert len(chats) == 3 and {s.attributes["callbench.source"] for s in chats} == {"agent_reported"}
    tools = [s for s in out if s.name.startswith("execute_tool ")]
    assert {s.attributes["mcp.method.name"] for s in tools} == {"tools/call"}
    assert {s.attributes["mcp.protocol.version"] for s in tools} == {
        record.trace.agent.details["mcp_protocol_version"]
    }
    root = next(s for s in out if s.name == "invoke_agent openai_mcp_agent.py")
    assert root.attributes["gen_ai.usage.reasoning.output_tokens"] == 9


def test_an_in_process_agent_is_given_its_cases_endpoint(model: ProtocolServer, tmp_path: Path) -> None:
    result = callbench.run(
        "starter",
        agent="py:openai_mcp_agent:agent",
        case_ids=[CASE, "weather_paris"],
        out_dir=tmp_path / "run",
        agent_otel=True,
        concurrency=2,
    )
    records = {r.case_id: r for r in result.records}
    check_agent_account(records[CASE])
    weather = records["weather_paris"].trace.agent.details["otel"]  # concurrent cases never mix
    assert weather["requests"] == 2 and weather["usage"]["input_tokens"] == 20


def test_without_the_option_nothing_changes(model: ProtocolServer, tmp_path: Path) -> None:
    result = callbench.run(
        "starter", agent="py:openai_mcp_agent:agent", case_ids=[CASE], out_dir=tmp_path / "run"
    )
    (record,) = result.records
    assert "otel" not in record.trace.agent.details
    assert all(r.reconstructed for r in record.trace.rounds) and record.trace.usage.input_tokens == 0


def test_an_agent_service_gets_the_endpoint_in_its_request(tmp_path: Path) -> None:
    """``http:``: the request's ``otel_endpoint``; the service exports its span there before it answers."""
    from aiohttp import web
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    seen: list[dict[str, Any]] = []

    def export(endpoint: str) -> None:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint + "/v1/traces")))
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 7,
        }
        provider.get_tracer("svc").start_span("chat m", attributes=attributes).end()
        provider.shutdown()

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        await asyncio.to_thread(export, body["otel_endpoint"])
        return web.json_response({"answer": "done"})

    async def scenario() -> Any:
        app = web.Application()
        app.router.add_post("/agent", handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            return await callbench.run_async(
                "starter",
                agent=f"http:http://127.0.0.1:{port}/agent",
                case_ids=["weather_paris"],
                out_dir=tmp_path / "run",
                agent_otel=True,
            )
        finally:
            await runner.cleanup()

    result = asyncio.run(scenario())
    (record,) = result.records
    assert seen and seen[0]["otel_endpoint"].startswith("http://127.0.0.1:")
    otel = record.trace.agent.details["otel"]
    assert otel["requests"] == 1 and otel["usage"]["input_tokens"] == 7


def test_agent_otel_needs_an_agent_that_can_be_told_its_endpoint(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--agent-otel .* needs --agent"):
        callbench.run("starter", "oracle", out_dir=tmp_path / "a", agent_otel=True)
    module = tmp_path / "plain_agent.py"
    module.write_text("async def agent(instruction, mcp_url):\n    return 'done'\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ConfigError, match="must take otel_endpoint="):
            callbench.run("starter", agent="py:plain_agent:agent", out_dir=tmp_path / "b", agent_otel=True)
    finally:
        sys.path.remove(str(tmp_path))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
