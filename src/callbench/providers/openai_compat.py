"""OpenAI Chat Completions with native tools, for any compatible base URL.

``build_request`` and ``parse_response`` are pure; :class:`OpenAIProvider` only adds HTTP.
"""

from __future__ import annotations

import json
from typing import Any

from callbench.errors import TransientProviderError
from callbench.providers.base import Provider
from callbench.providers.openai_strict import strict_parameters, strip_optional_nulls
from callbench.providers.presets import Preset, Quirks, get_preset, with_quirks
from callbench.providers.spec import parse_spec
from callbench.providers.tool_memo import memo
from callbench.providers.wire import (
    ClientHolder,
    Endpoint,
    ToolNameMap,
    parse_arguments,
    post_json,
    raw_text,
    round_prefix,
    unique_call_ids,
    wire_schema,
)
from callbench.secrets import get_key
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall, Usage

_QUIRK_OPTIONS = {
    "strict": "strict_tools",
    "tool_choice_required": "tool_choice_required",
    "parallel_tool_calls_param": "parallel_tool_calls_param",
    "seed": "seed",
    "omit_temperature": "omit_temperature",
}
_OPTIONS = set(_QUIRK_OPTIONS) | {"key_env"}


def build_request(
    model: str,
    messages: list[Message],
    tools: list[ToolContract],
    settings: GenerationSettings,
    quirks: Quirks | None = None,
) -> tuple[dict[str, Any], ToolNameMap]:
    """Build a Chat Completions request body.

    Returns:
        The JSON body and the tool-name map needed to read the response.
    """
    quirks = quirks or Quirks()
    names = ToolNameMap.build([t.name for t in tools])
    body: dict[str, Any] = {
        "model": model,
        "messages": [_message(m, names) for m in messages],
        "temperature": settings.temperature,
        quirks.max_tokens_field: settings.max_tokens,
        "stream": False,
    }
    if quirks.omit_temperature:
        del body["temperature"]
    if settings.seed is not None and quirks.seed:
        body["seed"] = settings.seed
    if settings.reasoning_effort:
        body["reasoning_effort"] = settings.reasoning_effort
    if tools:
        body["tools"] = [_tool(t, names, quirks.strict_tools) for t in tools]
        choice = settings.tool_choice
        body["tool_choice"] = "auto" if choice == "required" and not quirks.tool_choice_required else choice
        if quirks.parallel_tool_calls_param:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if quirks.no_fallback:
        body.update(quirks.no_fallback)
    return body, names


def _tool(tool: ToolContract, names: ToolNameMap, strict: bool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": names.wire(tool.name), "description": tool.description}
    if strict:
        function["parameters"], function["strict"] = memo(tool, "openai-strict", _strict_schema), True
    else:
        function["parameters"] = memo(tool, "schema", wire_schema)
    return {"type": "function", "function": function}


def _strict_schema(tool: ToolContract) -> dict[str, Any]:
    return strict_parameters(wire_schema(tool))


def _message(message: Message, names: ToolNameMap) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if message.role != "assistant" or not message.tool_calls:
        return {"role": message.role, "content": message.content}
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {
                "name": names.wire(c.name),
                "arguments": c.arguments_raw or json.dumps(c.arguments or {}),
            },
        }
        for c in message.tool_calls
    ]
    return {"role": "assistant", "content": message.content or None, "tool_calls": calls}


def parse_response(
    data: dict[str, Any],
    names: ToolNameMap,
    tools: list[ToolContract] | None = None,
    strict: bool = False,
    id_prefix: str = "call",
) -> ModelTurn:
    """Convert a Chat Completions response body into a :class:`ModelTurn`.

    Malformed tool-call arguments are kept on the call (``parse_error``), never raised. Calls
    without an id get ``<id_prefix>_<index>`` (the provider passes a per-round prefix).

    Raises:
        TransientProviderError: The body has no choices (a server fault, worth retrying).
    """
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransientProviderError("openai: response has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    schemas = {t.name: memo(t, "schema", wire_schema) for t in tools or []} if strict else {}
    calls = [
        _call(f"{id_prefix}_{i}", c, names, schemas) for i, c in enumerate(message.get("tool_calls") or [])
    ]
    return ModelTurn(
        text=_text(message.get("content")),
        tool_calls=unique_call_ids(calls),
        usage=_usage(data.get("usage")),
        finish_reason=choice.get("finish_reason"),
        reasoning=message.get("reasoning_content") or message.get("reasoning") or None,
        model=data.get("model"),
    )


def _call(
    fallback_id: str, raw: dict[str, Any], names: ToolNameMap, schemas: dict[str, dict[str, Any]]
) -> ToolCall:
    function = raw.get("function") or {}
    name = names.original(str(function.get("name") or ""))
    payload = function.get("arguments")
    arguments, error = parse_arguments(payload)
    if arguments is not None and name in schemas:
        # Strict mode forced optional parameters to be sent as null; drop those nulls again.
        arguments = strip_optional_nulls(arguments, schemas[name])
    call_id = raw.get("id") or fallback_id
    return ToolCall(
        id=str(call_id),
        name=name,
        arguments_raw=raw_text(payload or ""),
        arguments=arguments,
        parse_error=error,
    )


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content or ""


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    completion = raw.get("completion_tokens_details") or {}
    prompt = raw.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        reasoning_tokens=int(completion.get("reasoning_tokens") or 0),
        cached_tokens=int(prompt.get("cached_tokens") or 0),
    )


class OpenAIProvider(Provider):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self, model: str, preset: Preset, base_url: str | None = None, key_env: str | None = None
    ) -> None:
        self.name = preset.name
        self.model = model
        self.preset = preset
        self.base_url = (base_url or preset.resolved_base_url()).rstrip("/")
        self.key_env = key_env or preset.key_env
        self._key = get_key(self.key_env, required=preset.key_required, purpose=f"the {preset.name} endpoint")
        self._clients = ClientHolder()
        self._where = Endpoint(preset.name, model, self.base_url, self.key_env)

    def connection_key(self) -> str:
        """Requests to one base URL share connection and rate limits."""
        return f"openai-compat|{self.base_url}"

    def endpoint_url(self) -> str:
        """The base URL (checked for a listening server before a run)."""
        return self.base_url

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records (never the key)."""
        return {
            "provider": self.preset.name,
            "api": "openai-chat",
            "model": self.model,
            "base_url": self.base_url,
            "key_env": self.key_env,
            "quirks": vars(self.preset.quirks),
        }

    def _headers(self) -> dict[str, str]:
        if not self._key:
            return {}
        if self.preset.quirks.auth_header == "api-key":
            return {"api-key": self._key}
        return {"Authorization": f"Bearer {self._key}"}

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        """Send one Chat Completions request and parse the answer."""
        body, names = build_request(self.model, messages, tools, settings, self.preset.quirks)
        url = f"{self.base_url}/chat/completions"
        data = await post_json(self._clients, url, body, self._headers(), self._where, settings.timeout_s)
        return parse_response(
            data, names, tools, strict=self.preset.quirks.strict_tools, id_prefix=round_prefix(messages)
        )

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._clients.aclose()


def provider_from_spec(spec: str, preset: Preset) -> OpenAIProvider:
    """Build an :class:`OpenAIProvider` from ``model[@base_url][?options]`` and a preset."""
    parsed = parse_spec(spec, _OPTIONS)
    changes = {
        q: parsed.flag(o, getattr(preset.quirks, q)) for o, q in _QUIRK_OPTIONS.items() if o in parsed.options
    }
    if changes:
        preset = with_quirks(preset, **changes)
    return OpenAIProvider(parsed.model, preset, parsed.base_url, parsed.options.get("key_env"))


def make_provider(spec: str) -> OpenAIProvider:
    """Catalog factory for ``openai:<model>[@base_url][?options]``.

    A base URL other than OpenAI's makes the key optional, since local servers rarely need one.
    """
    preset = get_preset("openai")
    parsed = parse_spec(spec, _OPTIONS)
    if parsed.base_url and parsed.base_url != preset.base_url:
        preset = Preset("openai", parsed.base_url, preset.key_env, False, Quirks(), None, "custom base URL")
    return provider_from_spec(spec, preset)
