"""Each injected fault, driven through the real providers and the Model wrapper."""

from __future__ import annotations

import asyncio

import pytest
from protocol_server import Fault, ProtocolServer, Turn
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.errors import FatalProviderError, RateLimitedError, TransientProviderError
from callbench.providers import anthropic, openai_compat
from callbench.providers.model import Model, ModelOptions
from callbench.types.messages import ModelTurn


def ask(server: ProtocolServer, options: ModelOptions, api: str = "openai") -> tuple[ModelTurn, Model]:
    if api == "openai":
        provider = openai_compat.make_provider(f"scripted@{server.url}")
    else:
        provider = anthropic.make_provider(f"scripted@{server.root}")
    model = Model(provider, options=options)
    return asyncio.run(generate_once(model)), model


async def generate_once(model: Model) -> ModelTurn:
    try:
        return await model.generate(conversation(), [WEATHER], SETTINGS)
    finally:
        await model.aclose()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "fault",
    [
        Fault("429", retry_after=0.05),
        Fault("500"),
        Fault("503", retry_after=0.01),
        Fault("slow", delay_s=2.0),
        Fault("drop"),
        Fault("truncate"),
    ],
    ids=["429-retry-after", "500", "503", "slow", "drop", "truncate"],
)
def test_transient_fault_is_retried_and_recovers(
    server: ProtocolServer, fast_options: ModelOptions, fault: Fault, api: str
) -> None:
    server.inject(fault)
    turn, model = ask(server, fast_options, api)
    assert [c.name for c in turn.tool_calls] == ["weather.get"]  # reversed sanitised name
    assert model.counters["requests"] == 2 and model.counters["retries"] == 1
    assert len(server.requests) == 2


def test_retry_after_is_honoured(server: ProtocolServer, fast_options: ModelOptions) -> None:
    server.inject(Fault("429", retry_after=0.3))
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    model = Model(openai_compat.make_provider(f"scripted@{server.url}"), options=fast_options, sleep=record)
    asyncio.run(generate_once(model))
    assert waits == [0.3]


def test_persistent_failure_gives_up_after_capped_attempts(
    server: ProtocolServer, fast_options: ModelOptions
) -> None:
    server.inject(*[Fault("500")] * 10)
    with pytest.raises(TransientProviderError, match="gave up after 4 attempt"):
        ask(server, fast_options)
    assert len(server.requests) == 4  # first attempt + max_retries=3


def test_retry_time_cap_stops_long_retry_after(server: ProtocolServer, fast_options: ModelOptions) -> None:
    server.inject(Fault("429", retry_after=60))  # longer than max_retry_time_s=5
    with pytest.raises(RateLimitedError, match="gave up after 1 attempt"):
        ask(server, fast_options)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("kind", "hint"),
    [("401", "check the API key"), ("404", "check the model name"), ("400", "request was rejected")],
)
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_client_errors_are_fatal_without_retry(
    server: ProtocolServer, fast_options: ModelOptions, kind: str, hint: str, api: str
) -> None:
    server.inject(Fault(kind))  # type: ignore[arg-type]
    with pytest.raises(FatalProviderError, match=hint) as info:
        ask(server, fast_options, api)
    assert len(server.requests) == 1 and "\n" not in str(info.value)


def test_body_without_choices_is_retried(server: ProtocolServer, fast_options: ModelOptions) -> None:
    server.inject(Fault("no_choices"))
    turn, _ = ask(server, fast_options)
    assert turn.tool_calls and len(server.requests) == 2


def test_malformed_argument_string_is_a_model_result(fast_options: ModelOptions) -> None:
    with ProtocolServer(responder=lambda api, body: Turn(calls=[("weather_get", '{"city": "Par')])) as server:
        turn, model = ask(server, fast_options)
    call = turn.tool_calls[0]
    assert call.arguments is None and "malformed JSON" in (call.parse_error or "")
    assert model.counters["retries"] == 0


def test_connection_refused_is_transient(fast_options: ModelOptions) -> None:
    provider = openai_compat.make_provider("scripted@http://127.0.0.1:9/v1")
    # Still transient (an error record, never the model's fault), and it says the server is gone.
    with pytest.raises(TransientProviderError, match=r"127\.0\.0\.1:9/v1 .*connection refused"):
        asyncio.run(generate_once(Model(provider, options=fast_options)))
