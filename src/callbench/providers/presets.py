"""Endpoint presets for OpenAI-compatible servers and vendors.

A preset is an endpoint, not an API shape: the base URL, where the key comes from, and the
quirks the Chat Completions adapter must respect. ``ollama:qwen2.5:7b`` is exactly
``openai:qwen2.5:7b@http://127.0.0.1:11434/v1`` with the Ollama quirks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal

from callbench.errors import ConfigError


@dataclass(frozen=True)
class Quirks:
    """What an OpenAI-compatible endpoint accepts."""

    strict_tools: bool = False
    """Send ``strict: true`` tool schemas (only OpenAI honours it reliably; off by default)."""
    tool_choice_required: bool = True
    """Accepts ``tool_choice: "required"``; otherwise ``auto`` is sent instead."""
    parallel_tool_calls_param: bool = True
    """Accepts the ``parallel_tool_calls`` field."""
    seed: bool = True
    """Accepts ``seed``."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    no_fallback: dict[str, object] | None = None
    """Extra body fields that forbid routing to another model (OpenRouter)."""
    auth_header: Literal["bearer", "api-key"] = "bearer"
    omit_temperature: bool = False
    """Leave ``temperature`` out (reasoning models such as o3 or gpt-5 refuse any value but 1)."""


@dataclass(frozen=True)
class Preset:
    """An endpoint: base URL, key variable and quirks."""

    name: str
    base_url: str
    key_env: str | None
    key_required: bool
    quirks: Quirks
    base_url_env: str | None = None
    """Variable that overrides ``base_url`` (e.g. ``OLLAMA_BASE_URL``)."""
    note: str = ""

    def resolved_base_url(self) -> str:
        """The base URL, taking the override variable into account."""
        value = os.environ.get(self.base_url_env or "", "") or self.base_url
        if not value:
            raise ConfigError(
                f"preset {self.name!r} needs a base URL: set {self.base_url_env} or write model@URL"
            )
        return value.rstrip("/")


_LOCAL = Quirks(strict_tools=False, seed=True)
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            True,
            Quirks(max_tokens_field="max_completion_tokens"),
            "OPENAI_BASE_URL",
            "OpenAI; strict schemas available with ?strict=1",
        ),
        Preset(
            "azure",
            "",
            "AZURE_OPENAI_API_KEY",
            True,
            Quirks(max_tokens_field="max_completion_tokens", auth_header="api-key"),
            "AZURE_OPENAI_BASE_URL",
            "Azure OpenAI v1 API: base URL https://<resource>.openai.azure.com/openai/v1; model = deployment",
        ),
        Preset(
            "vllm",
            "http://127.0.0.1:8000/v1",
            "VLLM_API_KEY",
            False,
            _LOCAL,
            "VLLM_BASE_URL",
            "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>",
        ),
        Preset(
            "sglang",
            "http://127.0.0.1:30000/v1",
            "SGLANG_API_KEY",
            False,
            _LOCAL,
            "SGLANG_BASE_URL",
            "start SGLang with --tool-call-parser <parser>",
        ),
        Preset(
            "ollama",
            "http://127.0.0.1:11434/v1",
            None,
            False,
            Quirks(tool_choice_required=False, parallel_tool_calls_param=False),
            "OLLAMA_BASE_URL",
            "Ollama ignores tool_choice; pull the model first",
        ),
        Preset(
            "llamacpp",
            "http://127.0.0.1:8080/v1",
            "LLAMACPP_API_KEY",
            False,
            Quirks(parallel_tool_calls_param=True),
            "LLAMACPP_BASE_URL",
            "start llama-server with --jinja so tools use the model's chat template",
        ),
        Preset(
            "deepseek",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
            True,
            Quirks(tool_choice_required=True, parallel_tool_calls_param=False, seed=False),
            None,
            "DeepSeek",
        ),
        Preset(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            True,
            Quirks(no_fallback={"provider": {"allow_fallbacks": False}}),
            None,
            "OpenRouter; fallbacks to other providers are switched off",
        ),
        Preset(
            "together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", True, Quirks(), None, "Together AI"
        ),
        Preset(
            "groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", True, Quirks(seed=True), None, "Groq"
        ),
        Preset(
            "fireworks",
            "https://api.fireworks.ai/inference/v1",
            "FIREWORKS_API_KEY",
            True,
            Quirks(),
            None,
            "Fireworks AI",
        ),
    ]
}


def get_preset(name: str) -> Preset:
    """Return the preset called ``name`` or raise a ``ConfigError`` listing the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown endpoint preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None


def with_quirks(preset: Preset, **changes: object) -> Preset:
    """Return ``preset`` with some quirks changed (model-string options use this)."""
    return replace(preset, quirks=replace(preset.quirks, **changes))  # type: ignore[arg-type]
