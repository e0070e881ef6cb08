"""Native mode: tool calls a server left in the answer's text, in each known serialisation.

Detection must be strict: a flag says "the serving stack failed", so prose that mentions a tool,
JSON about something else, JSON naming a tool that was not offered and broken call text are not
flagged.
"""

from __future__ import annotations

import pytest

from callbench.providers.text_calls import TEXT_CALL_FORMATS, detect_text_calls

NAMES = {"weather.get", "add", "get_weather"}


@pytest.mark.parametrize(
    ("text", "fmt", "expected", "prose"),
    [
        (
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
            "hermes",
            [("get_weather", {"city": "Paris"})],
            "",
        ),
        (
            'Let me check. <tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>\n'
            '<tool_call>{"name": "add", "arguments": "{\\"a\\": 2}"}</tool_call><|im_end|>',
            "hermes",
            [("add", {"a": 1}), ("add", {"a": 2})],
            "Let me check.",
        ),
        (
            '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}}, '
            '{"name": "add", "arguments": {}}]',
            "mistral",
            [("get_weather", {"city": "Oslo"}), ("add", {})],
            "",
        ),
        (
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}'
            '[TOOL_CALLS]add[CALL_ID]a1B2c3D4e[ARGS]{"a": 3}</s>',
            "mistral",
            [("get_weather", {"city": "Rome"}), ("add", {"a": 3})],
            "",
        ),
        (
            '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Lima; Peru"}}; '
            '{"name": "add", "parameters": {"a": 1}}<|eom_id|>',
            "llama",
            [("get_weather", {"city": "Lima; Peru"}), ("add", {"a": 1})],
            "",
        ),
        (
            '{"name": "get_weather", "parameters": {"city": "Paris"}}',
            "llama",
            [("get_weather", {"city": "Paris"})],
            "",
        ),
        (
            "<|channel|>analysis<|message|>User wants weather.<|end|><|start|>assistant<|channel|>commentary "
            'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
            "harmony",
            [("get_weather", {"city": "Paris"})],
            "User wants weather.",
        ),
        (
            'commentary to=functions.add json<|message|>{"a": 2}',
            "harmony",
            [("add", {"a": 2})],
            "",
        ),
        (
            '{"name": "weather.get", "arguments": {"city": "Paris"}}',
            "json",
            [("weather.get", {"city": "Paris"})],
            "",
        ),
        (
            '```json\n[{"type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 1}"}}]\n```',
            "json",
            [("add", {"a": 1})],
            "",
        ),
        ('{"tool_calls": [{"name": "add", "arguments": {"a": 5}}]}', "json", [("add", {"a": 5})], ""),
        (
            '[get_weather(city="Paris"), add(a=1)]',
            "pythonic",
            [("get_weather", {"city": "Paris"}), ("add", {"a": 1})],
            "",
        ),
    ],
)
def test_each_serialisation_is_flagged_and_read(
    text: str, fmt: str, expected: list[tuple[str, dict[str, object]]], prose: str
) -> None:
    found = detect_text_calls(text, NAMES, id_prefix="call_r2")
    assert found is not None and found.format == fmt and fmt in TEXT_CALL_FORMATS
    assert [(c.name, c.arguments) for c in found.calls] == expected
    assert all(c.recovered_from == fmt and c.parse_error is None for c in found.calls)
    assert [c.id for c in found.calls] == [f"call_r2_{i}" for i in range(len(expected))]
    assert found.text == prose


@pytest.mark.parametrize(
    "text",
    [
        # prose that mentions a tool, even with call-like syntax
        "I would call get_weather with city Paris.",
        'You can use get_weather(city="Paris") to find out, or add(a=1).',
        "The weather.get tool says it is sunny; add is not needed.",
        'The result is {"name": "get_weather", "arguments": {}} as you can see.',
        # JSON that is not a call, or names no offered tool
        '{"name": "delete_everything", "arguments": {}}',
        '[{"name": "add", "arguments": {}}, {"name": "rm_rf", "arguments": {}}]',
        '{"name": "get_weather", "arguments": {"city": "Paris"}, "answer": 3}',
        '{"city": "Paris", "temp": 20}',
        '{"name": "Paris"}',
        "[1, 2, 3]",
        "[]",
        "{}",
        "[print(x)]",
        "[add(1)]",
        # broken call text: the model's fault, which a working parser would not read either
        '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "x"}}',
        '<tool_call>{"name": "add", "arguments": {}}</tool_call><tool_call>oops</tool_call>',
        '<tool_call>{"arguments": {"a": 1}}</tool_call>',
        '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}',
        '[TOOL_CALLS]add[ARGS]{"a": ',
        "<|python_tag|>print('hello')",
        'to=functions.add json<|message|>{"a": ',
        '{"name": "add", "arguments": "not json"}',
        '{"name": "add", "arguments": [1, 2]}',
        "",
        "   ",
    ],
)
def test_not_a_call_the_server_missed(text: str) -> None:
    assert detect_text_calls(text, NAMES) is None


def test_nothing_is_flagged_without_offered_tools() -> None:
    assert detect_text_calls('{"name": "add", "arguments": {}}', set()) is None


def test_tagged_formats_need_no_offered_name() -> None:
    # The markers are unambiguous; a working parser would have returned the call (to an unknown tool).
    found = detect_text_calls('<tool_call>{"name": "nope", "arguments": {}}</tool_call>', NAMES)
    assert found is not None and found.calls[0].name == "nope"
