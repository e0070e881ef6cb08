"""The Responses stand-in against OpenAI's own SDK (``openai``, a test dependency): the SDK's client
sends its requests to the stand-in, which must accept them, and reads the stand-in's answers and
stream events into its typed models, which must hold every item. callbench's own request bodies are
checked against the SDK's request type. So the stand-in speaks the wire format as the vendor's
client reads and writes it, not only as callbench does."""

from __future__ import annotations

import json
from typing import Any

import openai
from openai.types.responses import Response, ResponseFunctionToolCall, ResponseReasoningItem
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from provider_helpers import WEATHER, conversation
from pydantic import TypeAdapter
from responses_server import Reply, ResponsesServer, by_round

from callbench.providers.openai_responses import build_request
from callbench.types.messages import GenerationSettings

TOOL = {
    "type": "function",
    "name": "weather_get",
    "description": "Current weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "strict": False,
}
CALL_THEN_TEXT = by_round(
    Reply(calls=[("weather_get", '{"city": "Paris"}')], reasoning=["The user wants the weather."]),
    Reply(text="It is sunny in Paris."),
)


def _client(server: ResponsesServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="sk-test-not-a-key", max_retries=0)


def test_the_sdk_runs_a_tool_loop_with_reasoning_against_the_stand_in() -> None:
    with ResponsesServer(responder=CALL_THEN_TEXT, reasoning_model=True) as server:
        client = _client(server)
        first = client.responses.create(
            model="gpt-x",
            input="What is the weather in Paris?",
            tools=[TOOL],  # type: ignore[list-item]
            reasoning={"effort": "low", "summary": "auto"},
            store=False,
            include=["reasoning.encrypted_content"],
        )
        assert isinstance(first, Response)
        reasoning = [i for i in first.output if isinstance(i, ResponseReasoningItem)]
        [call] = [i for i in first.output if isinstance(i, ResponseFunctionToolCall)]
        assert reasoning and reasoning[0].encrypted_content and call.name == "weather_get"
        assert json.loads(call.arguments) == {"city": "Paris"}
        # The SDK's own round two: the output items as it parsed them, then the tool's result.
        history: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
        history += [item.model_dump(exclude_none=True) for item in first.output]
        result = {"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "sunny"}'}
        history.append(result)
        second = client.responses.create(
            model="gpt-x",
            input=history,
            tools=[TOOL],  # type: ignore[list-item]
            reasoning={"effort": "low"},
            store=False,
            include=["reasoning.encrypted_content"],
        )
        assert second.output_text == "It is sunny in Paris."
        assert server.rejections == [] and server.returned_reasoning == len(reasoning)


def test_the_sdk_reads_the_stand_ins_stream_into_its_typed_events() -> None:
    with ResponsesServer(responder=CALL_THEN_TEXT) as server:
        events = list(
            _client(server).responses.create(
                model="gpt-x",
                input="What is the weather in Paris?",
                tools=[TOOL],
                stream=True,  # type: ignore[list-item]
            )
        )
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds
    final = events[-1].response  # type: ignore[union-attr]
    [call] = [i for i in final.output if isinstance(i, ResponseFunctionToolCall)]
    assert json.loads(call.arguments) == {"city": "Paris"}


def test_callbench_request_bodies_are_requests_the_sdk_types_allow() -> None:
    adapter = TypeAdapter(ResponseCreateParamsNonStreaming)
    for settings in (
        GenerationSettings(max_tokens=256),
        GenerationSettings(max_tokens=256, reasoning_effort="low", tool_choice="required"),
        GenerationSettings(max_tokens=256, tool_choice="weather.get", parallel_tool_calls=False),
    ):
        body, _ = build_request("gpt-x", conversation(), [WEATHER], settings)
        adapter.validate_python(body)  # raises on a field of the wrong shape
