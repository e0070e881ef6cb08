"""OpenAI Responses API (``POST {base_url}/responses``) with function tools and reasoning.

``openai-responses:MODEL[@URL][?options]`` speaks the API OpenAI's reasoning models need for tools
plus reasoning. The conversation is sent whole on every request (``store: false``: nothing is kept
on the server), so the reasoning of a tool round reaches the next round the stateless way: the
``reasoning`` output items, with the ``encrypted_content`` that ``include:
["reasoning.encrypted_content"]`` asks for, are kept on the turn exactly as received and sent back
unchanged, each before the call it preceded.

``build_request`` and ``parse_response`` are pure; :class:`StreamAssembler` turns server-sent
events into the same response body; :class:`OpenAIResponsesProvider` adds HTTP.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from callbench.errors import (
    ConfigError,
    FatalProviderError,
    ProviderError,
    RateLimitedError,
    TransientProviderError,
)
from callbench.providers.base import Provider
from callbench.providers.openai_strict import strict_parameters, strip_optional_nulls
from callbench.providers.presets import get_preset
from callbench.providers.spec import parse_spec
from callbench.providers.tool_memo import memo
from callbench.providers.wire import (
    ClientHolder,
    ContextLengthError,
    Endpoint,
    SSEDecoder,
    ToolNameMap,
    dumps_bytes,
    error_for_status,
    json_object_body,
    parse_arguments,
    raw_text,
    round_prefix,
    unique_call_ids,
    wire_schema,
)
from callbench.secrets import get_key, scrub
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall, Usage

if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "openai-responses"
ENCRYPTED_REASONING = "reasoning.encrypted_content"
_OPTIONS = {"key_env", "strict", "reasoning_summary", "encrypted_reasoning", "omit_temperature"}
_SUMMARIES = ("auto", "concise", "detailed")
_CHOICES = ("auto", "required", "none")
CHAT_BODY_MESSAGE = (
    f"{NAME}: this endpoint answered /responses with a Chat Completions body: use openai:MODEL@URL"
)
# Item keys that say where a call stood in the output (ToolCall.provider_data).
_ITEM_ID = "item_id"
_REASONING_BEFORE = "reasoning_before"


@dataclass(frozen=True)
class ResponsesOptions:
    """Model-string options of ``openai-responses:`` (``?strict=1&reasoning_summary=0``...)."""

    strict: bool = False
    """Send ``strict: true`` function schemas (optional parameters become nullable and required)."""
    reasoning_summary: str | None = "auto"
    """``reasoning.summary`` sent with a reasoning effort (``None``: left out)."""
    encrypted_reasoning: bool = True
    """Ask for ``reasoning.encrypted_content`` (needed to carry reasoning across rounds statelessly)."""
    omit_temperature: bool = False
    """Leave ``temperature`` out even without a reasoning effort (models that refuse any value)."""


class ResponseFailedError(ProviderError):
    """The server answered with ``status: failed`` (or an ``error`` event) for a reason that is
    neither a rate limit, a server fault nor a context overflow: this case's request is refused as
    sent, so retrying cannot help, but the other cases may go on (an error record)."""


# -- request ------------------------------------------------------------------------------------


def build_request(
    model: str,
    messages: list[Message],
    tools: list[ToolContract],
    settings: GenerationSettings,
    options: ResponsesOptions | None = None,
) -> tuple[dict[str, Any], ToolNameMap]:
    """Build a Responses API request body.

    Leading system messages become ``instructions``; a system message later in the conversation
    becomes a ``developer`` message where it stood.

    Returns:
        The JSON body and the tool-name map needed to read the response.
    """
    options = options or ResponsesOptions()
    names = ToolNameMap.build([t.name for t in tools])
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    body: dict[str, Any] = {"model": model}
    instructions = "\n\n".join(m.content for m in messages[:lead] if m.content)
    if instructions:
        body["instructions"] = instructions
    body["input"] = [item for m in messages[lead:] for item in _items(m, names)]
    body["max_output_tokens"] = settings.max_tokens
    body["store"] = False
    body["stream"] = bool(settings.stream)
    if options.encrypted_reasoning:
        body["include"] = [ENCRYPTED_REASONING]
    if settings.reasoning_effort:
        reasoning: dict[str, Any] = {"effort": settings.reasoning_effort}
        if options.reasoning_summary:
            reasoning["summary"] = options.reasoning_summary
        body["reasoning"] = reasoning
    elif not options.omit_temperature:
        # Reasoning models refuse a temperature; only sampled models get one.
        body["temperature"] = settings.temperature
    if tools:
        body["tools"] = [_tool(t, names, options.strict) for t in tools]
        body["tool_choice"] = _tool_choice(settings.tool_choice, names)
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    return body, names


def _items(message: Message, names: ToolNameMap) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {"type": "function_call_output", "call_id": message.tool_call_id or "", "output": message.content}
        ]
    if message.role == "assistant":
        return assistant_items(message, names)
    role = "developer" if message.role == "system" else message.role
    return [{"type": "message", "role": role, "content": message.content}]


def assistant_items(message: Message, names: ToolNameMap) -> list[dict[str, Any]]:
    """The input items of an earlier assistant turn: its reasoning items unchanged, its text, its calls.

    Each reasoning item goes back before the call it preceded in the output (the count is kept on
    the call as ``provider_data["reasoning_before"]``; without it, all reasoning goes first).
    Reasoning items that came after the last call precede the text; with neither text nor a call
    after them (an answer cut short) they are left out, since the API refuses a reasoning item
    that no item follows.
    """
    reasoning = list(message.reasoning_items or [])
    calls = message.tool_calls
    if not calls and not message.content:
        return []
    text = [{"type": "message", "role": "assistant", "content": message.content}] if message.content else []
    first = _reasoning_before(calls[0], len(reasoning)) if calls else len(reasoning)
    items: list[dict[str, Any]] = reasoning[:first]
    sent = first
    trailing = bool(calls) and _reasoning_before(calls[-1], sent) < len(reasoning)
    if not trailing:
        items += text
    for call in calls:
        upto = max(sent, _reasoning_before(call, sent))
        items += reasoning[sent:upto]
        sent = max(sent, upto)
        items.append(_call_item(call, names))
    if sent < len(reasoning) and text:
        items += reasoning[sent:] + text
    return items


def _reasoning_before(call: ToolCall, default: int) -> int:
    data = call.provider_data or {}
    value = data.get(_REASONING_BEFORE)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _call_item(call: ToolCall, names: ToolNameMap) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call"}
    item_id = (call.provider_data or {}).get(_ITEM_ID)
    if isinstance(item_id, str) and item_id:
        item["id"] = item_id
    item["call_id"] = call.id
    item["name"] = names.wire(call.name)
    item["arguments"] = call.arguments_raw or json.dumps(call.arguments or {})
    return item


def _tool(tool: ToolContract, names: ToolNameMap, strict: bool) -> dict[str, Any]:
    # The Responses API makes function tools strict when `strict` is left out: always say which.
    parameters = memo(tool, "openai-strict", _strict_schema) if strict else memo(tool, "schema", wire_schema)
    return {
        "type": "function",
        "name": names.wire(tool.name),
        "description": tool.description,
        "parameters": parameters,
        "strict": strict,
    }


def _strict_schema(tool: ToolContract) -> dict[str, Any]:
    return strict_parameters(wire_schema(tool))


def _tool_choice(choice: str, names: ToolNameMap) -> str | dict[str, str]:
    if choice in _CHOICES:
        return choice
    return {"type": "function", "name": names.wire(choice)}


# -- response -----------------------------------------------------------------------------------


def parse_response(
    data: dict[str, Any],
    names: ToolNameMap,
    tools: list[ToolContract] | None = None,
    strict: bool = False,
    id_prefix: str = "call",
) -> ModelTurn:
    """Convert a Responses API response body into a :class:`ModelTurn`.

    Reasoning items are kept whole (``reasoning_items``), their summary text joined into
    ``reasoning``; ``function_call`` items become calls that remember their item id and how many
    reasoning items came before them; a refusal becomes the text with ``finish_reason`` ``refusal``.
    Malformed arguments are kept on the call (``parse_error``), never raised.

    Raises:
        FatalProviderError: The body is a Chat Completions body (the wrong API at this URL).
        ContextLengthError, RateLimitedError, TransientProviderError, ResponseFailedError: the
            response has ``status: failed`` (mapped by its error code).
        TransientProviderError: The body has no ``output`` list (a server fault).
    """
    if "choices" in data and "output" not in data:
        raise FatalProviderError(CHAT_BODY_MESSAGE)
    if data.get("status") == "failed":
        raise failure_error(data.get("error"), "response failed")
    output = data.get("output")
    if not isinstance(output, list):
        raise TransientProviderError(f"{NAME}: response has no output list")
    schemas = {t.name: memo(t, "schema", wire_schema) for t in tools or []} if strict else {}
    texts: list[str] = []
    refusals: list[str] = []
    thoughts: list[str] = []
    reasoning_items: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            reasoning_items.append(item)
            thoughts += _reasoning_texts(item)
        elif kind == "function_call":
            fallback = f"{id_prefix}_{len(calls)}"
            calls.append(_call(item, fallback, len(reasoning_items), names, schemas))
        elif kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal") or ""))
                elif isinstance(part, dict):
                    texts.append(str(part.get("text") or ""))
    return ModelTurn(
        text="".join(texts) or "".join(refusals),
        tool_calls=unique_call_ids(calls),
        usage=_usage(data.get("usage")),
        finish_reason=_finish_reason(data, bool(calls), bool(refusals) and not texts),
        reasoning="\n\n".join(t for t in thoughts if t) or None,
        reasoning_items=reasoning_items or None,
        model=data.get("model") if isinstance(data.get("model"), str) else None,
    )


def _reasoning_texts(item: dict[str, Any]) -> list[str]:
    # OpenAI returns summaries; open-weight servers (gpt-oss) may return the reasoning text itself.
    parts = item.get("summary") or item.get("content") or []
    if not isinstance(parts, list):
        return []
    return [str(p.get("text") or "") for p in parts if isinstance(p, dict)]


def _call(
    item: dict[str, Any],
    fallback_id: str,
    reasoning_before: int,
    names: ToolNameMap,
    schemas: dict[str, dict[str, Any]],
) -> ToolCall:
    name = names.original(str(item.get("name") or ""))
    payload = item.get("arguments")
    arguments, error = parse_arguments(payload)
    if arguments is not None and name in schemas:
        # Strict mode made optional parameters required and nullable: drop those nulls again.
        arguments = strip_optional_nulls(arguments, schemas[name])
    data: dict[str, Any] = {_REASONING_BEFORE: reasoning_before}
    if isinstance(item.get("id"), str) and item["id"]:
        data[_ITEM_ID] = item["id"]
    call_id = item.get("call_id")
    return ToolCall(
        id=str(call_id) if isinstance(call_id, str) and call_id else fallback_id,
        name=name,
        arguments_raw=raw_text(payload if payload is not None else ""),
        arguments=arguments,
        parse_error=error,
        provider_data=data,
    )


def _finish_reason(data: dict[str, Any], has_calls: bool, refused: bool) -> str:
    if data.get("status") == "incomplete":
        details = data.get("incomplete_details") or {}
        reason = details.get("reason") if isinstance(details, dict) else None
        return "length" if reason == "max_output_tokens" else str(reason or "incomplete")
    if refused:
        return "refusal"
    return "tool_calls" if has_calls else "stop"


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    output = raw.get("output_tokens_details") or {}
    cached = raw.get("input_tokens_details") or {}
    return Usage(
        input_tokens=_int(raw.get("input_tokens")),
        output_tokens=_int(raw.get("output_tokens")),
        reasoning_tokens=_int(output.get("reasoning_tokens") if isinstance(output, dict) else 0),
        cached_tokens=_int(cached.get("cached_tokens") if isinstance(cached, dict) else 0),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- errors -------------------------------------------------------------------------------------


def failure_error(error: Any, what: str) -> ProviderError:
    """The error for a failed response or an ``error`` event, by its ``code``."""
    error = error if isinstance(error, dict) else {}
    code = str(error.get("code") or "")
    message = _clean(str(error.get("message") or "no message"))
    text = f"{NAME}: {what}{f' ({code})' if code else ''}: {message}"
    if code == "context_length_exceeded":
        return ContextLengthError(
            f"{NAME}: the conversation does not fit the model's context window ({message})"
        )
    if code in ("rate_limit_exceeded", "rate_limit_error"):
        return RateLimitedError(text)
    if not code or code in ("server_error", "internal_error", "server_is_overloaded", "overloaded"):
        return TransientProviderError(text)
    return ResponseFailedError(text)


def http_error(
    status: int, body: str, headers: Mapping[str, str], where: Endpoint, url: str
) -> ProviderError:
    """Map a non-2xx answer to ``/responses``: as every provider does (:func:`error_for_status`),
    plus the Responses API's own signals: the ``context_length_exceeded`` code, a 404 from a server
    that has no ``/responses`` route, a refused reasoning option."""
    error = _error_object(body)
    code = str(error.get("code") or "")
    message = _clean(str(error.get("message") or ""))
    if status in (400, 413, 422) and code == "context_length_exceeded":
        return ContextLengthError(
            f"{NAME} HTTP {status}: the conversation does not fit the model's context window ({message})"
        )
    if status == 404 and not _about_model_or_input(error):
        return FatalProviderError(
            f"{NAME} HTTP 404: {url} was not found: the server at {where.base_url} does not serve the "
            f"Responses API; for a Chat Completions server use openai:{where.model}@{where.base_url}"
        )
    param = str(error.get("param") or "")
    if status == 400 and param.startswith("reasoning"):
        return FatalProviderError(
            f"{NAME} HTTP 400: model '{where.model}' refuses the reasoning option ({param}): change or "
            f"drop --reasoning-effort, or add ?reasoning_summary=0 ({message})"
        )
    if status == 400 and param == "temperature":
        return FatalProviderError(
            f"{NAME} HTTP 400: model '{where.model}' refuses temperature: add ?omit_temperature=1 "
            f"to the model string ({message})"
        )
    return error_for_status(status, body, headers, where)


def _error_object(body: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return {}
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else {}


def _about_model_or_input(error: dict[str, Any]) -> bool:
    # OpenAI answers 404 for an unknown model and for an input item it cannot find; neither
    # means that /responses is missing.
    text = f"{error.get('code') or ''} {error.get('param') or ''} {error.get('message') or ''}".lower()
    return "model" in text or "item" in text or "input" in text


def _clean(text: str) -> str:
    # Error text ends up on one terminal line: no key, no control characters, bounded.
    return " ".join(scrub(text).split())[:300]


# -- streaming ----------------------------------------------------------------------------------


class SseDecoder:
    """:class:`~callbench.providers.wire.SSEDecoder` giving ``(event name, data)`` pairs, the form
    :class:`StreamAssembler` takes."""

    def __init__(self) -> None:
        self._decoder = SSEDecoder()

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """Return ``(event name, data)`` of every event completed by ``chunk``."""
        return [(e.event or "", e.data) for e in self._decoder.feed(chunk)]

    def close(self) -> list[tuple[str, str]]:
        """Events left when the stream ended (a last event without its blank line)."""
        return [(e.event or "", e.data) for e in self._decoder.close()]


class StreamAssembler:
    """Builds the final response body from Responses streaming events.

    ``response.completed`` (or ``response.incomplete``) carries the whole response; when its
    ``output`` is empty, the items are assembled from ``response.output_item.*`` events and the
    text and argument deltas. ``response.failed`` and ``error`` events raise the mapped error.
    """

    def __init__(self, started: float) -> None:
        self.started = started
        self.ttft_ms: float | None = None
        self.final: dict[str, Any] | None = None
        self.events = 0
        self.last = "none"
        self._items: dict[int, dict[str, Any]] = {}
        self._done: dict[int, dict[str, Any]] = {}
        self._text: dict[int, str] = {}
        self._args: dict[int, str] = {}

    @property
    def finished(self) -> bool:
        """True once a terminal event arrived."""
        return self.final is not None

    def add(self, name: str, data: str) -> None:
        """Take one event (``data`` is its JSON text)."""
        if data.strip() == "[DONE]":
            return
        try:
            event = json.loads(data)
        except (json.JSONDecodeError, RecursionError):
            raise TransientProviderError(
                f"{NAME}: stream event {self.events + 1} is not JSON ({_clean(data)[:80]})"
            ) from None
        if not isinstance(event, dict):
            raise TransientProviderError(f"{NAME}: stream event {self.events + 1} is not a JSON object")
        if "choices" in event and "type" not in event:
            raise FatalProviderError(CHAT_BODY_MESSAGE)
        kind = str(event.get("type") or name)
        self.events += 1
        self.last = kind
        if self.ttft_ms is None and (kind.endswith(".delta") or kind == "response.output_item.done"):
            self.ttft_ms = (time.perf_counter() - self.started) * 1000.0
        self._take(kind, event)

    def _take(self, kind: str, event: dict[str, Any]) -> None:
        index = event.get("output_index")
        slot = index if isinstance(index, int) else -1
        if kind == "response.output_item.added" and isinstance(event.get("item"), dict):
            self._items[slot] = dict(event["item"])
        elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            self._done[slot] = event["item"]
        elif kind == "response.output_text.delta":
            self._text[slot] = self._text.get(slot, "") + str(event.get("delta") or "")
        elif kind == "response.function_call_arguments.delta":
            self._args[slot] = self._args.get(slot, "") + str(event.get("delta") or "")
        elif kind == "response.function_call_arguments.done" and isinstance(event.get("arguments"), str):
            self._args[slot] = event["arguments"]
        elif kind in ("response.completed", "response.incomplete"):
            response = event.get("response")
            self.final = response if isinstance(response, dict) else {"status": "completed"}
        elif kind == "response.failed":
            response = event.get("response")
            raise failure_error(
                response.get("error") if isinstance(response, dict) else None, "response failed"
            )
        elif kind == "error":
            raise failure_error(
                event.get("error") if isinstance(event.get("error"), dict) else event, "stream error"
            )

    def response(self) -> dict[str, Any]:
        """The final response body.

        Raises:
            TransientProviderError: The stream ended before a terminal event (it was cut).
        """
        if self.final is None:
            raise TransientProviderError(
                f"{NAME}: the stream was cut before response.completed "
                f"(after {self.events} event(s); last: {self.last})"
            )
        output = self.final.get("output")
        if isinstance(output, list) and output:
            return self.final
        return {**self.final, "output": self._assembled()}

    def _assembled(self) -> list[dict[str, Any]]:
        out = []
        for slot in sorted(set(self._items) | set(self._done)):
            if slot in self._done:
                out.append(self._done[slot])
                continue
            item = dict(self._items[slot])
            if item.get("type") == "function_call" and slot in self._args:
                item["arguments"] = self._args[slot]
            elif item.get("type") == "message" and slot in self._text:
                item["content"] = [{"type": "output_text", "text": self._text[slot]}]
            out.append(item)
        return out


# -- provider -----------------------------------------------------------------------------------


class OpenAIResponsesProvider(Provider):
    """A model behind an OpenAI Responses API endpoint (``{base_url}/responses``)."""

    streams = True

    name = NAME

    def __init__(
        self,
        model: str,
        base_url: str,
        key_env: str,
        key_required: bool,
        options: ResponsesOptions | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.key_env = key_env
        self.options = options or ResponsesOptions()
        self._key = get_key(key_env, required=key_required, purpose=f"the {NAME} endpoint")
        self._clients = ClientHolder()
        self._where = Endpoint(NAME, model, self.base_url, key_env)

    def connection_key(self) -> str:
        """Requests to one base URL share connections and rate limits (with ``openai:`` too)."""
        return f"openai-compat|{self.base_url}"

    def endpoint_url(self) -> str:
        """The base URL (checked for a listening server before a run)."""
        return self.base_url

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records (never the key)."""
        return {
            "provider": NAME,
            "api": "openai-responses",
            "model": self.model,
            "base_url": self.base_url,
            "key_env": self.key_env,
            "options": vars(self.options),
        }

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        """Send one Responses request (streamed when ``settings.stream``) and parse the answer."""
        body, names = build_request(self.model, messages, tools, settings, self.options)
        data, ttft = await self._post(body, settings.timeout_s, stream=bool(settings.stream))
        turn = parse_response(
            data, names, tools, strict=self.options.strict, id_prefix=round_prefix(messages)
        )
        if ttft is not None:
            turn.ttft_ms = ttft
        return turn

    async def _post(
        self, body: dict[str, Any], timeout_s: float, stream: bool
    ) -> tuple[dict[str, Any], float | None]:
        import aiohttp

        url = f"{self.base_url}/responses"
        headers = {"Content-Type": "application/json", **self._headers()}
        if stream:
            headers["Accept"] = "text/event-stream"
        started = time.perf_counter()
        try:
            async with self._clients.get().post(
                url, data=dumps_bytes(body), headers=headers, timeout=aiohttp.ClientTimeout(total=timeout_s)
            ) as reply:
                if reply.status >= 300:
                    text = (await reply.read()).decode("utf-8", "replace")
                    raise http_error(reply.status, text, reply.headers, self._where, url)
                if stream and "text/event-stream" in reply.headers.get("Content-Type", ""):
                    return await _read_stream(reply, StreamAssembler(started))
                return _json_object(await reply.read()), None
        except TimeoutError:
            raise TransientProviderError(f"{NAME}: request to {url} timed out after {timeout_s:g}s") from None
        except aiohttp.ClientPayloadError as exc:
            what = "the stream was cut" if stream else "truncated response body"
            raise TransientProviderError(
                f"{NAME}: {what} ({_clean(str(exc)) or type(exc).__name__})"
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            # Dropped connections, resets, refused connects: the server may come back.
            detail = _clean(str(exc))[:200]
            raise TransientProviderError(
                f"{NAME}: connection error ({type(exc).__name__}{': ' + detail if detail else ''})"
            ) from None

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._clients.aclose()


async def _read_stream(reply: Any, assembler: StreamAssembler) -> tuple[dict[str, Any], float | None]:
    decoder = SseDecoder()
    # iter_any, not line iteration: one event (response.completed) can exceed aiohttp's line limit.
    async for chunk in reply.content.iter_any():
        for name, data in decoder.feed(chunk):
            assembler.add(name, data)
        if assembler.finished:
            break
    if not assembler.finished:
        for name, data in decoder.close():
            assembler.add(name, data)
    return assembler.response(), assembler.ttft_ms


def _json_object(raw: bytes) -> dict[str, Any]:
    return json_object_body(raw, NAME)


def _summary_option(value: str | None) -> str | None:
    if value is None or value.lower() in ("1", "true", "yes", "on"):
        return "auto"
    if value.lower() in ("0", "false", "no", "off"):
        return None
    if value in _SUMMARIES:
        return value
    raise ConfigError(
        f"model option reasoning_summary={value!r}: expected 0, 1 or one of {', '.join(_SUMMARIES)}"
    )


def make_provider(spec: str) -> OpenAIResponsesProvider:
    """Catalog factory for ``openai-responses:MODEL[@URL][?options]``.

    The key and base URL follow ``openai:``: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` or ``@URL``;
    a base URL other than OpenAI's makes the key optional. Options: ``strict``,
    ``reasoning_summary`` (``0``, ``1``, ``auto``, ``concise``, ``detailed``),
    ``encrypted_reasoning``, ``omit_temperature``, ``key_env``.
    """
    parsed = parse_spec(spec, _OPTIONS)
    preset = get_preset("openai")
    base_url = parsed.base_url or preset.resolved_base_url()
    options = ResponsesOptions(
        strict=parsed.flag("strict", False),
        reasoning_summary=_summary_option(parsed.options.get("reasoning_summary")),
        encrypted_reasoning=parsed.flag("encrypted_reasoning", True),
        omit_temperature=parsed.flag("omit_temperature", False),
    )
    key_env = parsed.options.get("key_env") or preset.key_env or "OPENAI_API_KEY"
    key_required = not (parsed.base_url and parsed.base_url != preset.base_url)
    return OpenAIResponsesProvider(parsed.model, base_url, key_env, key_required, options)
