"""Anthropic Messages API with native tool use.

``build_request`` and ``parse_response`` are pure; :class:`AnthropicProvider` only adds HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from callbench.errors import TransientProviderError
from callbench.providers.base import Provider
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
    stream_error,
    unique_call_ids,
    wire_schema,
)
from callbench.secrets import get_key
from callbench.types.contract import ToolContract
from callbench.types.jsoncodec import parse_json_value
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall, Usage

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


ThinkingLookup = Callable[[str], list[dict[str, Any]]]


def build_request(
    model: str,
    messages: list[Message],
    tools: list[ToolContract],
    settings: GenerationSettings,
    thinking: ThinkingLookup | None = None,
) -> tuple[dict[str, Any], ToolNameMap]:
    """Build a Messages API request body (system prompt apart, tool results as user blocks).

    Args:
        thinking: Returns the signed thinking blocks of an earlier assistant turn, by the id of
            its first tool call; the API wants them back when extended thinking is on.
    """
    names = ToolNameMap.build([t.name for t in tools])
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": settings.max_tokens,
        "messages": _messages([m for m in messages if m.role != "system"], names, thinking),
    }
    if system:
        body["system"] = system
    if settings.stream:
        body["stream"] = True
    if settings.thinking_budget:
        # Extended thinking requires the default temperature.
        body["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
    else:
        body["temperature"] = settings.temperature
    if tools:
        body["tools"] = [
            {
                "name": names.wire(t.name),
                "description": t.description,
                "input_schema": memo(t, "schema", wire_schema),
            }
            for t in tools
        ]
        choice = _tool_choice(settings.tool_choice, tools, names)
        if not settings.parallel_tool_calls and choice["type"] != "none":
            choice["disable_parallel_tool_use"] = True
        body["tool_choice"] = choice
    return body, names


def _tool_choice(choice: str, tools: list[ToolContract], names: ToolNameMap) -> dict[str, Any]:
    """``auto``/``required``/``none`` as the API names them, a tool name as ``{"type": "tool"}``
    (``auto`` when the request does not offer that tool)."""
    if choice in _CHOICE:
        return {"type": _CHOICE[choice]}
    if any(t.name == choice for t in tools):
        return {"type": "tool", "name": names.wire(choice)}
    return {"type": "auto"}


def _messages(
    messages: list[Message], names: ToolNameMap, thinking: ThinkingLookup | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, names)
        if thinking is not None and message.role == "assistant" and message.tool_calls:
            blocks = thinking(message.tool_calls[0].id) + blocks
        if out and out[-1]["role"] == role:
            # The API wants alternating roles: consecutive tool results form one user turn.
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(message: Message, names: ToolNameMap) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": names.wire(call.name),
                "input": call.arguments if call.arguments is not None else {},
            }
        )
    return blocks or [{"type": "text", "text": ""}]


def parse_response(data: dict[str, Any], names: ToolNameMap) -> ModelTurn:
    """Convert a Messages API response body into a :class:`ModelTurn`.

    Raises:
        TransientProviderError: The body has no content list (a server fault).
    """
    content = data.get("content")
    if not isinstance(content, list):
        raise TransientProviderError("anthropic: response has no content list")
    texts, thoughts, calls = [], [], []
    for index, block in enumerate(b for b in content if isinstance(b, dict)):
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking", "")))
        elif kind == "tool_use":
            calls.append(_call(index, block, names))
    return ModelTurn(
        text="".join(texts),
        tool_calls=unique_call_ids(calls),
        usage=_usage(data.get("usage")),
        finish_reason=data.get("stop_reason"),
        reasoning="\n".join(thoughts) or None,
        model=data.get("model"),
    )


def _call(index: int, block: dict[str, Any], names: ToolNameMap) -> ToolCall:
    call_id = str(block.get("id") or f"toolu_{index}")
    name = names.original(str(block.get("name") or ""))
    payload = block.get("input")
    if isinstance(payload, str):
        # A streamed tool input that did not parse as JSON: kept as the text that arrived.
        arguments, error = parse_arguments(payload)
        return ToolCall(id=call_id, name=name, arguments_raw=payload, arguments=arguments, parse_error=error)
    if isinstance(payload, dict):  # the usual case; parse_arguments refuses one nested too deep
        arguments, error = parse_arguments(payload)
    else:
        arguments, error = None, f"tool input is a JSON {type(payload).__name__}, not an object"
    return ToolCall(
        id=call_id,
        name=name,
        arguments_raw=json.dumps(payload, ensure_ascii=False),
        arguments=arguments,
        parse_error=error,
    )


def read_stream(reply: StreamReply, where: Endpoint) -> tuple[dict[str, Any], float | None]:
    """The Messages response body a streamed answer amounts to, and the milliseconds to its first
    output (text, thinking or a tool call).

    Blocks are rebuilt from ``content_block_start`` / ``_delta`` / ``_stop`` (text, thinking with
    its signature, tool input from its JSON fragments), stop reason and usage from
    ``message_delta``.

    Raises:
        TransientProviderError: The stream ended before ``message_stop`` (cut off), or an event is
            not JSON; an ``error`` event is mapped like an HTTP error.
    """
    if reply.body is not None:
        return reply.body, None
    stream = _Stream()
    for event in reply.events:
        try:
            data = json.loads(event.data)
        except (json.JSONDecodeError, RecursionError):
            raise TransientProviderError(
                f"{where.provider}: stream event {stream.events + 1} is not JSON ({event.data[:80]!r})"
            ) from None
        if not isinstance(data, dict):
            continue
        if (data.get("type") or event.event) == "error":
            raise stream_error(data, where)
        if stream.feed(data, event.event) and stream.first is None:
            stream.first = (event.at - reply.started) * 1000.0
    if not stream.stopped:
        raise TransientProviderError(
            f"{where.provider}: the stream ended after {stream.events} event(s) without message_stop: "
            "the answer was cut off (connection closed mid-answer)"
        )
    return stream.body(), stream.first


class _Stream:
    """The state of one streamed Messages answer."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.inputs: dict[int, list[str]] = {}
        self.events = 0
        self.stopped = False
        self.first: float | None = None

    def feed(self, data: dict[str, Any], name: str | None) -> bool:
        """Take one event; True when it carried model output."""
        self.events += 1
        kind = data.get("type") or name
        raw_index = data.get("index")
        index = raw_index if isinstance(raw_index, int) else 0
        if kind == "message_start" and isinstance(data.get("message"), dict):
            self.message = dict(data["message"])
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            self.blocks[index] = dict(data["content_block"])
            return self.blocks[index].get("type") == "tool_use"
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            return self._delta(index, data["delta"])
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            if delta.get("stop_reason"):
                self.message["stop_reason"] = delta["stop_reason"]
            if isinstance(data.get("usage"), dict):
                self.message["usage"] = {**(self.message.get("usage") or {}), **data["usage"]}
        elif kind == "message_stop":
            self.stopped = True
        return False

    def _delta(self, index: int, delta: dict[str, Any]) -> bool:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
        elif kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = str(block.get("signature") or "") + str(delta.get("signature") or "")
            return False
        elif kind == "input_json_delta":
            self.inputs.setdefault(index, []).append(str(delta.get("partial_json") or ""))
        else:
            return False
        return True

    def body(self) -> dict[str, Any]:
        """The equivalent non-streamed response body."""
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.get("type") == "tool_use" and index in self.inputs:
                raw = "".join(self.inputs[index])
                if raw.strip():
                    try:
                        block["input"] = parse_json_value(raw)
                    except ValueError:  # not JSON, or unusable JSON: parse_arguments says why
                        block["input"] = raw  # _call keeps it with its parse error
            content.append(block)
        return {**self.message, "content": content}


def thinking_blocks(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The signed thinking blocks of a response, exactly as received (they must be sent back as is)."""
    content = data.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")]


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0) + int(raw.get("cache_read_input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cached_tokens=int(raw.get("cache_read_input_tokens") or 0),
    )


class AnthropicProvider(Provider):
    """A Claude model behind the Messages API (or a compatible endpoint)."""

    streams = True

    name = "anthropic"

    def __init__(self, model: str, base_url: str | None = None, key_env: str = "ANTHROPIC_API_KEY") -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.key_env = key_env
        # A custom base URL is usually a local test or proxy server that needs no key.
        required = self.base_url == DEFAULT_BASE_URL
        self._key = get_key(key_env, required=required, purpose="the anthropic provider")
        self._clients = ClientHolder()
        self._where = Endpoint("anthropic", model, self.base_url, key_env)
        # Signed thinking blocks by the id of the first tool call of their turn. ModelTurn has no
        # field for provider data, so they are kept here for the next round of the same case.
        self._thinking: dict[str, list[dict[str, Any]]] = {}

    def connection_key(self) -> str:
        """Requests to one base URL share connection and rate limits."""
        return f"anthropic|{self.base_url}"

    def endpoint_url(self) -> str:
        """The base URL (checked for a listening server before a run)."""
        return self.base_url

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records (never the key)."""
        return {
            "provider": "anthropic",
            "api": "anthropic-messages",
            "model": self.model,
            "base_url": self.base_url,
            "key_env": self.key_env,
            "api_version": API_VERSION,
        }

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        """Send one Messages request and parse the answer."""
        body, names = build_request(self.model, messages, tools, settings, self._thinking_for)
        headers = {"anthropic-version": API_VERSION}
        if self._key:
            headers["x-api-key"] = self._key
        url = f"{self.base_url}/v1/messages"
        ttft = None
        if settings.stream:
            reply = await post_sse(self._clients, url, body, headers, self._where, settings.timeout_s, None)
            data, ttft = read_stream(reply, self._where)
        else:
            data = await post_json(self._clients, url, body, headers, self._where, settings.timeout_s)
        turn = parse_response(data, names)
        if ttft is not None:
            turn.ttft_ms = ttft
        blocks = thinking_blocks(data)
        if blocks and turn.tool_calls:
            if len(self._thinking) > 50_000:  # bound memory on very long runs; old cases are done
                self._thinking.clear()
            self._thinking[turn.tool_calls[0].id] = blocks
        return turn

    def _thinking_for(self, call_id: str) -> list[dict[str, Any]]:
        return self._thinking.get(call_id, [])

    def cacheable(self, settings: GenerationSettings) -> bool:
        """With extended thinking, a cached turn would lack the signed blocks the next round needs."""
        return not settings.thinking_budget

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._clients.aclose()


def make_provider(spec: str) -> AnthropicProvider:
    """Catalog factory for ``anthropic:<model>[@base_url][?key_env=VAR]``."""
    parsed = parse_spec(spec, {"key_env"})
    return AnthropicProvider(
        parsed.model, parsed.base_url, parsed.options.get("key_env", "ANTHROPIC_API_KEY")
    )
