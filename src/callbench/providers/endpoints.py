"""Catalog factories of the endpoint presets: ``vllm:MODEL``, ``ollama:MODEL``, ``deepseek:MODEL``...

Each is the OpenAI-compatible provider with a preset's base URL, key source and quirks (see
:mod:`callbench.providers.presets`).
"""

from __future__ import annotations

from collections.abc import Callable

from callbench.providers.openai_compat import OpenAIProvider, provider_from_spec
from callbench.providers.presets import get_preset


def _factory(name: str) -> Callable[[str], OpenAIProvider]:
    def make_provider(spec: str) -> OpenAIProvider:
        return provider_from_spec(spec, get_preset(name))

    make_provider.__doc__ = f"Build an OpenAI-compatible provider for the {name!r} preset from a model spec."
    return make_provider


vllm = _factory("vllm")
sglang = _factory("sglang")
ollama = _factory("ollama")
llamacpp = _factory("llamacpp")
deepseek = _factory("deepseek")
openrouter = _factory("openrouter")
azure = _factory("azure")
together = _factory("together")
groq = _factory("groq")
fireworks = _factory("fireworks")
gemini = _factory("gemini")
moonshot = _factory("moonshot")
lmstudio = _factory("lmstudio")
llamacpp_python = _factory("llamacpp-python")
