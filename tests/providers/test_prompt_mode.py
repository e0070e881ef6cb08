"""Prompt mode: tools in the system prompt, calls read from text in the common formats."""

from __future__ import annotations

import asyncio

import pytest
from protocol_server import ProtocolServer, Turn
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.providers.prompt_mode import FORMAT_ERROR, make_provider, to_text_messages
from callbench.providers.text_calls import parse_text_calls
from callbench.types.messages import Message, ModelTurn, ToolCall

NAMES = {"weather.get", "add"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '<tool_call>{"name": "weather.get", "arguments": {"city": "Paris"}}</tool_call>',
            [("weather.get", {"city": "Paris"})],
        ),
        (
            (
                '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>\n<tool_call>{"name": "add", '
                '"arguments": {"a": 2}}</tool_call>'
            ),
            [("add", {"a": 1}), ("add", {"a": 2})],
        ),
        ('{"name": "add", "arguments": "{\\"a\\": 1}"}', [("add", {"a": 1})]),
        (
            (
                '[{"name": "add", "parameters": {"a": 1}}, '
                '{"function": {"name": "weather.get", "arguments": {}}}]'
            ),
            [("add", {"a": 1}), ("weather.get", {})],
        ),
        ('{"tool_calls": [{"name": "add", "arguments": {"a": 3}}]}', [("add", {"a": 3})]),
        ('Calling now:\n```json\n{"name": "add", "arguments": {"a": 4}}\n```', [("add", {"a": 4})]),
        (
            '[weather.get(city="Oslo"), add(a=1, b=[2, 3])]',
            [("weather.get", {"city": "Oslo"}), ("add", {"a": 1, "b": [2, 3]})],
        ),
        ("add(a=-1.5)", [("add", {"a": -1.5})]),
    ],
)
def test_formats_are_read(text: str, expected: list[tuple[str, dict[str, object]]]) -> None:
    parsed = parse_text_calls(text, NAMES)
    assert [(c.name, c.arguments) for c in parsed.calls] == expected
    assert parsed.format_error is None and all(c.parse_error is None for c in parsed.calls)


@pytest.mark.parametrize("text", ["The weather is fine.", "print(x) is how you print", "42"])
def test_prose_is_an_answer(text: str) -> None:
    parsed = parse_text_calls(text, NAMES)
    assert parsed.calls == [] and parsed.format_error is None and parsed.text == text


@pytest.mark.parametrize("text", ['{"name": "add", "arguments": {"a": ', "[add(a=1), oops", "add(a=1"])
def test_unreadable_call_attempt_is_a_format_error(text: str) -> None:
    parsed = parse_text_calls(text, NAMES)
    assert parsed.calls == [] and parsed.format_error


def test_malformed_block_keeps_the_call_with_parse_error() -> None:
    parsed = parse_text_calls('<tool_call>{"name": "add", "arguments": {"a": }</tool_call>', NAMES)
    assert parsed.calls[0].name == "add" and parsed.calls[0].arguments is None
    assert "malformed JSON" in (parsed.calls[0].parse_error or "")


def test_python_positional_and_non_literal_arguments_are_parse_errors() -> None:
    calls = parse_text_calls("[add(1), weather.get(city=x)]", NAMES).calls
    assert [c.name for c in calls] == ["add", "weather.get"]
    assert "positional" in (calls[0].parse_error or "") and "not a literal" in (calls[1].parse_error or "")


def test_history_becomes_text_turns() -> None:
    call = ToolCall(id="c1", name="weather.get", arguments_raw='{"city":"Rome"}', arguments={"city": "Rome"})
    history = conversation() + [Message.assistant(ModelTurn(tool_calls=[call])), Message.tool(call, "sunny")]
    out = to_text_messages(history, [WEATHER])
    assert [m.role for m in out] == ["system", "user", "assistant", "user"]
    assert "weather.get" in out[0].content and "You call tools." in out[0].content
    assert '"city": "Rome"' in out[2].content and "sunny" in out[3].content and not out[2].tool_calls


def _ask(text: str) -> tuple[ModelTurn, dict[str, object]]:
    with ProtocolServer(responder=lambda api, body: Turn(text=text)) as server:
        provider = make_provider(f"openai:scripted@{server.url}")

        async def go() -> ModelTurn:
            try:
                return await provider.generate(conversation(), [WEATHER], SETTINGS)
            finally:
                await provider.aclose()

        turn = asyncio.run(go())
        return turn, server.requests[0][1]


def test_end_to_end_through_openai_protocol() -> None:
    turn, body = _ask('<tool_call>{"name": "weather.get", "arguments": {"city": "Paris"}}</tool_call>')
    assert "tools" not in body and "weather.get" in body["messages"][0]["content"]  # type: ignore[index]
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("weather.get", {"city": "Paris"})]


def test_end_to_end_unparseable_output_is_a_scored_format_failure() -> None:
    turn, _ = _ask('{"name": "weather.get", "arguments": {"city": ')
    assert turn.tool_calls == [] and turn.finish_reason == FORMAT_ERROR


def test_native_calls_from_the_inner_model_are_kept() -> None:
    call = ToolCall(id="n1", name="add", arguments={"a": 1}, arguments_raw='{"a": 1}')
    from callbench.providers.prompt_mode import read_turn

    assert read_turn(ModelTurn(text="[add(a=2)]", tool_calls=[call]), [WEATHER]).tool_calls == [call]


def test_prompt_needs_an_inner_model_string() -> None:
    from callbench.errors import ConfigError

    with pytest.raises(ConfigError, match="prompt:<provider>:<model>"):
        make_provider("")
