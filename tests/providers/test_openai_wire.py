"""build_request / parse_response of the OpenAI Chat Completions adapter (pure, no HTTP)."""

from __future__ import annotations

import pytest
from provider_helpers import SETTINGS, WEATHER, conversation, openai_body

from callbench.errors import TransientProviderError
from callbench.providers.openai_compat import build_request, parse_response
from callbench.providers.presets import Quirks
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall


def test_request_carries_settings_tools_and_sanitised_names() -> None:
    body, names = build_request("m", conversation(), [WEATHER], SETTINGS)
    assert body["temperature"] == 0.0 and body["max_tokens"] == 256 and body["seed"] == 7
    assert body["stream"] is False and body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True
    function = body["tools"][0]["function"]
    assert function["name"] == "weather_get" and names.original("weather_get") == "weather.get"
    assert function["parameters"]["additionalProperties"] is False  # strictified contract schema
    assert "strict" not in function


def test_quirks_change_the_request() -> None:
    quirks = Quirks(
        tool_choice_required=False,
        parallel_tool_calls_param=False,
        seed=False,
        max_tokens_field="max_completion_tokens",
        no_fallback={"provider": {"allow_fallbacks": False}},
    )
    settings = GenerationSettings(tool_choice="required", seed=1)
    body, _ = build_request("m", conversation(), [WEATHER], settings, quirks)
    assert body["tool_choice"] == "auto" and "parallel_tool_calls" not in body and "seed" not in body
    assert body["max_completion_tokens"] == 4096 and body["provider"] == {"allow_fallbacks": False}


def test_strict_mode_makes_optional_nullable_and_strips_nulls_back() -> None:
    body, names = build_request("m", conversation(), [WEATHER], SETTINGS, Quirks(strict_tools=True))
    params = body["tools"][0]["function"]["parameters"]
    assert body["tools"][0]["function"]["strict"] is True
    assert params["required"] == ["city", "unit"] and params["properties"]["unit"]["type"] == [
        "string",
        "null",
    ]
    data = openai_body(
        {
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather_get", "arguments": '{"city": "Paris", "unit": null}'},
                }
            ]
        }
    )
    turn = parse_response(data, names, [WEATHER], strict=True)
    assert turn.tool_calls[0].arguments == {"city": "Paris"}


def test_history_with_calls_and_results_round_trips() -> None:
    call = ToolCall(id="c9", name="weather.get", arguments_raw='{"city":"Oslo"}', arguments={"city": "Oslo"})
    history = conversation() + [
        Message.assistant(ModelTurn(tool_calls=[call])),
        Message.tool(call, '{"t": 3}'),
    ]
    body, _ = build_request("m", history, [WEATHER], SETTINGS)
    assistant, tool = body["messages"][2], body["messages"][3]
    assert assistant["content"] == ""  # a string, never null: llama-cpp-python refuses null
    assert assistant["tool_calls"][0]["function"] == {"name": "weather_get", "arguments": '{"city":"Oslo"}'}
    assert tool == {"role": "tool", "tool_call_id": "c9", "content": '{"t": 3}'}


@pytest.mark.parametrize(
    ("raw", "arguments", "error_part"),
    [
        ('{"city": "Paris"', None, "malformed JSON"),
        ("[1, 2]", None, "not an object"),
        ('"Paris"', None, "not an object"),
        ("", {}, None),
    ],
)
def test_malformed_arguments_are_kept_not_raised(raw: str, arguments: object, error_part: str | None) -> None:
    _, names = build_request("m", conversation(), [WEATHER], SETTINGS)
    data = openai_body({"tool_calls": [{"id": "c1", "function": {"name": "weather_get", "arguments": raw}}]})
    call = parse_response(data, names).tool_calls[0]
    assert call.name == "weather.get" and call.arguments_raw == raw and call.arguments == arguments
    assert (error_part is None and call.parse_error is None) or error_part in (call.parse_error or "")


def test_usage_reasoning_and_missing_ids() -> None:
    usage = {
        "prompt_tokens": 11,
        "completion_tokens": 7,
        "completion_tokens_details": {"reasoning_tokens": 4},
        "prompt_tokens_details": {"cached_tokens": 2},
    }
    data = openai_body(
        {
            "content": "hi",
            "reasoning_content": "thinking",
            "tool_calls": [{"function": {"name": "unknown_tool", "arguments": "{}"}}],
        },
        usage,
    )
    _, names = build_request("m", conversation(), [WEATHER], SETTINGS)
    turn = parse_response(data, names)
    assert turn.text == "hi" and turn.reasoning == "thinking" and turn.model == "m-1"
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (11, 7)
    assert (turn.usage.reasoning_tokens, turn.usage.cached_tokens) == (4, 2)
    assert turn.tool_calls[0].id == "call_0" and turn.tool_calls[0].name == "unknown_tool"


def test_body_without_choices_is_a_transient_error() -> None:
    _, names = build_request("m", conversation(), [], SETTINGS)
    with pytest.raises(TransientProviderError):
        parse_response({"choices": []}, names)


def test_duplicate_call_ids_in_one_turn_are_made_distinct() -> None:
    _, names = build_request("m", conversation(), [WEATHER], SETTINGS)
    calls = [
        {"id": "same", "function": {"name": "weather_get", "arguments": f'{{"city": "{c}"}}'}}
        for c in ("Oslo", "Rome", "Lima")
    ]
    turn = parse_response(openai_body({"tool_calls": calls}), names)
    assert [c.id for c in turn.tool_calls] == ["same", "same#dup2", "same#dup3"]
    assert [c.arguments for c in turn.tool_calls] == [{"city": "Oslo"}, {"city": "Rome"}, {"city": "Lima"}]
