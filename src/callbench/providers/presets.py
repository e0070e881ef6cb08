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

ReasoningReplay = Literal["none", "reasoning_content", "reasoning"]
REASONING_REPLAY: tuple[str, ...] = ("none", "reasoning_content", "reasoning")


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
    null_tool_call_content: bool = False
    """Send ``content: null`` on an assistant turn that has tool calls and no text. Off by default:
    ``""`` is sent, since some servers (llama-cpp-python) answer ``null`` with HTTP 500."""
    reasoning_replay: ReasoningReplay = "none"
    """The field an assistant turn's reasoning text is sent back in, on later requests of the tool
    loop: ``reasoning_content`` (DeepSeek, Moonshot, llama-server, SGLang), ``reasoning`` (vLLM,
    Ollama) or ``none`` (not sent; OpenAI returns no reasoning text on Chat Completions)."""
    stream_usage: bool = True
    """With ``--stream``, ask for a final usage chunk (``stream_options.include_usage``)."""


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
            Quirks(reasoning_replay="reasoning"),
            "VLLM_BASE_URL",
            "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser <hermes|llama3_json|mistral|"
            "openai|...> (plus --reasoning-parser <qwen3|deepseek_r1|...> for reasoning models)",
        ),
        Preset(
            "sglang",
            "http://127.0.0.1:30000/v1",
            "SGLANG_API_KEY",
            False,
            Quirks(reasoning_replay="reasoning_content"),
            "SGLANG_BASE_URL",
            "python -m sglang.launch_server --model-path MODEL --tool-call-parser <qwen25|llama3|mistral|"
            "gpt-oss|...> (plus --reasoning-parser <qwen3|deepseek-r1|...> for reasoning models)",
        ),
        Preset(
            "ollama",
            "http://127.0.0.1:11434/v1",
            None,
            False,
            Quirks(tool_choice_required=False, parallel_tool_calls_param=False, reasoning_replay="reasoning"),
            "OLLAMA_BASE_URL",
            "ollama pull MODEL first (tools need a model whose template supports them); Ollama ignores "
            "tool_choice",
        ),
        Preset(
            "llamacpp",
            "http://127.0.0.1:8080/v1",
            "LLAMACPP_API_KEY",
            False,
            Quirks(reasoning_replay="reasoning_content"),
            "LLAMACPP_BASE_URL",
            "llama-server -m MODEL.gguf --jinja (tools go through the model's chat template; without "
            "--jinja tools are ignored)",
        ),
        Preset(
            "llamacpp-python",
            "http://127.0.0.1:8000/v1",
            "LLAMACPP_PYTHON_API_KEY",
            False,
            Quirks(seed=True),
            "LLAMACPP_PYTHON_BASE_URL",
            "python -m llama_cpp.server --model MODEL.gguf --chat_format chatml-function-calling "
            "(llama-cpp-python[server]; refuses content: null on assistant tool-call turns)",
        ),
        Preset(
            "lmstudio",
            "http://127.0.0.1:1234/v1",
            "LMSTUDIO_API_KEY",
            False,
            Quirks(parallel_tool_calls_param=False),
            "LMSTUDIO_BASE_URL",
            "lms server start, then lms load MODEL (tool use through the model's chat template)",
        ),
        Preset(
            "deepseek",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
            True,
            Quirks(parallel_tool_calls_param=False, seed=False, reasoning_replay="reasoning_content"),
            None,
            "DeepSeek; thinking mode wants reasoning_content back on tool-call turns (HTTP 400 otherwise)",
        ),
        Preset(
            "moonshot",
            "https://api.moonshot.ai/v1",
            "MOONSHOT_API_KEY",
            True,
            Quirks(tool_choice_required=False, seed=False, reasoning_replay="reasoning_content"),
            "MOONSHOT_BASE_URL",
            "Moonshot (Kimi); thinking models want reasoning_content back on tool-call turns and take "
            "tool_choice auto or none only",
        ),
        Preset(
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "GEMINI_API_KEY",
            True,
            Quirks(parallel_tool_calls_param=False),
            None,
            "Gemini's OpenAI-compatible endpoint; thought signatures on tool calls are sent back unchanged",
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


OTHER_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
"""Key variables the providers read besides the presets' (the ``openai-responses:`` and
``anthropic:`` defaults, the Hugging Face hub token of ``hf:``)."""


def documented_key_variables() -> set[str]:
    """Every environment variable callbench's documentation names as holding a key."""
    return {preset.key_env for preset in PRESETS.values() if preset.key_env} | set(OTHER_KEY_VARIABLES)
