"""The OpenAI Responses API provider (``openai-responses:``): request and response shapes, reasoning
items carried across tool rounds unchanged, streaming, errors, and careless servers.

The live tests talk to ``responses_server.ResponsesServer`` on 127.0.0.1, which refuses what the
documented API refuses (so a wrong request fails the test with the server's own 400 line).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from gold_responder import GoldResponder
from protocol_server import ProtocolServer, Turn
from provider_helpers import SETTINGS, WEATHER, conversation
from responses_server import Fault, Reply, ResponsesServer, by_round, model_rounds

import callbench
from callbench.errors import (
    ConfigError,
    FatalProviderError,
    RateLimitedError,
    TransientProviderError,
    UserError,
)
from callbench.providers.model import Model, ModelOptions, RetryPolicy, make_provider
from callbench.providers.openai_responses import (
    CHAT_BODY_MESSAGE,
    OpenAIResponsesProvider,
    ResponseFailedError,
    ResponsesOptions,
    SseDecoder,
    StreamAssembler,
    assistant_items,
    build_request,
    http_error,
    parse_response,
)
from callbench.providers.wire import ContextLengthError, Endpoint, ToolNameMap
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
LOOKUP = ToolContract(
    name="kb.lookup",
    description="Look a term up.",
    parameters={"type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]},
)
WHERE = Endpoint("openai-responses", "gpt-x", "http://127.0.0.1:1/v1", "OPENAI_API_KEY")
REASONING = GenerationSettings(max_tokens=256, reasoning_effort="low")


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def rserver() -> Iterator[ResponsesServer]:
    with ResponsesServer(reasoning_model=True) as srv:
        yield srv


def provider(server: ResponsesServer, options: str = "") -> OpenAIResponsesProvider:
    made = make_provider(f"openai-responses:gpt-x@{server.url}{options}")
    assert isinstance(made, OpenAIResponsesProvider)
    return made


async def loop(
    prov: OpenAIResponsesProvider,
    settings: GenerationSettings,
    tools: list[ToolContract] | None = None,
    rounds: int = 3,
) -> list[ModelTurn]:
    """callbench's tool loop in miniature: answer every call with a result, stop at a text answer."""
    messages = conversation()
    tools = [WEATHER] if tools is None else tools
    turns = []
    try:
        for _ in range(rounds):
            turn = await prov.generate(messages, tools, settings)
            turns.append(turn)
            messages.append(Message.assistant(turn))
            if not turn.tool_calls:
                break
            messages += [Message.tool(c, json.dumps({"ok": c.arguments})) for c in turn.tool_calls]
    finally:
        await prov.aclose()
    return turns


def response(output: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": output,
        **fields,
    }


def fc(
    call_id: str | None, name: str = "weather_get", arguments: str = '{"city": "Paris"}', **extra: Any
) -> Any:
    item = {"type": "function_call", "id": f"fc_{call_id}", "name": name, "arguments": arguments, **extra}
    if call_id is not None:
        item["call_id"] = call_id
    return item


def rs(n: int, text: str = "") -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": text}] if text else []
    return {"type": "reasoning", "id": f"rs_{n}", "summary": summary, "encrypted_content": f"enc+/{n}=="}


def msg(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


# -- request --------------------------------------------------------------------------------------


def test_request_shape_without_reasoning() -> None:
    body, names = build_request("gpt-x", conversation(), [WEATHER], SETTINGS)
    assert body["instructions"] == "You call tools."
    assert body["input"] == [{"type": "message", "role": "user", "content": "Weather in Paris?"}]
    assert body["max_output_tokens"] == 256 and body["temperature"] == 0.0
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["stream"] is False and "reasoning" not in body
    assert "seed" not in body and "messages" not in body  # the Responses API takes no seed
    (tool,) = body["tools"]
    assert tool["type"] == "function" and tool["name"] == "weather_get" and "function" not in tool
    assert tool["strict"] is False  # left out, the API would make the tool strict
    assert tool["parameters"]["required"] == ["city"]
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True
    assert names.original("weather_get") == "weather.get"


def test_reasoning_effort_sends_reasoning_and_drops_temperature() -> None:
    body, _ = build_request("gpt-x", conversation(), [WEATHER], REASONING)
    assert body["reasoning"] == {"effort": "low", "summary": "auto"} and "temperature" not in body
    body, _ = build_request("gpt-x", conversation(), [], REASONING, ResponsesOptions(reasoning_summary=None))
    assert body["reasoning"] == {"effort": "low"}
    assert "tools" not in body and "tool_choice" not in body and "parallel_tool_calls" not in body
    body, _ = build_request("gpt-x", conversation(), [], SETTINGS, ResponsesOptions(omit_temperature=True))
    assert "temperature" not in body and "reasoning" not in body


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ("weather.get", {"type": "function", "name": "weather_get"}),
    ],
)
def test_tool_choice_forms(choice: str, wire: object, rserver: ResponsesServer) -> None:
    settings = GenerationSettings(tool_choice=choice, parallel_tool_calls=False)
    body, _ = build_request("gpt-x", conversation(), [WEATHER], settings)
    assert body["tool_choice"] == wire and body["parallel_tool_calls"] is False
    run(loop(provider(rserver), settings))
    assert rserver.rejections == [] and rserver.requests[-1][1]["tool_choice"] == wire


def test_tool_choice_naming_no_offered_tool_is_refused_by_the_server(rserver: ResponsesServer) -> None:
    # The server check is real: a forced tool that is not offered is a 400, a fatal one-line error.
    with pytest.raises(FatalProviderError, match="tool_choice"):
        run(loop(provider(rserver), GenerationSettings(tool_choice="nope")))


def test_strict_on_makes_the_schema_strict_and_strips_nulls_back(rserver: ResponsesServer) -> None:
    body, names = build_request("gpt-x", conversation(), [WEATHER], SETTINGS, ResponsesOptions(strict=True))
    tool = body["tools"][0]
    assert tool["strict"] is True and tool["parameters"]["required"] == ["city", "unit"]
    assert tool["parameters"]["properties"]["unit"]["type"] == ["string", "null"]
    data = response([fc("c1", arguments='{"city": "Paris", "unit": null}')])
    assert parse_response(data, names, [WEATHER], strict=True).tool_calls[0].arguments == {"city": "Paris"}
    rserver.responder = by_round(
        Reply(calls=[("weather_get", '{"city": "Paris", "unit": null}')]), Reply(text="ok")
    )
    turns = run(loop(provider(rserver, "?strict=1"), SETTINGS))
    assert turns[0].tool_calls[0].arguments == {"city": "Paris"} and rserver.rejections == []


def test_strict_flag_is_checked_by_the_server() -> None:
    # A strict tool whose schema keeps an optional property is a 400: proof that ?strict=1 matters.
    body, _ = build_request("gpt-x", conversation(), [WEATHER], SETTINGS)
    body["tools"][0]["strict"] = True
    server = ResponsesServer()
    with pytest.raises(Exception, match="required"):
        server.validate(body)
    del body["tools"][0]["strict"]  # the API's default is strict
    with pytest.raises(Exception, match="required"):
        server.validate(body)


def test_history_items_and_tool_results() -> None:
    call = ToolCall(id="c9", name="weather.get", arguments_raw='{"city":"Oslo"}', arguments={"city": "Oslo"})
    history = [
        Message.system("sys"),
        Message.user("q"),
        Message.assistant(ModelTurn(text="Let me look.", tool_calls=[call])),
        Message.tool(call, '{"t": 3}'),
        Message.system("late note"),
    ]
    body, _ = build_request("gpt-x", history, [WEATHER], SETTINGS)
    assert body["instructions"] == "sys"
    assert body["input"][1:] == [
        {"type": "message", "role": "assistant", "content": "Let me look."},
        {"type": "function_call", "call_id": "c9", "name": "weather_get", "arguments": '{"city":"Oslo"}'},
        {"type": "function_call_output", "call_id": "c9", "output": '{"t": 3}'},
        {"type": "message", "role": "developer", "content": "late note"},
    ]


@pytest.mark.parametrize(
    "output",
    [
        [rs(1), fc("a")],
        [rs(1), rs(2), fc("a"), fc("b")],
        [rs(1), fc("a"), rs(2), fc("b")],
        [rs(1), msg("hi"), fc("a")],
        [rs(1), msg("final")],
        [rs(1), fc("a"), rs(2), msg("after")],
    ],
    ids=["one", "two-first", "interleaved", "text-then-call", "final-text", "reasoning-after-call"],
)
def test_reasoning_items_go_back_unchanged_before_what_they_preceded(output: list[dict[str, Any]]) -> None:
    names = ToolNameMap.build(["weather.get"])
    original = copy.deepcopy(output)
    turn = parse_response(response(output), names)
    # Through a record and back: what the cache and the records keep must still be sendable.
    turn = ModelTurn.model_validate_json(turn.model_dump_json())
    items = assistant_items(Message.assistant(turn), names)
    sent_reasoning = [i for i in items if i["type"] == "reasoning"]
    assert sent_reasoning == [i for i in original if i["type"] == "reasoning"]
    for position, item in enumerate(items):
        if item["type"] != "reasoning":
            continue
        follower = original[original.index(item) + 1]
        after = items[position + 1]
        if follower["type"] == "message":
            assert after["type"] == "message" and after["role"] == "assistant"
        else:
            assert after.get("id") == follower["id"]
    assert [i.get("call_id") for i in items if i["type"] == "function_call"] == [
        i["call_id"] for i in original if i["type"] == "function_call"
    ]


def test_reasoning_with_nothing_after_it_is_not_sent() -> None:
    names = ToolNameMap.build([])
    turn = parse_response(
        response([rs(1)], status="incomplete", incomplete_details={"reason": "max_output_tokens"}), names
    )
    assert turn.reasoning_items and turn.finish_reason == "length"
    assert assistant_items(Message.assistant(turn), names) == []


# -- response ----------------------------------------------------------------------------------


def test_parse_usage_reasoning_model_and_finish() -> None:
    names = ToolNameMap.build(["weather.get"])
    usage = {
        "input_tokens": 30,
        "input_tokens_details": {"cached_tokens": 12},
        "output_tokens": 8,
        "output_tokens_details": {"reasoning_tokens": 5},
    }
    turn = parse_response(
        response([rs(1, "think A"), rs(2, "think B"), fc("c1")], usage=usage, model="gpt-x-1"), names
    )
    assert turn.usage is not None
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (30, 8)
    assert (turn.usage.reasoning_tokens, turn.usage.cached_tokens) == (5, 12)
    assert turn.reasoning == "think A\n\nthink B" and turn.model == "gpt-x-1"
    assert turn.finish_reason == "tool_calls" and turn.tool_calls[0].name == "weather.get"
    assert turn.tool_calls[0].provider_data == {"item_id": "fc_c1", "reasoning_before": 2}
    assert turn.reasoning_items == [rs(1, "think A"), rs(2, "think B")]
    assert parse_response(response([msg("hello")]), names).finish_reason == "stop"


def test_refusal_is_reported_as_a_refusal() -> None:
    refusal = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't help."}],
    }
    turn = parse_response(response([refusal]), ToolNameMap.build([]))
    assert turn.text == "I can't help." and turn.finish_reason == "refusal" and not turn.tool_calls


def test_incomplete_for_max_output_tokens_is_length() -> None:
    data = response([msg("partial")], status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    assert parse_response(data, ToolNameMap.build([])).finish_reason == "length"
    data["incomplete_details"] = {"reason": "content_filter"}
    assert parse_response(data, ToolNameMap.build([])).finish_reason == "content_filter"


@pytest.mark.parametrize(
    ("arguments", "parsed", "error"),
    [
        ('{"city": "Par', None, "malformed JSON"),
        ("[1]", None, "not an object"),
        ("", {}, None),
        (None, {}, None),
        (17, None, "not a JSON object"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_kept_not_raised(
    arguments: Any, parsed: Any, error: Any
) -> None:
    item = fc("c1")
    item["arguments"] = arguments
    call = parse_response(response([item]), ToolNameMap.build(["weather.get"])).tool_calls[0]
    assert call.arguments == parsed
    assert (error is None and call.parse_error is None) or error in (call.parse_error or "")


def test_careless_outputs() -> None:
    names = ToolNameMap.build(["weather.get"])
    # No call_id: a per-round id is made up, and the item id is still kept.
    turn = parse_response(response([fc(None), fc(None)]), names, id_prefix="call_r2")
    assert [c.id for c in turn.tool_calls] == ["call_r2_0", "call_r2_1"]
    # Repeated call ids are made distinct; junk items and unknown item types are skipped.
    turn = parse_response(response([fc("x"), "junk", {"type": "web_search_call"}, fc("x")]), names)
    assert [c.id for c in turn.tool_calls] == ["x", "x#dup2"]
    # Empty output: an empty answer, not a crash.
    empty = parse_response(response([]), names)
    assert (empty.text, empty.tool_calls, empty.finish_reason, empty.reasoning_items) == (
        "",
        [],
        "stop",
        None,
    )
    with pytest.raises(TransientProviderError, match="no output list"):
        parse_response({"id": "r", "status": "completed"}, names)


def test_a_chat_completions_body_is_one_fatal_line() -> None:
    body = {"id": "x", "object": "chat.completion", "choices": [{"message": {"content": "hi"}}]}
    with pytest.raises(FatalProviderError) as caught:
        parse_response(body, ToolNameMap.build([]))
    assert str(caught.value) == CHAT_BODY_MESSAGE and "\n" not in str(caught.value)
    assert "use openai:MODEL@URL" in str(caught.value)


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        ("context_length_exceeded", ContextLengthError),
        ("rate_limit_exceeded", RateLimitedError),
        ("server_error", TransientProviderError),
        (None, TransientProviderError),
        ("invalid_prompt", ResponseFailedError),
    ],
)
def test_failed_responses_map_by_code(code: str | None, error_type: type) -> None:
    data = {"status": "failed", "error": {"code": code, "message": "boom"}, "output": []}
    with pytest.raises(error_type) as caught:
        parse_response(data, ToolNameMap.build([]))
    assert type(caught.value) is error_type
    # An invalid prompt fails this case only: neither retried nor a reason to stop the run.
    assert not isinstance(caught.value, FatalProviderError)


# -- HTTP errors ------------------------------------------------------------------------------


def _err(message: str, code: str | None = None, param: str | None = None) -> str:
    return json.dumps(
        {"error": {"message": message, "type": "invalid_request_error", "code": code, "param": param}}
    )


def test_http_errors_map_like_the_other_providers() -> None:
    url = f"{WHERE.base_url}/responses"
    limited = http_error(429, _err("slow down", "rate_limit_exceeded"), {"retry-after": "3"}, WHERE, url)
    assert isinstance(limited, RateLimitedError) and limited.retry_after == 3.0
    assert type(http_error(503, "oops", {}, WHERE, url)) is TransientProviderError
    # Only the code says it is a context overflow (wire's wording check would miss this message).
    overflow = http_error(400, _err("Input over limit.", "context_length_exceeded", "input"), {}, WHERE, url)
    assert isinstance(overflow, ContextLengthError)
    missing = http_error(404, '{"detail": "Not Found"}', {}, WHERE, url)
    assert isinstance(missing, FatalProviderError) and "does not serve the Responses API" in str(missing)
    assert "openai:gpt-x@http://127.0.0.1:1/v1" in str(missing) and "\n" not in str(missing)
    model = http_error(
        404, _err("The model `gpt-x` does not exist", "model_not_found", "model"), {}, WHERE, url
    )
    assert isinstance(model, FatalProviderError) and "check the model name" in str(model)
    effort = http_error(400, _err("Unsupported value", None, "reasoning.effort"), {}, WHERE, url)
    assert isinstance(effort, FatalProviderError) and "--reasoning-effort" in str(effort)
    temperature = http_error(400, _err("Unsupported parameter", None, "temperature"), {}, WHERE, url)
    assert "?omit_temperature=1" in str(temperature)
    denied = http_error(401, _err("bad key"), {}, WHERE, url)
    assert isinstance(denied, FatalProviderError) and "OPENAI_API_KEY" in str(denied)


# -- the model string ------------------------------------------------------------------------


def test_model_string_key_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("CALLBENCH_KEYS_FILE", "/nonexistent/keys.toml")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_provider("openai-responses:gpt-5")
    local = make_provider("openai-responses:gpt-5@http://127.0.0.1:8000/v1")
    assert local.describe()["base_url"] == "http://127.0.0.1:8000/v1"
    assert local.connection_key() == make_provider("openai:gpt-5@http://127.0.0.1:8000/v1").connection_key()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1")
    assert make_provider("openai-responses:gpt-5").describe()["base_url"] == "http://127.0.0.1:9999/v1"
    with pytest.raises(UserError, match="unknown option"):
        make_provider("openai-responses:gpt-5?stict=1")
    with pytest.raises(ConfigError, match="reasoning_summary"):
        make_provider("openai-responses:gpt-5?reasoning_summary=verbose")
    options = make_provider(
        "openai-responses:gpt-5?reasoning_summary=concise&encrypted_reasoning=0"
    ).describe()
    assert (
        options["options"]["reasoning_summary"] == "concise" and not options["options"]["encrypted_reasoning"]
    )


# -- live: the tool loop -------------------------------------------------------------------------


def test_tool_loop_with_reasoning_sends_the_items_back_unchanged(rserver: ResponsesServer) -> None:
    rserver.responder = by_round(
        Reply(calls=[("weather_get", '{"city": "Paris"}')], reasoning=["look up Paris"]),
        Reply(calls=[("weather_get", '{"city": "Lyon"}')], reasoning=["now Lyon", "compare"]),
        Reply(text="Paris is warmer.", reasoning=["done"]),
    )
    turns = run(loop(provider(rserver), REASONING))
    assert rserver.rejections == []
    assert [t.finish_reason for t in turns] == ["tool_calls", "tool_calls", "stop"]
    assert turns[-1].text == "Paris is warmer." and turns[1].reasoning == "now Lyon\n\ncompare"
    # Round 2 got 1 item back, round 3 got 1 + 2 items back, each exactly as issued.
    assert rserver.returned_reasoning == 1 + 3
    last = rserver.requests[-1][1]["input"]
    sent = [i for i in last if i.get("type") == "reasoning"]
    assert sent == [rserver.issued_reasoning[i["id"]] for i in sent] and len(sent) == 3
    assert all(body["store"] is False for _, body, _ in rserver.requests)
    assert "temperature" not in rserver.requests[0][1]


def test_the_server_catches_an_altered_or_misplaced_reasoning_item(rserver: ResponsesServer) -> None:
    # The checks the loop test relies on can fail: tamper with what the provider would send.
    rserver.responder = by_round(
        Reply(calls=[("weather_get", '{"city": "Paris"}')], reasoning=["x"]), Reply(text="ok")
    )
    prov = provider(rserver)

    async def tampered(change: str) -> dict[str, Any]:
        messages = conversation()
        try:
            turn = await prov.generate(messages, [WEATHER], REASONING)
            items = copy.deepcopy(turn.reasoning_items or [])
            if change == "token":
                items[0]["encrypted_content"] = items[0]["encrypted_content"][:-1]
            elif change == "summary":
                items[0]["summary"] = []
            altered = turn.model_copy(update={"reasoning_items": items})
            messages += [Message.assistant(altered), Message.tool(turn.tool_calls[0], "{}")]
            body, _ = build_request("gpt-x", messages, [WEATHER], REASONING)
            if change != "after":
                await prov.generate(messages, [WEATHER], REASONING)
            return body
        finally:
            await prov.aclose()

    for change in ("token", "summary"):
        with pytest.raises(FatalProviderError, match="HTTP 400.*modified"):
            run(tampered(change))
    body = run(tampered("after"))
    items = body["input"]
    assert [i["type"] for i in items] == ["message", "reasoning", "function_call", "function_call_output"]
    rserver.validate(body)  # as sent: accepted
    items[1], items[2] = items[2], items[1]  # the reasoning item after its call
    with pytest.raises(Exception, match="not followed by the item it preceded"):
        rserver.validate(body)
    del items[2]  # no reasoning at all is fine (the model just loses it) ...
    rserver.validate(body)
    body["input"] = items[:1] + [next(iter(rserver.issued_reasoning.values()))]
    with pytest.raises(Exception, match="without its required following item"):  # ... alone at the end is not
        rserver.validate(body)
    assert len(rserver.rejections) == 2


def test_parallel_calls_with_interleaved_reasoning(rserver: ResponsesServer) -> None:
    rserver.responder = by_round(
        Reply(
            calls=[("weather_get", '{"city": "Paris"}'), ("weather_get", '{"city": "Rome"}')],
            reasoning=["first", "second"],
            interleave=True,
        ),
        Reply(text="both done"),
    )
    turns = run(loop(provider(rserver), REASONING))
    assert [c.arguments for c in turns[0].tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]
    assert [c.provider_data["reasoning_before"] for c in turns[0].tool_calls if c.provider_data] == [1, 2]
    assert rserver.rejections == [] and rserver.returned_reasoning == 2
    kinds = [i["type"] for i in rserver.requests[-1][1]["input"]]
    assert (
        kinds
        == ["message", "reasoning", "function_call", "reasoning", "function_call"]
        + ["function_call_output"] * 2
    )


def test_without_encrypted_reasoning_the_stateless_server_cannot_find_the_items(
    rserver: ResponsesServer,
) -> None:
    rserver.responder = by_round(Reply(calls=[("weather_get", "{}")], reasoning=["x"]), Reply(text="ok"))
    with pytest.raises(FatalProviderError, match="not found. Items are not persisted") as caught:
        run(loop(provider(rserver, "?encrypted_reasoning=0"), REASONING))
    assert "does not serve" not in str(caught.value)  # a 404 about an item is not a missing route


def test_server_omitting_call_id_still_gives_a_valid_next_request(rserver: ResponsesServer) -> None:
    rserver.responder = by_round(
        Reply(calls=[("weather_get", "{}")], omit_call_id=True, reasoning=["r"]), Reply(text="ok")
    )
    turns = run(loop(provider(rserver), REASONING))
    assert turns[0].tool_calls[0].id == "call_r1_0" and turns[1].text == "ok" and rserver.rejections == []


def test_temperature_beside_reasoning_is_a_clear_line(rserver: ResponsesServer) -> None:
    # omit_temperature=0 cannot put temperature back beside reasoning; a request without reasoning
    # to a reasoning model is sent a temperature, and the model's refusal names the fix.
    rserver.reasoning_model = True
    body, _ = build_request("gpt-x", conversation(), [], SETTINGS)
    body["reasoning"] = {"effort": "low"}
    with pytest.raises(Exception, match="temperature"):
        rserver.validate(body)


# -- live: errors ----------------------------------------------------------------------------


FAST = ModelOptions(
    retry=RetryPolicy(max_retries=2, max_retry_time_s=5.0, base_delay_s=0.01, max_delay_s=0.02),
    request_timeout_s=5.0,
    use_cache=False,
)


def _generate(
    server: ResponsesServer, settings: GenerationSettings = REASONING, retries: bool = True
) -> ModelTurn:
    options = FAST if retries else ModelOptions(retry=RetryPolicy(max_retries=0), use_cache=False)
    model = Model(provider(server), settings, options)

    async def once() -> ModelTurn:
        try:
            return await model.generate(conversation(), [WEATHER], settings)
        finally:
            await model.aclose()

    return run(once())


def test_rate_limit_and_server_errors_are_retried(rserver: ResponsesServer) -> None:
    rserver.inject(Fault("429", retry_after=0.01), Fault("500"))
    turn = _generate(rserver)
    assert turn.text == "done" and len(rserver.requests) == 3


@pytest.mark.parametrize(
    ("fault", "error_type", "text"),
    [
        (Fault("context"), ContextLengthError, "context window"),
        (Fault("chat_body"), FatalProviderError, "answered /responses with a Chat Completions body"),
        (Fault("404"), FatalProviderError, "does not serve the Responses API"),
        (Fault("failed"), ResponseFailedError, "invalid_prompt"),
        (Fault("failed_context"), ContextLengthError, "context window"),
        (Fault("reasoning_400"), FatalProviderError, "refuses the reasoning option"),
    ],
)
def test_error_modes(rserver: ResponsesServer, fault: Fault, error_type: type, text: str) -> None:
    rserver.inject(fault)
    with pytest.raises(error_type, match=text) as caught:
        _generate(rserver)
    assert "\n" not in str(caught.value) and len(rserver.requests) == 1  # never retried


def test_a_chat_completions_server_stops_the_run_with_one_line(tmp_path: Path) -> None:
    # The Chat Completions protocol server answers every path with a Chat Completions body.
    with ProtocolServer(responder=lambda api, body: Turn(text="hi")) as server:
        with pytest.raises(FatalProviderError) as caught:
            callbench.run(
                "starter", f"openai-responses:m@{server.url}", out_dir=tmp_path / "run", cache=False
            )
        assert server.requests[0][0] == "/v1/responses"
    assert str(caught.value) == CHAT_BODY_MESSAGE


# -- streaming -------------------------------------------------------------------------------


STREAM = GenerationSettings(max_tokens=256, reasoning_effort="low", stream=True)


def _script() -> Any:
    return by_round(
        Reply(
            text="Checking.",
            calls=[("weather_get", '{"city": "Paris"}'), ("weather_get", '{"city": "Oslo"}')],
            reasoning=["plan"],
        ),
        Reply(text="Paris 20C, Oslo 5C.", reasoning=["sum up"]),
    )


@pytest.mark.parametrize("empty_final_output", [False, True], ids=["completed-output", "assembled"])
def test_streamed_loop_equals_the_plain_one(rserver: ResponsesServer, empty_final_output: bool) -> None:
    rserver.responder = _script()
    plain = run(loop(provider(rserver), REASONING))
    rserver.empty_stream_output = empty_final_output
    streamed = run(loop(provider(rserver), STREAM))
    assert rserver.rejections == [] and all(b["stream"] for _, b, _ in rserver.requests[len(plain) :])

    def view(turn: ModelTurn) -> Any:
        return (
            turn.text,
            [(c.name, c.arguments_raw) for c in turn.tool_calls],
            turn.finish_reason,
            turn.reasoning,
        )

    assert [view(t) for t in streamed] == [view(t) for t in plain]
    assert all(t.ttft_ms is not None and t.ttft_ms >= 0 for t in streamed)
    assert all(t.ttft_ms is None for t in plain)
    if not empty_final_output:
        assert streamed[0].usage == plain[0].usage and streamed[0].usage is not None


@pytest.mark.parametrize(
    ("kind", "text"), [("cut", "stream was cut"), ("eof", "cut before response.completed")]
)
def test_a_cut_stream_is_a_transient_error_naming_the_cause(
    rserver: ResponsesServer, kind: str, text: str
) -> None:
    rserver.responder = _script()
    rserver.inject(Fault(kind, after_events=6))  # type: ignore[arg-type]
    with pytest.raises(TransientProviderError, match=text):
        _generate(rserver, STREAM, retries=False)
    rserver.inject(Fault(kind, after_events=6))  # type: ignore[arg-type]
    assert _generate(rserver, STREAM).tool_calls  # retried, then whole


def test_sse_decoder_survives_any_chunking() -> None:
    events = [
        {"type": "response.output_text.delta", "delta": "é\nx"},
        {"type": "response.completed", "response": {}},
    ]
    raw = b": keep-alive\r\n\r\n" + b"".join(
        f"event: {e['type']}\r\ndata: {json.dumps(e)}\r\n\r\n".encode() for e in events
    )
    whole = SseDecoder().feed(raw)
    decoder = SseDecoder()
    pieces = [ev for i in range(len(raw)) for ev in decoder.feed(raw[i : i + 1])]
    assert pieces == whole and [json.loads(d) for _, d in whole] == events
    multi = SseDecoder().feed(b'data: {"type":\ndata: "error"}\n\n')
    assert [json.loads(d) for _, d in multi] == [{"type": "error"}]


def test_stream_error_events_map_like_failed_responses() -> None:
    assembler = StreamAssembler(0.0)
    with pytest.raises(RateLimitedError):
        assembler.add(
            "error", json.dumps({"type": "error", "code": "rate_limit_exceeded", "message": "slow"})
        )
    failed = {
        "type": "response.failed",
        "response": {"error": {"code": "context_length_exceeded", "message": "x"}},
    }
    with pytest.raises(ContextLengthError):
        StreamAssembler(0.0).add("", json.dumps(failed))
    with pytest.raises(FatalProviderError, match="Chat Completions body"):
        StreamAssembler(0.0).add(
            "", json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": []})
        )
    with pytest.raises(TransientProviderError, match="not JSON"):
        StreamAssembler(0.0).add("", "{not json")


# -- end to end through callbench.run -------------------------------------------------------


class ResponsesGold:
    """The starter suite's gold path (the oracle, via ``GoldResponder``) spoken over the Responses
    API, with a reasoning item before every round's calls."""

    def __init__(self) -> None:
        self.gold = GoldResponder()

    def __call__(self, body: dict[str, Any]) -> Reply:
        turn = self.gold("openai", chat_body(body))
        round_index = model_rounds(body["input"])
        reasoning = [f"round {round_index}: call {name}" for name, _ in turn.calls]
        return Reply(
            text=turn.text, calls=turn.calls, call_ids=turn.ids, reasoning=reasoning, interleave=True
        )


def chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request read back as a Chat Completions body (what ``GoldResponder`` reads)."""
    messages: list[dict[str, Any]] = (
        [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    )
    for item in body["input"]:
        kind = item.get("type", "message")
        assistant = messages[-1] if messages and messages[-1]["role"] == "assistant" else None
        if kind == "function_call":
            if assistant is None:
                assistant = {"role": "assistant", "content": "", "tool_calls": []}
                messages.append(assistant)
            assistant["tool_calls"].append(
                {"id": item["call_id"], "function": {"name": item["name"], "arguments": item["arguments"]}}
            )
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        elif kind == "message":
            messages.append({"role": item["role"], "content": item["content"], "tool_calls": []})
    tools = [
        {"function": {"name": t["name"], "parameters": t["parameters"]}} for t in body.get("tools") or []
    ]
    return {"messages": messages, "tools": tools}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_starter_through_callbench_run_scores_full_marks(tmp_path: Path, stream: bool) -> None:
    with ResponsesServer(ResponsesGold(), reasoning_model=True) as server:
        result = callbench.run(
            "starter",
            f"openai-responses:gold@{server.url}",
            out_dir=tmp_path / "run",
            cache=False,
            concurrency=4,
            settings=GenerationSettings(reasoning_effort="medium", stream=stream),
        )
        rejections, returned = server.rejections, server.returned_reasoning
    assert rejections == [] and result.summary["n_error"] == 0
    assert {t: result.summary["tiers"][t]["accuracy"] for t in TIERS} == dict.fromkeys(TIERS, 1.0)
    assert returned > 0  # reasoning went back in later rounds, and every item passed the byte check
    header = json.loads((result.run_dir / "run.json").read_text())
    assert header["provider"]["api"] == "openai-responses"
    rounds = [info for r in result.records for info in r.trace.rounds]
    assert any(info.reasoning for info in rounds)
    assert all((info.ttft_ms is not None) == stream for info in rounds)
    assert result.summary["usage"]["tokens"]["input"] == 20 * len(rounds)


def test_a_cut_stream_in_a_run_is_an_error_record_not_a_model_failure(tmp_path: Path) -> None:
    with ResponsesServer(ResponsesGold(), reasoning_model=True) as server:
        server.inject(*[Fault("cut", after_events=3)] * 3)
        result = callbench.run(
            "starter",
            f"openai-responses:gold@{server.url}",
            out_dir=tmp_path / "run",
            cache=False,
            concurrency=1,
            max_retries=2,
            case_ids=["weather_paris"],
            settings=GenerationSettings(reasoning_effort="low", stream=True),
        )
    (record,) = result.records
    assert record.status == "error" and record.error is not None
    assert record.error.type == "TransientProviderError" and "stream was cut" in record.error.message
    assert result.summary["n_error"] == 1
