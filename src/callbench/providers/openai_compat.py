"""OpenAI Chat Completions with native tools, for any compatible base URL.

``build_request`` and ``parse_response`` are pure; :class:`OpenAIProvider` only adds HTTP.
"""

from __future__ import annotations

import json
from typing import Any

from callbench.errors import ConfigError, TransientProviderError
from callbench.providers.base import Provider
from callbench.providers.openai_strict import strict_parameters, strip_optional_nulls
from callbench.providers.presets import REASONING_REPLAY, Preset, Quirks, get_preset, with_quirks
from callbench.providers.spec import parse_spec
from callbench.providers.tool_memo import memo
from callbench.providers.wire import (
    ClientHolder,
    Endpoint,
    StreamReply,
    ToolNameMap,
    parse_arguments,
    post_json,
    post_sse,
    raw_text,
    round_prefix,
    stream_error,
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
    "null_content": "null_tool_call_content",
    "stream_usage": "stream_usage",
}
_OPTIONS = set(_QUIRK_OPTIONS) | {"key_env", "reasoning_replay"}
_CHOICES = ("auto", "required", "none")


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
        "messages": [_message(m, names, quirks) for m in messages],
        "temperature": settings.temperature,
        quirks.max_tokens_field: settings.max_tokens,
        "stream": settings.stream,
    }
    if settings.stream and quirks.stream_usage:
        body["stream_options"] = {"include_usage": True}
    if quirks.omit_temperature:
        del body["temperature"]
    if settings.seed is not None and quirks.seed:
        body["seed"] = settings.seed
    if settings.reasoning_effort:
        body["reasoning_effort"] = settings.reasoning_effort
    if tools:
        body["tools"] = [_tool(t, names, quirks.strict_tools) for t in tools]
        body["tool_choice"] = _tool_choice(settings.tool_choice, tools, names, quirks)
        if quirks.parallel_tool_calls_param:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if quirks.no_fallback:
        body.update(quirks.no_fallback)
    return body, names


def _tool_choice(choice: str, tools: list[ToolContract], names: ToolNameMap, quirks: Quirks) -> Any:
    """``auto``/``required``/``none`` as given, a tool name as the forced-function object.

    A tool name the request does not offer is sent as ``auto`` (``--tool-choice TOOL`` forces the
    tool where a case offers it), and so is ``required`` where the preset says it is refused.
    """
    if choice == "required" and not quirks.tool_choice_required:
        return "auto"
    if choice in _CHOICES:
        return choice
    if any(t.name == choice for t in tools):
        return {"type": "function", "function": {"name": names.wire(choice)}}
    return "auto"


def _tool(tool: ToolContract, names: ToolNameMap, strict: bool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": names.wire(tool.name), "description": tool.description}
    if strict:
        function["parameters"], function["strict"] = memo(tool, "openai-strict", _strict_schema), True
    else:
        function["parameters"] = memo(tool, "schema", wire_schema)
    return {"type": "function", "function": function}


def _strict_schema(tool: ToolContract) -> dict[str, Any]:
    return strict_parameters(wire_schema(tool))


def _message(message: Message, names: ToolNameMap, quirks: Quirks) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if message.role != "assistant":
        return {"role": message.role, "content": message.content}
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [_wire_call(c, names) for c in message.tool_calls]
        if not message.content and quirks.null_tool_call_content:
            out["content"] = None
    if message.reasoning and quirks.reasoning_replay != "none":
        # Servers of reasoning models want the turn's reasoning back inside the tool loop
        # (DeepSeek and Moonshot refuse the request without it); the field name is per family.
        out[quirks.reasoning_replay] = message.reasoning
    return out


def _wire_call(call: ToolCall, names: ToolNameMap) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {
            "name": names.wire(call.name),
            "arguments": call.arguments_raw or json.dumps(call.arguments or {}),
        },
    }
    if call.provider_data:
        # Opaque per-call fields the server must get back unchanged (Gemini's thought signature in
        # extra_content; Gemini 3 answers HTTP 400 to a tool loop that drops it).
        wire.update(call.provider_data)
    return wire


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
    extra = raw.get("extra_content")
    return ToolCall(
        id=str(call_id),
        name=name,
        arguments_raw=raw_text(payload or ""),
        arguments=arguments,
        parse_error=error,
        provider_data={"extra_content": extra} if isinstance(extra, dict) and extra else None,
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


class StreamAssembler:
    """Rebuilds a Chat Completions response body from the chunks of a streamed answer.

    Content and reasoning deltas are concatenated; tool-call deltas are assembled by ``index``
    (id and name from the first delta of a call, argument fragments concatenated in order). A
    delta without ``index`` (some servers) continues the last call unless it brings an id or a
    name of its own, which starts the next call. The rebuilt body goes through
    :func:`parse_response`, so a streamed answer is read exactly as a plain one.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.chunks = 0
        self.done = False
        """``[DONE]`` arrived."""

    def feed(self, chunk: dict[str, Any]) -> bool:
        """Take one chunk; True when it carried model output (text, reasoning or a call)."""
        self.chunks += 1
        self.model = chunk.get("model") or self.model
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        output = False
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # one answer per request (n=1)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str) and delta["content"]:
                self.text.append(delta["content"])
                output = True
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thought, str) and thought:
                self.reasoning.append(thought)
                output = True
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    self._call_delta(call)
                    output = True
        return output

    def _call_delta(self, delta: dict[str, Any]) -> None:
        function = delta.get("function") or {}
        index = delta.get("index")
        if not isinstance(index, int):
            index = self._index_of(delta, function)
        call = self.calls.setdefault(index, {"function": {"name": "", "arguments": ""}})
        if delta.get("id") and not call.get("id"):
            call["id"] = delta["id"]
        name = function.get("name")
        if isinstance(name, str) and name and name != call["function"]["name"]:
            # Servers send the name once; one that repeats it whole must not double it.
            call["function"]["name"] += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call["function"]["arguments"] += arguments
        elif isinstance(arguments, dict):  # a server that sends the arguments as one object
            call["function"]["arguments"] = json.dumps(arguments)
        if isinstance(delta.get("extra_content"), dict):
            call.setdefault("extra_content", {}).update(delta["extra_content"])

    def _index_of(self, delta: dict[str, Any], function: dict[str, Any]) -> int:
        """The call a delta without ``index`` belongs to: a new id (or, without an id, a name once
        the last call has one) starts the next call; anything else continues the last one."""
        if not self.calls:
            return 0
        last = max(self.calls)
        if delta.get("id"):
            starts_new = delta["id"] != self.calls[last].get("id")
        else:
            starts_new = bool(function.get("name")) and bool(self.calls[last]["function"]["name"])
        return last + 1 if starts_new else last

    @property
    def complete(self) -> bool:
        """The stream reached its end: ``[DONE]`` or a finish reason arrived."""
        return self.done or self.finish_reason is not None

    def body(self) -> dict[str, Any]:
        """The equivalent non-streamed response body."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return {
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage,
        }


def read_stream(reply: StreamReply, where: Endpoint) -> tuple[dict[str, Any], float | None]:
    """The response body a stream amounts to, and the milliseconds to its first model output.

    Raises:
        TransientProviderError: The stream ended before the answer did (no finish reason and no
            ``[DONE]``), or an event is not JSON; an error event is mapped like an HTTP error.
    """
    if reply.body is not None:
        return reply.body, None
    assembler, first = StreamAssembler(), None
    for event in reply.events:
        data = event.data.strip()
        if data == "[DONE]":
            assembler.done = True
            break
        try:
            chunk = json.loads(data)
        except (json.JSONDecodeError, RecursionError):
            raise TransientProviderError(
                f"{where.provider}: stream event {assembler.chunks + 1} is not JSON ({data[:80]!r})"
            ) from None
        if not isinstance(chunk, dict):
            continue
        if "error" in chunk:
            raise stream_error(chunk, where)
        if assembler.feed(chunk) and first is None:
            first = (event.at - reply.started) * 1000.0
    if not assembler.complete:
        raise TransientProviderError(
            f"{where.provider}: the stream ended after {assembler.chunks} chunk(s) without a finish "
            "reason or [DONE]: the answer was cut off (connection closed mid-answer)"
        )
    return assembler.body(), first


_LATER_QUIRKS = ("null_tool_call_content", "reasoning_replay", "stream_usage")
"""Quirks added after the response cache existed: left out of the description while at their
defaults, so the cache keys (which hash the description) of unchanged endpoints stay the same."""


def recorded_quirks(quirks: Quirks) -> dict[str, Any]:
    """The quirks as ``run.json`` and the cache key record them."""
    default = Quirks()
    return {k: v for k, v in vars(quirks).items() if k not in _LATER_QUIRKS or v != getattr(default, k)}


class OpenAIProvider(Provider):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    streams = True

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

    def refused_setting(self, settings: GenerationSettings) -> str | None:
        """``--tool-choice required`` on a preset whose server refuses it (it would be sent as
        ``auto``, and the figures would be unforced ones)."""
        if settings.tool_choice == "required" and not self.preset.quirks.tool_choice_required:
            return (
                f"--tool-choice required: the {self.preset.name} endpoint refuses tool_choice "
                "'required' (callbench would have to send 'auto'); use auto, none or a tool name"
            )
        return None

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
            "quirks": recorded_quirks(self.preset.quirks),
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
        ttft = None
        if settings.stream:
            reply = await post_sse(self._clients, url, body, self._headers(), self._where, settings.timeout_s)
            data, ttft = read_stream(reply, self._where)
        else:
            data = await post_json(self._clients, url, body, self._headers(), self._where, settings.timeout_s)
        turn = parse_response(
            data, names, tools, strict=self.preset.quirks.strict_tools, id_prefix=round_prefix(messages)
        )
        if ttft is not None:
            turn.ttft_ms = ttft
        return turn

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._clients.aclose()


def provider_from_spec(spec: str, preset: Preset) -> OpenAIProvider:
    """Build an :class:`OpenAIProvider` from ``model[@base_url][?options]`` and a preset."""
    parsed = parse_spec(spec, _OPTIONS)
    changes: dict[str, object] = {
        q: parsed.flag(o, getattr(preset.quirks, q)) for o, q in _QUIRK_OPTIONS.items() if o in parsed.options
    }
    if "reasoning_replay" in parsed.options:
        replay = parsed.options["reasoning_replay"]
        if replay not in REASONING_REPLAY:
            raise ConfigError(
                f"model option reasoning_replay={replay!r}: expected one of {', '.join(REASONING_REPLAY)}"
            )
        changes["reasoning_replay"] = replay
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
