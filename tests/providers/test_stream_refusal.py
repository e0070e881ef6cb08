"""Settings an endpoint cannot honour are refused before the run (never a silent no-op or a quiet
substitute): ``--stream`` for a model that cannot stream, ``--tool-choice required`` where a preset
would send ``auto``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from callbench.errors import ConfigError
from callbench.providers.model import build_model
from callbench.types.messages import GenerationSettings

STREAMED = SimpleNamespace(settings=GenerationSettings(stream=True))


@pytest.mark.parametrize("model", ["baseline", "oracle", "prompt:baseline"])
def test_stream_is_refused_for_models_that_do_not_stream(model: str) -> None:
    with pytest.raises(ConfigError, match=r"^--stream: .* does not stream its answers"):
        build_model(model, STREAMED)


@pytest.mark.parametrize(
    "model",
    [
        "openai:m@http://127.0.0.1:9/v1",
        "openai-responses:m@http://127.0.0.1:9/v1",
        "anthropic:claude@http://127.0.0.1:9",
        "prompt:openai:m@http://127.0.0.1:9/v1",
        "vllm:m@http://127.0.0.1:9/v1",
    ],
)
def test_stream_is_accepted_by_http_endpoints(model: str) -> None:
    built = build_model(model, SimpleNamespace(settings=GenerationSettings(stream=True)))
    assert built.settings.stream is True


def test_without_stream_every_model_builds() -> None:
    assert build_model("baseline", SimpleNamespace(settings=GenerationSettings())).settings.stream is False


@pytest.mark.parametrize("preset", ["ollama", "moonshot"])
def test_tool_choice_required_is_refused_where_the_preset_would_send_auto(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-test-not-a-key")
    forced = SimpleNamespace(settings=GenerationSettings(tool_choice="required"))
    with pytest.raises(ConfigError, match=rf"^--tool-choice required: the {preset} endpoint refuses"):
        build_model(f"{preset}:m@http://127.0.0.1:9/v1", forced)
    assert build_model("vllm:m@http://127.0.0.1:9/v1", forced).settings.tool_choice == "required"
