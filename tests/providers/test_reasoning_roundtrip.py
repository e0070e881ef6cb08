"""Reasoning across tool rounds on Chat Completions: the per-family replay field, and Gemini's
thought signatures, each against a protocol server that refuses the loop when they are dropped."""

from __future__ import annotations

import pytest
from chat_loop import CLOCK, tool_loop, two_calls_then_text
from protocol_server import ProtocolServer
from provider_helpers import SETTINGS, WEATHER, conversation, openai_body

from callbench.errors import ConfigError, FatalProviderError
from callbench.providers.openai_compat import (
    OpenAIProvider,
    build_request,
    parse_response,
    provider_from_spec,
)
from callbench.providers.presets import PRESETS, Quirks, get_preset
from callbench.types.messages import Message, ModelTurn, ToolCall

FAMILIES = {
    "deepseek": "reasoning_content",
    "moonshot": "reasoning_content",
    "llamacpp": "reasoning_content",
    "sglang": "reasoning_content",
    "vllm": "reasoning",
    "ollama": "reasoning",
}
"""The field each serving family reads a turn's reasoning back from (docs/providers.md)."""


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for preset in PRESETS.values():
        if preset.key_env:
            monkeypatch.setenv(preset.key_env, "test-key-0123456789")
        if preset.base_url_env:
            monkeypatch.delenv(preset.base_url_env, raising=False)


def provider(name: str, server: ProtocolServer, options: str = "") -> OpenAIProvider:
    return provider_from_spec(f"m@{server.url}{options}", get_preset(name))


def assistant_turns(server: ProtocolServer) -> list[dict[str, object]]:
    """The assistant messages of the last request the server received."""
    return [m for m in server.requests[-1][1]["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize(("name", "field"), sorted(FAMILIES.items()))
def test_each_family_gets_its_reasoning_back_in_its_own_field(
    server: ProtocolServer, name: str, field: str
) -> None:
    server.reasoning_field = field
    turns = tool_loop(provider(name, server), SETTINGS, rounds=3)
    assert [bool(t.tool_calls) for t in turns] == [True, False]  # the loop ran to its text answer
    assert turns[0].reasoning == "thought 1: which tool?"  # recorded from either field
    (sent,) = assistant_turns(server)
    assert sent[field] == turns[0].reasoning
    other = "reasoning" if field == "reasoning_content" else "reasoning_content"
    assert other not in sent  # one field, the family's: never both


@pytest.mark.parametrize("name", ["deepseek", "moonshot"])
def test_the_quirk_matters_a_loop_without_the_reasoning_is_refused(server: ProtocolServer, name: str) -> None:
    server.reasoning_field = "reasoning_content"
    with pytest.raises(FatalProviderError, match="must be passed back"):
        tool_loop(provider(name, server, "?reasoning_replay=none"), SETTINGS)
    assert "reasoning_content" not in assistant_turns(server)[0]


def test_the_wrong_field_is_refused_too(server: ProtocolServer) -> None:
    # vLLM's field (reasoning) sent to a server that reads reasoning_content only.
    server.reasoning_field = "reasoning_content"
    with pytest.raises(FatalProviderError, match="reasoning_content of an assistant message"):
        tool_loop(provider("vllm", server), SETTINGS)
    assert assistant_turns(server)[0]["reasoning"] == "thought 1: which tool?"


@pytest.mark.parametrize("name", sorted(set(PRESETS) - set(FAMILIES)))
def test_other_presets_send_no_reasoning_back(name: str) -> None:
    # OpenAI returns no reasoning text on Chat Completions; hosted routers differ per model.
    call = ToolCall(id="c1", name="weather.get", arguments_raw="{}", arguments={})
    history = [*conversation(), Message.assistant(ModelTurn(tool_calls=[call], reasoning="r"))]
    body, _ = build_request("m", history, [WEATHER], SETTINGS, get_preset(name).quirks)
    sent = body["messages"][-1]
    assert "reasoning" not in sent and "reasoning_content" not in sent


def test_option_overrides_the_preset_and_bad_values_are_one_line(server: ProtocolServer) -> None:
    server.reasoning_field = "reasoning_content"
    tool_loop(provider("vllm", server, "?reasoning_replay=reasoning_content"), SETTINGS)
    assert "reasoning_content" in assistant_turns(server)[0]
    with pytest.raises(
        ConfigError, match=r"reasoning_replay='thoughts': expected one of none, reasoning_content"
    ):
        provider("vllm", server, "?reasoning_replay=thoughts")


def test_no_reasoning_no_field_and_never_on_other_roles() -> None:
    call = ToolCall(id="c1", name="weather.get", arguments_raw="{}", arguments={})
    history = [
        Message(role="user", content="hi", reasoning="should never be sent"),
        Message.assistant(ModelTurn(tool_calls=[call])),  # no reasoning: no empty field
        Message.tool(call, "{}"),
        Message.assistant(ModelTurn(text="done", reasoning="final thought")),
    ]
    body, _ = build_request("m", history, [WEATHER], SETTINGS, Quirks(reasoning_replay="reasoning_content"))
    user, first, _, last = body["messages"]
    assert "reasoning_content" not in user and "reasoning_content" not in first
    assert last["reasoning_content"] == "final thought"  # servers that do not want it ignore it


def test_reasoning_text_and_reasoning_tokens_are_kept_apart() -> None:
    _, names = build_request("m", conversation(), [WEATHER], SETTINGS)
    usage = {"prompt_tokens": 5, "completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 7}}
    with_text = parse_response(openai_body({"content": "x", "reasoning": "step 1"}, usage), names)
    assert with_text.reasoning == "step 1" and with_text.usage is not None
    assert with_text.usage.reasoning_tokens == 7 and with_text.usage.output_tokens == 9
    # OpenAI's own reasoning models count reasoning tokens but return no reasoning text.
    hidden = parse_response(openai_body({"content": "x"}, usage), names)
    assert hidden.reasoning is None and hidden.usage is not None and hidden.usage.reasoning_tokens == 7


# -- Gemini thought signatures --------------------------------------------------------------------


def gemini(server: ProtocolServer) -> OpenAIProvider:
    return provider("gemini", server)


def test_gemini_preset() -> None:
    preset = get_preset("gemini")
    assert preset.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert preset.key_env == "GEMINI_API_KEY" and preset.key_required


def test_thought_signatures_are_kept_on_their_calls_and_sent_back_unchanged() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.thought_signatures = True
        turns = tool_loop(gemini(server), SETTINGS, tools=[WEATHER, CLOCK])
        first, second = turns[0].tool_calls
        # Gemini signs the first call of a turn only: the second has nothing to carry.
        assert first.provider_data == {
            "extra_content": {"google": {"thought_signature": f"sig-1-{first.id}"}}
        }
        assert second.provider_data is None
        assert [c.name for c in turns[0].tool_calls] == ["weather.get", "clock"]
        sent = assistant_turns(server)[0]["tool_calls"]
        assert sent[0]["extra_content"] == first.provider_data["extra_content"]
        assert "extra_content" not in sent[1]
        assert turns[1].text == "done"


def test_a_loop_that_drops_the_signature_is_refused() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.thought_signatures = True
        with pytest.raises(FatalProviderError, match="thought_signature"):
            tool_loop(gemini(server), SETTINGS, tools=[WEATHER, CLOCK], forget=True)


def test_a_changed_signature_is_refused() -> None:
    with ProtocolServer(responder=two_calls_then_text) as server:
        server.thought_signatures = True
        first = tool_loop(gemini(server), SETTINGS, rounds=1, tools=[WEATHER, CLOCK])[0]
        calls = list(first.tool_calls)
        calls[0] = calls[0].model_copy(
            update={"provider_data": {"extra_content": {"google": {"thought_signature": "forged"}}}}
        )
        history = [
            *conversation(),
            Message.assistant(first.model_copy(update={"tool_calls": calls})),
            *(Message.tool(c, "{}") for c in calls),
        ]
        import asyncio

        p = gemini(server)
        with pytest.raises(FatalProviderError, match="thought_signature"):
            asyncio.run(p.generate(history, [WEATHER, CLOCK], SETTINGS))


def test_provider_data_survives_the_record_round_trip() -> None:
    # The turn is cached and recorded as JSON; the signature must come back from there intact.
    call = ToolCall(
        id="c", name="t", provider_data={"extra_content": {"google": {"thought_signature": "s=="}}}
    )
    again = ModelTurn.model_validate_json(ModelTurn(tool_calls=[call]).model_dump_json())
    assert again.tool_calls[0].provider_data == call.provider_data
    plain = ModelTurn(tool_calls=[ToolCall(id="c", name="t")]).model_dump()
    assert "provider_data" not in plain["tool_calls"][0]  # absent when unset: old records unchanged
