"""``--agent-otel``'s receiver: OTLP/HTTP on 127.0.0.1, a route per case; what arrives becomes the
agent's account in its record (:mod:`callbench.telemetry.agent_spans`)."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import aiohttp
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from callbench.telemetry.agent_spans import apply_agent_spans, model_requests, summarize
from callbench.telemetry.otlp import ReceivedSpan, decode_json, decode_protobuf, decode_request, encode_json
from callbench.telemetry.receiver import SpanReceiver
from callbench.types.trace import AgentRun, RoundInfo, Trace, TraceCall


def agent_spans(provider: TracerProvider, requests: int = 2) -> None:
    """What an instrumented agent sends: an agent span, model requests with usage, a tool span."""
    tracer = provider.get_tracer("my-agent")
    with tracer.start_as_current_span(
        "invoke_agent helper", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        for n in range(requests):
            attributes = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-5-mini",
                "gen_ai.response.model": "gpt-5-mini-2025-08-07",
                "gen_ai.response.finish_reasons": ["tool_calls" if n == 0 else "stop"],
                "gen_ai.usage.input_tokens": 100 + n,
                "gen_ai.usage.output_tokens": 20,
                "gen_ai.usage.reasoning.output_tokens": 8,
                "gen_ai.usage.cache_read.input_tokens": 64,
            }
            with tracer.start_as_current_span("chat gpt-5-mini", kind=SpanKind.CLIENT, attributes=attributes):
                pass
            if n == 0:
                tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"}
                with tracer.start_as_current_span("execute_tool get_weather", attributes=tool):
                    pass


def provider_to(exporter: Any) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "helper-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_otlp_json_and_protobuf_read_the_same_spans() -> None:
    memory = InMemorySpanExporter()
    agent_spans(provider_to(memory))
    finished = list(memory.get_finished_spans())
    from_proto = decode_protobuf(encode_spans(finished).SerializeToString())
    from_json = decode_json(json.loads(json.dumps(encode_json(finished))))
    assert [s.__dict__ for s in from_json] == [s.__dict__ for s in from_proto]
    chat = next(s for s in from_proto if s.name == "chat gpt-5-mini")
    assert chat.kind == "client" and chat.parent_span_id and len(chat.trace_id) == 32
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chat.resource["service.name"] == "helper-agent" and chat.scope == "my-agent"
    gzipped = gzip.compress(encode_spans(finished).SerializeToString())
    assert len(decode_request(gzipped, "application/x-protobuf", "gzip")) == len(finished)


def test_the_receiver_takes_an_exporters_spans_at_the_cases_route_only() -> None:
    async def scenario() -> None:
        async with SpanReceiver() as receiver:
            route = receiver.open("starter:weather_paris", 1)
            other = receiver.open("starter:weather_paris", 2)
            provider = provider_to(OTLPSpanExporter(endpoint=route.traces_endpoint, timeout=5))
            # the SDK's own exporter, as an agent process sends them (in a thread: it blocks)
            await asyncio.to_thread(agent_spans, provider)
            async with aiohttp.ClientSession() as http:
                base = f"http://127.0.0.1:{receiver.port}"
                async with http.post(f"{base}/v1/traces", data=b"") as reply:
                    assert reply.status == 404  # not a case's route
                async with http.post(route.traces_endpoint, data=b"\xff\x00garbage") as reply:
                    assert reply.status == 400
                body = {"resourceSpans": []}
                async with http.post(other.traces_endpoint, json=body) as reply:
                    assert reply.status == 200 and await reply.json() == {}
            spans = await receiver.collect(route)
            assert [s.name for s in spans] == [
                "invoke_agent helper",
                "chat gpt-5-mini",
                "execute_tool get_weather",
                "chat gpt-5-mini",
            ]
            assert route.requests == 5 and len(route.rejected) == 1  # 4 exports (one per span) + garbage
            assert await receiver.collect(other) == []
            async with aiohttp.ClientSession() as http, http.post(route.traces_endpoint, data=b"") as reply:
                assert reply.status == 404  # closed once collected
            provider.shutdown()

    asyncio.run(scenario())


def received(
    name: str, span_id: str, parent: str = "", start: float = 0.0, **attributes: Any
) -> ReceivedSpan:
    return ReceivedSpan(
        "t" * 32, span_id, name, start, start + 0.25, parent_span_id=parent, attributes=attributes
    )


def test_the_agents_requests_tokens_and_cost_from_its_spans() -> None:
    spans = [
        received("invoke_agent a", "a0", start=10.0, **{"gen_ai.operation.name": "invoke_agent"}),
        # a framework's request span around the SDK's: counted once, as the inner one
        received(
            "chat outer",
            "o1",
            "a0",
            10.1,
            **{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 999},
        ),
        received(
            "chat m",
            "c1",
            "o1",
            10.2,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "anthropic",  # the older names are read too
                "gen_ai.request.model": "claude-x",
                "gen_ai.usage.prompt_tokens": 50,
                "gen_ai.usage.completion_tokens": 7,
                "gen_ai.usage.cost": 0.002,
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [
                                {"type": "reasoning", "content": "hmm"},
                                {"type": "text", "content": "ok"},
                            ],
                        }
                    ]
                ),
            },
        ),
        received(
            "chat m",
            "c2",
            "a0",
            11.0,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "anthropic",
                "gen_ai.response.model": "claude-x-1",
                "gen_ai.usage.input_tokens": 60,
                "gen_ai.usage.output_tokens": 9,
                "gen_ai.usage.reasoning.output_tokens": 3,
                "gen_ai.usage.cache_read.input_tokens": 40,
                "gen_ai.response.finish_reasons": ["stop"],
            },
        ),
        received(
            "execute_tool f", "t1", "a0", 10.6, **{"gen_ai.operation.name": "execute_tool", "error.type": "x"}
        ),
    ]
    assert [s.span_id for s in model_requests(spans)] == ["c1", "c2"]
    summary = summarize(spans)
    assert summary["requests"] == 2 and summary["spans"] == 5 and summary["traces"] == 1
    assert summary["usage"] == {
        "input_tokens": 110,
        "output_tokens": 16,
        "reasoning_tokens": 3,
        "cached_tokens": 40,
    }
    assert summary["cost_usd"] == 0.002 and summary["providers"] == ["anthropic"]
    assert summary["models"] == ["claude-x", "claude-x-1"] and summary["tool_errors"] == 1

    calls = [
        TraceCall(index=0, call_id="mcp_1", round=1, tool="f", execution="ok", started_at=10.5),
        TraceCall(index=1, call_id="mcp_2", round=1, tool="f", execution="ok", started_at=9.0),
    ]
    agent = AgentRun(agent="cmd:x", outcome="answer")
    trace = Trace(calls=calls, agent=agent, rounds=[RoundInfo(index=1, started_at=9.0, reconstructed=True)])
    assert apply_agent_spans(trace, spans, limits={"reply": 1 << 20})
    assert [(r.index, r.call_ids, r.agent_reported, r.reconstructed) for r in trace.rounds] == [
        (1, ["mcp_2"], None, True),  # a call before the first reported request
        (2, ["mcp_1"], True, None),
        (3, [], True, None),
    ]
    assert trace.rounds[1].text == "ok" and trace.rounds[1].reasoning == "hmm"
    assert trace.rounds[2].finish_reason == "stop" and trace.rounds[2].model == "claude-x-1"
    assert trace.usage.input_tokens == 110 and trace.usage.cached_tokens == 40
    assert [c.round for c in calls] == [2, 1]
    assert agent.details["otel"]["rounds"] is True

    # The proxy's account wins: the spans are then only in the details.
    kept = [RoundInfo(index=1, started_at=9.0, agent_request=True)]
    trace = Trace(calls=[], agent=AgentRun(agent="cmd:x", outcome="answer"), rounds=kept)
    assert not apply_agent_spans(trace, spans, make_rounds=False)
    assert trace.rounds == kept and trace.agent is not None and trace.agent.details["otel"]["requests"] == 2


def test_no_spans_is_said_in_the_details() -> None:
    trace = Trace(agent=AgentRun(agent="cmd:x", outcome="answer"))
    assert not apply_agent_spans(trace, [], rejected=["not OTLP"])
    assert trace.agent is not None
    assert trace.agent.details["otel"]["spans"] == 0 and trace.agent.details["otel"]["rejected"] == [
        "not OTLP"
    ]
