"""``--stream`` on Chat Completions: answers assembled from their deltas, however the server cuts them,
time to first token, and a stream that breaks off is a transient error, never an answer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from chat_loop import CLOCK, tool_loop, two_calls_then_text
from protocol_server import Api, ProtocolServer, Turn
from provider_helpers import WEATHER, conversation

from callbench.errors import TransientProviderError
from callbench.providers import anthropic
from callbench.providers.model import Model, ModelOptions
from callbench.providers.openai_compat import (
    OpenAIProvider,
    StreamAssembler,
    build_request,
    make_provider,
    read_stream,
)
from callbench.providers.presets import Quirks
from callbench.providers.wire import ContextLengthError, Endpoint, SSEEvent, StreamReply, parse_sse_lines
from callbench.types.messages import GenerationSettings, ModelTurn

STREAM = GenerationSettings(max_tokens=256, stream=True)
WHERE = Endpoint("openai", "m", "http://x", None)
ODD_ARGS = '{"city": "São Paulo \\"centro\\" 🌧", "unit": "c"}'


def odd_call(api: Api, body: dict[str, Any]) -> Turn:
    """One call whose arguments hold escapes and multi-byte characters, then text."""
    if (body.get("messages") or [{}])[-1].get("role") == "tool":
        return Turn(text="Raining in São Paulo 🌧")
    return Turn(calls=[("weather_get", ODD_ARGS)])


def ask(server: ProtocolServer, spec: str = "") -> ModelTurn:
    provider = make_provider(f"m@{server.url}{spec}")

    async def once() -> ModelTurn:
        try:
            return await provider.generate(conversation(), [WEATHER, CLOCK], STREAM)
        finally:
            await provider.aclose()

    return asyncio.run(once())


def test_request_asks_for_a_stream_with_usage() -> None:
    body, _ = build_request("m", conversation(), [WEATHER], STREAM)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    body, _ = build_request("m", conversation(), [WEATHER], STREAM, Quirks(stream_usage=False))
    assert body["stream"] is True and "stream_options" not in body
    plain, _ = build_request("m", conversation(), [WEATHER], GenerationSettings())
    assert plain["stream"] is False and "stream_options" not in plain


@pytest.mark.parametrize("fragment", [1, 3, 1000])
@pytest.mark.parametrize("split_writes", [False, True])
def test_arguments_split_anywhere_are_assembled_exactly(fragment: int, split_writes: bool) -> None:
    with ProtocolServer(responder=odd_call) as server:
        server.stream.fragment, server.stream.split_writes = fragment, split_writes
        turns = tool_loop(make_provider(f"m@{server.url}"), STREAM, tools=[WEATHER])
        assert server.requests[0][1]["stream"] is True
    (call,) = turns[0].tool_calls
    assert call.name == "weather.get" and call.arguments_raw == ODD_ARGS
    assert call.arguments == json.loads(ODD_ARGS) and call.parse_error is None
    assert turns[0].finish_reason == "tool_calls" and turns[0].text == ""
    assert turns[1].text == "Raining in São Paulo 🌧" and turns[1].finish_reason == "stop"
    assert turns[0].usage is not None and turns[0].usage.input_tokens == 10
    assert turns[0].ttft_ms is not None and turns[0].ttft_ms >= 0


@pytest.mark.parametrize("interleave", [False, True])
def test_two_parallel_calls_are_two_calls(interleave: bool) -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.fragment, server.stream.interleave = 2, interleave
        turn = ask(server)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("weather.get", {"city": "Paris"}),
        ("clock", {"city": "Oslo"}),
    ]
    assert len({c.id for c in turn.tool_calls}) == 2


def test_deltas_without_index_still_make_two_calls() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.no_index, server.stream.fragment = True, 3
        turn = ask(server)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("weather.get", {"city": "Paris"}),
        ("clock", {"city": "Oslo"}),
    ]


@pytest.mark.parametrize("how", ["server sends none", "not asked for"])
def test_usage_missing_leaves_usage_unknown(how: str) -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.usage = how != "server sends none"
        turn = ask(server, "?stream_usage=0" if how == "not asked for" else "")
        if how == "not asked for":
            assert "stream_options" not in server.requests[0][1]
    assert turn.usage is None and len(turn.tool_calls) == 2


def test_reasoning_deltas_are_assembled_and_time_to_first_token_counts_them() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.reasoning_field, server.stream.fragment = "reasoning", 1
        turn = ask(server)
    assert turn.reasoning == "thought 1: which tool?" and turn.ttft_ms is not None


def test_a_stream_cut_mid_delta_is_a_transient_error_naming_the_cause() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.cut_after = 4
        with pytest.raises(TransientProviderError, match=r"stream was cut off after 4 event\(s\)"):
            ask(server)


def test_a_stream_that_ends_before_the_answer_is_a_transient_error() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.end_after = 5  # a clean end of body, but no finish_reason and no [DONE]
        with pytest.raises(TransientProviderError, match="without a finish reason or \\[DONE\\]"):
            ask(server)


def test_a_cut_stream_is_retried_then_an_error_record_not_a_model_failure(fast_options: ModelOptions) -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.cut_after = 2
        model = Model(make_provider(f"m@{server.url}"), STREAM, fast_options)

        async def once() -> ModelTurn:
            try:
                return await model.generate(conversation(), [WEATHER, CLOCK])
            finally:
                await model.aclose()

        with pytest.raises(TransientProviderError, match="cut off.*gave up after 4 attempt"):
            asyncio.run(once())
        assert len(server.requests) == 4


def test_a_cut_stream_then_a_whole_one_recovers(fast_options: ModelOptions) -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.cut_after = 3
        seen: list[int] = []

        def rule(api: Api, body: dict[str, Any]) -> None:
            seen.append(1)
            if len(seen) > 1:
                server.stream.cut_after = None

        server.fault_rule = rule  # type: ignore[assignment]
        model = Model(make_provider(f"m@{server.url}"), STREAM, fast_options)

        async def once() -> ModelTurn:
            try:
                return await model.generate(conversation(), [WEATHER, CLOCK])
            finally:
                await model.aclose()

        turn = asyncio.run(once())
    assert len(turn.tool_calls) == 2 and model.counters["retries"] == 1


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("overloaded, try again", TransientProviderError),
        ("This model's maximum context length is 4096 tokens", ContextLengthError),
    ],
)
def test_an_error_event_mid_stream_is_mapped(message: str, error: type[Exception]) -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.stream.error_after, server.stream.error_message = 3, message
        with pytest.raises(error, match=message.split(",")[0]):
            ask(server)


# -- pure pieces ----------------------------------------------------------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def test_assembler_edge_cases() -> None:
    assembler = StreamAssembler()
    deltas = [
        chunk({"role": "assistant", "content": ""}),  # no output yet
        chunk({"tool_calls": [{"id": "a", "function": {"name": "weather_get", "arguments": '{"ci'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": 'ty": "X"}'}}]}),  # no index: continues a
        chunk({"tool_calls": [{"id": "b", "function": {"name": "clock", "arguments": ""}}]}),  # new id: next
        chunk({"tool_calls": [{"id": "b", "function": {"name": "clock", "arguments": {"city": "Y"}}}]}),
        chunk({"content": "ignored"}, index=1),  # a second choice (n=1 asked): not this answer
        chunk({}, "tool_calls"),
    ]
    outputs = [assembler.feed(d) for d in deltas]
    assert outputs == [False, True, True, True, True, False, False]
    calls = assembler.body()["choices"][0]["message"]["tool_calls"]
    assert [c["id"] for c in calls] == ["a", "b"]
    assert calls[0]["function"] == {"name": "weather_get", "arguments": '{"city": "X"}'}
    # The name sent again whole is not doubled; arguments given as an object are kept as JSON.
    assert calls[1]["function"] == {"name": "clock", "arguments": '{"city": "Y"}'}
    assert assembler.complete and assembler.body()["choices"][0]["message"]["content"] == ""


def test_read_stream_timing_and_a_server_that_ignored_stream() -> None:
    events = [
        SSEEvent(None, json.dumps(chunk({"role": "assistant"})), 1.0),
        SSEEvent(None, json.dumps(chunk({"content": "hi"})), 1.25),
        SSEEvent(None, json.dumps(chunk({}, "stop")), 1.5),
        SSEEvent(None, "[DONE]", 1.5),
    ]
    body, ttft = read_stream(StreamReply(events, None, started=1.0), WHERE)
    assert ttft == 250.0 and body["choices"][0]["message"]["content"] == "hi"
    whole = {"choices": [{"message": {"content": "x"}}]}
    assert read_stream(StreamReply([], whole, 0.0), WHERE) == (whole, None)
    with pytest.raises(TransientProviderError, match="not JSON"):
        read_stream(StreamReply([SSEEvent(None, "{oops", 0.0)], None, 0.0), WHERE)
    with pytest.raises(TransientProviderError, match="after 0 chunk"):
        read_stream(StreamReply([], None, 0.0), WHERE)  # an empty 200 body


def test_sse_lines() -> None:
    lines = [": keep-alive", "event: message_start", 'data: {"a":', "data: 1}", "", "", "data:x", "data:  y"]
    events = parse_sse_lines(lines)
    assert [(e.event, e.data) for e in events] == [("message_start", '{"a":\n1}'), (None, "x\n y")]


def test_description_and_cache_key_unchanged_for_default_quirks(server: ProtocolServer) -> None:
    # New quirks at their defaults stay out of the description the cache key hashes.
    provider = OpenAIProvider("m", make_provider(f"m@{server.url}").preset, server.url)
    assert set(provider.describe()["quirks"]) == {
        "strict_tools",
        "tool_choice_required",
        "parallel_tool_calls_param",
        "seed",
        "max_tokens_field",
        "no_fallback",
        "auth_header",
        "omit_temperature",
    }
    changed = make_provider(f"m@{server.url}?stream_usage=0&reasoning_replay=reasoning")
    assert changed.describe()["quirks"]["stream_usage"] is False
    assert changed.describe()["quirks"]["reasoning_replay"] == "reasoning"


# -- Anthropic Messages ----------------------------------------------------------------------------


def thinking_then_call(api: Api, body: dict[str, Any]) -> Turn:
    last = (body.get("messages") or [{}])[-1]
    if any(b.get("type") == "tool_result" for b in last.get("content") or [] if isinstance(b, dict)):
        return Turn(text="Sunny, 21 °C")
    return Turn(
        calls=[("weather_get", ODD_ARGS), ("clock", '{"city": "Oslo"}')], thinking="Two tools, at once."
    )


def anthropic_loop(server: ProtocolServer, settings: GenerationSettings) -> list[ModelTurn]:
    return tool_loop(anthropic.make_provider(f"m@{server.root}"), settings, tools=[WEATHER, CLOCK])


@pytest.mark.parametrize("fragment", [1, 5])
def test_anthropic_stream_rebuilds_text_calls_and_signed_thinking(fragment: int) -> None:
    settings = GenerationSettings(max_tokens=2048, stream=True, thinking_budget=1024)
    with ProtocolServer(responder=thinking_then_call) as server:
        server.stream.fragment, server.stream.split_writes = fragment, fragment == 1
        turns = anthropic_loop(server, settings)
        assert server.requests[0][1]["stream"] is True
        # The signed thinking block came back with the next request, exactly as streamed.
        sent = server.requests[1][1]["messages"][1]["content"][0]
    first, second = turns
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("weather.get", json.loads(ODD_ARGS)),
        ("clock", {"city": "Oslo"}),
    ]
    assert first.reasoning == "Two tools, at once." and first.finish_reason == "tool_use"
    assert sent == {"type": "thinking", "thinking": "Two tools, at once.", "signature": "sig-1"}
    assert second.text == "Sunny, 21 °C" and second.finish_reason == "end_turn"
    assert first.usage is not None and (first.usage.input_tokens, first.usage.output_tokens) == (10, 5)
    assert first.ttft_ms is not None


def test_anthropic_stream_cut_or_ended_early_is_transient() -> None:
    with ProtocolServer(responder=thinking_then_call) as server:
        server.stream.cut_after = 6
        with pytest.raises(TransientProviderError, match="stream was cut off after"):
            anthropic_loop(server, STREAM)
        server.stream.cut_after, server.stream.end_after = None, 6
        with pytest.raises(TransientProviderError, match="without message_stop"):
            anthropic_loop(server, STREAM)
        server.stream.end_after, server.stream.error_after, server.stream.error_message = (
            None,
            3,
            "Overloaded",
        )
        with pytest.raises(TransientProviderError, match="HTTP 500: Overloaded"):
            anthropic_loop(server, STREAM)


def test_anthropic_stream_with_broken_tool_json_keeps_it_as_a_parse_error() -> None:
    events = [
        {"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 3}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "x"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": '},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]
    reply = StreamReply([SSEEvent(None, json.dumps(e), 2.0) for e in events], None, 1.0)
    data, ttft = anthropic.read_stream(reply, WHERE)
    assert ttft == 1000.0
    turn = anthropic.parse_response(data, anthropic.build_request("c", conversation(), [], STREAM)[1])
    (call,) = turn.tool_calls
    assert (
        call.arguments is None
        and call.arguments_raw == '{"a": '
        and "malformed JSON" in (call.parse_error or "")
    )
    assert turn.finish_reason == "max_tokens" and turn.usage is not None and turn.usage.output_tokens == 4
