"""build_request / parse_response of the Anthropic Messages adapter (pure, no HTTP)."""

from __future__ import annotations

import pytest
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.errors import TransientProviderError
from callbench.messages import Message, ModelTurn, ToolCall
from callbench.providers.anthropic import build_request, parse_response


def test_parallel_results_merge_into_one_user_turn() -> None:
    calls = [ToolCall(id=f"t{i}", name="weather.get", arguments={"city": c}) for i, c in enumerate(["Oslo", "Rome"])]
    history = conversation() + [Message.assistant(ModelTurn(text="Checking.", tool_calls=calls)),
                                Message.tool(calls[0], "cold"), Message.tool(calls[1], "warm")]
    body, _ = build_request("c", history, [WEATHER], SETTINGS)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
    assert assistant[0] == {"type": "text", "text": "Checking."}
    assert assistant[1] == {"type": "tool_use", "id": "t0", "name": "weather_get", "input": {"city": "Oslo"}}
    assert [(b["tool_use_id"], b["content"]) for b in results] == [("t0", "cold"), ("t1", "warm")]
    assert body["temperature"] == 0.0 and body["tool_choice"] == {"type": "auto"}


def test_response_blocks_become_a_turn() -> None:
    _, names = build_request("c", conversation(), [WEATHER], SETTINGS)
    data = {"model": "claude-x", "stop_reason": "tool_use",
            "usage": {"input_tokens": 30, "output_tokens": 9, "cache_read_input_tokens": 12},
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Sure."},
                        {"type": "tool_use", "id": "tu1", "name": "weather_get", "input": {"city": "Oslo"}},
                        {"type": "tool_use", "id": "tu2", "name": "weather_get", "input": ["bad"]}]}
    turn = parse_response(data, names)
    assert turn.text == "Sure." and turn.reasoning == "hmm" and turn.finish_reason == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("tu1", "weather.get", {"city": "Oslo"}),
                                                                     ("tu2", "weather.get", None)]
    assert "not an object" in (turn.tool_calls[1].parse_error or "")
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.cached_tokens) == (42, 12)


def test_missing_content_is_transient() -> None:
    _, names = build_request("c", conversation(), [], SETTINGS)
    with pytest.raises(TransientProviderError):
        parse_response({"type": "error"}, names)
