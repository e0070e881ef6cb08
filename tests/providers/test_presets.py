"""Model strings, presets and keys: what each endpoint gets and the one-line errors."""

from __future__ import annotations

import pytest
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.errors import ConfigError
from callbench.providers import anthropic
from callbench.providers.model import make_provider
from callbench.providers.openai_compat import OpenAIProvider, build_request
from callbench.providers.presets import PRESETS
from callbench.providers.spec import parse_spec

KEYLESS = {name for name, p in PRESETS.items() if not p.key_required}


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for preset in PRESETS.values():
        for var in (preset.key_env, preset.base_url_env):
            if var:
                monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("CALLBENCH_KEYS_FILE", "/nonexistent/keys.toml")


def test_spec_parsing() -> None:
    spec = parse_spec("Qwen/Qwen2.5-7B@v1@http://127.0.0.1:8000/v1?strict=1", {"strict"})
    assert (spec.model, spec.base_url, spec.options) == (
        "Qwen/Qwen2.5-7B@v1",
        "http://127.0.0.1:8000/v1",
        {"strict": "1"},
    )
    assert parse_spec("llama3.2:3b", set()).base_url is None
    with pytest.raises(ConfigError, match="unknown option\\(s\\) bogus"):
        parse_spec("m?bogus=1", {"strict"})
    with pytest.raises(ConfigError, match="expected true or false"):
        parse_spec("m?strict=maybe", {"strict"}).flag("strict", False)


@pytest.mark.parametrize("name", sorted(KEYLESS))
def test_local_presets_need_no_key(name: str) -> None:
    provider = make_provider(f"{name}:some-model")
    assert isinstance(provider, OpenAIProvider) and provider.base_url.startswith("http://127.0.0.1:")
    assert provider.describe()["provider"] == name and provider.connection_key().endswith(provider.base_url)


@pytest.mark.parametrize("name", sorted(set(PRESETS) - KEYLESS - {"azure", "openai"}))
def test_hosted_presets_name_the_missing_key(name: str) -> None:
    with pytest.raises(ConfigError, match=f"set the environment variable {PRESETS[name].key_env}"):
        make_provider(f"{name}:some-model")


def test_openai_default_needs_a_key_but_a_custom_url_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_provider("openai:gpt-4o-mini")
    assert make_provider("openai:m@http://127.0.0.1:1/v1").base_url == "http://127.0.0.1:1/v1"  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-0123456789abcdef")
    body, _ = build_request(
        "gpt-4o-mini", conversation(), [WEATHER], SETTINGS, make_provider("openai:gpt-4o-mini").preset.quirks
    )  # type: ignore[attr-defined]
    assert "max_completion_tokens" in body and "max_tokens" not in body


def test_azure_needs_base_url_and_sends_api_key_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789")
    with pytest.raises(ConfigError, match="AZURE_OPENAI_BASE_URL"):
        make_provider("azure:my-deployment")
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://res.openai.azure.com/openai/v1")
    provider = make_provider("azure:my-deployment")
    assert provider._headers() == {"api-key": "azure-key-0123456789"}  # type: ignore[attr-defined]


def test_openrouter_forbids_fallback_and_options_override_quirks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key-0123456789")
    provider = make_provider("openrouter:meta/llama?parallel_tool_calls_param=0")
    body, _ = build_request("m", conversation(), [WEATHER], SETTINGS, provider.preset.quirks)  # type: ignore[attr-defined]
    assert body["provider"] == {"allow_fallbacks": False} and "parallel_tool_calls" not in body


def test_anthropic_request_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        make_provider("anthropic:claude-sonnet-4-5")
    from callbench.types.messages import GenerationSettings

    body, names = anthropic.build_request(
        "c",
        conversation(),
        [WEATHER],
        GenerationSettings(tool_choice="required", parallel_tool_calls=False, thinking_budget=1024),
    )
    assert body["system"] == "You call tools." and body["messages"][0]["role"] == "user"
    assert body["tools"][0]["name"] == "weather_get" and names.original("weather_get") == "weather.get"
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024} and "temperature" not in body


def test_omit_temperature_option() -> None:
    provider = make_provider("openai:o3@http://127.0.0.1:1/v1?omit_temperature=1")
    body, _ = build_request("o3", conversation(), [], SETTINGS, provider.preset.quirks)  # type: ignore[attr-defined]
    assert "temperature" not in body and body["max_tokens"] == 256
