"""Requests shaped so that the servers users run accept them: string content beside tool calls, the
forced-tool choice, context-overflow codes, and the serving-stack presets with their flags."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from chat_loop import CLOCK, tool_loop
from protocol_server import ProtocolServer
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.errors import FatalProviderError, TransientProviderError
from callbench.providers.model import Model, ModelOptions
from callbench.providers.openai_compat import build_request, make_provider, provider_from_spec
from callbench.providers.presets import PRESETS, Quirks, get_preset
from callbench.providers.wire import ContextLengthError, Endpoint, error_for_status
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
WHERE = Endpoint("llamacpp", "m", "http://127.0.0.1:8080/v1", None)
CALL = ToolCall(id="c1", name="weather.get", arguments_raw='{"city": "Oslo"}', arguments={"city": "Oslo"})


def assistant_message(turn: ModelTurn, quirks: Quirks | None = None) -> dict[str, object]:
    history = [*conversation(), Message.assistant(turn), Message.tool(CALL, "{}")]
    body, _ = build_request("m", history, [WEATHER], SETTINGS, quirks)
    return body["messages"][2]


def test_an_assistant_turn_with_calls_carries_string_content() -> None:
    assert assistant_message(ModelTurn(tool_calls=[CALL]))["content"] == ""
    assert assistant_message(ModelTurn(text="Let me look.", tool_calls=[CALL]))["content"] == "Let me look."
    assert assistant_message(ModelTurn(text="plain answer"))["content"] == "plain answer"
    # Only where a preset (or ?null_content=1) asks for it, and only when there is no text.
    assert (
        assistant_message(ModelTurn(tool_calls=[CALL]), Quirks(null_tool_call_content=True))["content"]
        is None
    )
    with_text = assistant_message(ModelTurn(text="t", tool_calls=[CALL]), Quirks(null_tool_call_content=True))
    assert with_text["content"] == "t"


def test_no_preset_sends_null_content() -> None:
    assert not [name for name, p in PRESETS.items() if p.quirks.null_tool_call_content]


def test_a_server_that_refuses_null_content_accepts_the_tool_loop(server: ProtocolServer) -> None:
    server.refuse_null_content = True
    turns = tool_loop(make_provider(f"m@{server.url}"), SETTINGS, tools=[WEATHER])
    assert [bool(t.tool_calls) for t in turns] == [True, False] and turns[1].text == "done"
    assert server.requests[1][1]["messages"][2]["content"] == ""


def test_null_content_against_that_server_is_an_error_naming_its_message_after_retries(
    server: ProtocolServer, fast_options: ModelOptions
) -> None:
    # The server mode refuses for real: with null content the loop's second request fails, is
    # retried as the 500 it is, and ends as an error (a record), never a scored answer.
    server.refuse_null_content = True
    model = Model(make_provider(f"m@{server.url}?null_content=1"), SETTINGS, fast_options)

    async def loop() -> None:
        try:
            first = await model.generate(conversation(), [WEATHER])
            history = [*conversation(), Message.assistant(first), Message.tool(first.tool_calls[0], "{}")]
            await model.generate(history, [WEATHER])
        finally:
            await model.aclose()

    with pytest.raises(
        TransientProviderError, match=r"HTTP 500: .*Input should be a valid string \(gave up after 4 attempt"
    ):
        asyncio.run(loop())
    assert server.requests[1][1]["messages"][2]["content"] is None


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("weather.get", {"type": "function", "function": {"name": "weather_get"}}),  # the wire name
        ("not_offered", "auto"),
    ],
)
def test_tool_choice_shapes(choice: str, expected: object) -> None:
    body, _ = build_request("m", conversation(), [WEATHER, CLOCK], GenerationSettings(tool_choice=choice))
    assert body["tool_choice"] == expected


def test_required_where_refused_and_no_tools_at_all() -> None:
    body, _ = build_request(
        "m",
        conversation(),
        [WEATHER],
        GenerationSettings(tool_choice="required"),
        Quirks(tool_choice_required=False),
    )
    assert body["tool_choice"] == "auto"
    bare, _ = build_request("m", conversation(), [], GenerationSettings(tool_choice="weather.get"))
    assert "tool_choice" not in bare and "tools" not in bare and "parallel_tool_calls" not in bare


def test_parallel_tool_calls_off_is_sent() -> None:
    body, _ = build_request("m", conversation(), [WEATHER], GenerationSettings(parallel_tool_calls=False))
    assert body["parallel_tool_calls"] is False


@pytest.mark.parametrize(
    "error",
    [
        {"message": "Please reduce the length of the messages.", "code": "context_length_exceeded"},
        {
            "message": "request (9000 tokens) exceeds the available context size (4096 tokens)",
            "type": "exceed_context_size_error",
            "code": 400,
        },
        {"message": "This model's maximum context length is 4096 tokens. However, you requested 5000"},
    ],
)
def test_context_overflow_by_code_or_message(error: dict[str, object]) -> None:
    assert isinstance(error_for_status(400, json.dumps({"error": error}), {}, WHERE), ContextLengthError)


def test_other_400s_stay_fatal() -> None:
    body = json.dumps({"error": {"message": "Unknown parameter: 'foo'", "code": "unknown_parameter"}})
    assert isinstance(error_for_status(400, body, {}, WHERE), FatalProviderError)
    # A 500 is a server fault even when its text mentions context.
    busy = json.dumps({"error": {"message": "context size scheduler busy"}})
    assert type(error_for_status(500, busy, {}, WHERE)) is TransientProviderError


# -- presets -------------------------------------------------------------------------------------


SERVING_FLAGS = {
    "vllm": ["--enable-auto-tool-choice", "--tool-call-parser"],
    "sglang": ["--tool-call-parser"],
    "llamacpp": ["--jinja"],
    "llamacpp-python": ["--chat_format"],
    "ollama": ["ollama pull"],
    "lmstudio": ["lms"],
}


@pytest.mark.parametrize(("name", "flags"), sorted(SERVING_FLAGS.items()))
def test_local_presets_name_the_server_flags_they_need(name: str, flags: list[str]) -> None:
    preset = get_preset(name)
    assert preset.base_url.startswith("http://127.0.0.1:") and not preset.key_required
    assert all(flag in preset.note for flag in flags)


def test_vendor_presets() -> None:
    assert get_preset("moonshot").base_url == "https://api.moonshot.ai/v1"
    assert get_preset("moonshot").key_env == "MOONSHOT_API_KEY"
    assert get_preset("deepseek").quirks.reasoning_replay == "reasoning_content"


def test_every_preset_is_in_the_docs_table_with_its_flags() -> None:
    docs = DOCS.read_text()
    table = docs[docs.index("| preset | default base URL") :]
    for name, preset in PRESETS.items():
        row = re.search(rf"^\| `{re.escape(name)}` \|.*$", table, re.MULTILINE)
        assert row, f"docs/providers.md has no table row for preset {name}"
        if preset.base_url:
            assert preset.base_url in row.group(), name
        for flag in SERVING_FLAGS.get(name, []):
            assert flag in docs, flag
    replay = docs[docs.index("| family |") :]
    for name, preset in PRESETS.items():
        if preset.quirks.reasoning_replay != "none":
            assert re.search(rf"`{re.escape(name)}`.*`{preset.quirks.reasoning_replay}`", replay), name


def test_each_preset_builds_a_provider_with_its_quirks(monkeypatch: pytest.MonkeyPatch) -> None:
    for preset in PRESETS.values():
        if preset.key_env:
            monkeypatch.setenv(preset.key_env, "test-key-0123456789")
        url = "" if preset.base_url else "@https://res.openai.azure.com/openai/v1"
        provider = provider_from_spec(f"m{url}", preset)
        recorded = provider.describe()["quirks"].get("reasoning_replay", "none")  # absent: the default
        assert recorded == preset.quirks.reasoning_replay
