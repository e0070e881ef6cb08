"""build_request / parse_response of the Anthropic Messages adapter (pure, no HTTP)."""

from __future__ import annotations

import pytest
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.errors import TransientProviderError
from callbench.providers.anthropic import build_request, parse_response
from callbench.types.messages import Message, ModelTurn, ToolCall


def test_parallel_results_merge_into_one_user_turn() -> None:
    calls = [
        ToolCall(id=f"t{i}", name="weather.get", arguments={"city": c})
        for i, c in enumerate(["Oslo", "Rome"])
    ]
    history = conversation() + [
        Message.assistant(ModelTurn(text="Checking.", tool_calls=calls)),
        Message.tool(calls[0], "cold"),
        Message.tool(calls[1], "warm"),
    ]
    body, _ = build_request("c", history, [WEATHER], SETTINGS)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
    assert assistant[0] == {"type": "text", "text": "Checking."}
    assert assistant[1] == {"type": "tool_use", "id": "t0", "name": "weather_get", "input": {"city": "Oslo"}}
    assert [(b["tool_use_id"], b["content"]) for b in results] == [("t0", "cold"), ("t1", "warm")]
    assert body["temperature"] == 0.0 and body["tool_choice"] == {"type": "auto"}


def test_response_blocks_become_a_turn() -> None:
    _, names = build_request("c", conversation(), [WEATHER], SETTINGS)
    data = {
        "model": "claude-x",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 30, "output_tokens": 9, "cache_read_input_tokens": 12},
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "tu1", "name": "weather_get", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "tu2", "name": "weather_get", "input": ["bad"]},
        ],
    }
    turn = parse_response(data, names)
    assert turn.text == "Sure." and turn.reasoning == "hmm" and turn.finish_reason == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("tu1", "weather.get", {"city": "Oslo"}),
        ("tu2", "weather.get", None),
    ]
    assert "not an object" in (turn.tool_calls[1].parse_error or "")
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.cached_tokens) == (42, 12)


def test_missing_content_is_transient() -> None:
    _, names = build_request("c", conversation(), [], SETTINGS)
    with pytest.raises(TransientProviderError):
        parse_response({"type": "error"}, names)


def test_signed_thinking_blocks_are_sent_back_with_the_tool_turn() -> None:
    import asyncio

    from protocol_server import ProtocolServer, Turn

    from callbench.providers.anthropic import make_provider
    from callbench.providers.model import Model, ModelOptions
    from callbench.types.messages import GenerationSettings

    def responder(api: str, body: dict[str, object]) -> Turn:
        if len(body["messages"]) == 1:  # type: ignore[arg-type]
            return Turn(thinking="I should look it up.", calls=[("weather_get", '{"city": "Oslo"}')])
        return Turn(text="Cold.")

    settings = GenerationSettings(thinking_budget=1024)
    with ProtocolServer(responder=responder) as server:
        model = Model(make_provider(f"c@{server.root}"), options=ModelOptions())

        async def two_rounds() -> None:
            try:
                history = conversation()[1:]
                first = await model.generate(history, [WEATHER], settings)
                assert first.reasoning == "I should look it up."
                history += [Message.assistant(first), Message.tool(first.tool_calls[0], "cold")]
                await model.generate(history, [WEATHER], settings)
            finally:
                await model.aclose()

        asyncio.run(two_rounds())
        second = server.requests[1][1]
    assistant = second["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "I should look it up.", "signature": "sig-1"}
    assert assistant[1]["type"] == "tool_use"
    assert not model.provider.cacheable(settings) and model.provider.cacheable(SETTINGS)  # type: ignore[attr-defined]
