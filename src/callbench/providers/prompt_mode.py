"""``prompt:<model string>``: function calling for models without native tool support.

Tools are described in the system prompt; the model answers in text and calls are read from
it (``<tool_call>`` blocks, JSON, or Python-call syntax). Text that plainly tries to call a
tool but cannot be read gives a turn without calls and ``finish_reason="format_error"``: a
scored model failure (reason ``format_error``), never a crash. Every turn keeps the model's text as
received in ``raw_text``, beside what the parser took from it (``tool_calls``, and ``text``: the
prose left over), so the evidence is on the record exactly where reading failed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from callbench.errors import ConfigError
from callbench.providers.base import Provider, provider_from_catalog
from callbench.providers.text_calls import parse_text_calls
from callbench.providers.wire import round_prefix
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn

if TYPE_CHECKING:
    from callbench.types.case import Case

FORMAT_ERROR = "format_error"
INSTRUCTIONS = """You can call the tools described below. To call tools, answer with one or more blocks

<tool_call>{{"name": "<tool name>", "arguments": {{<argument object>}}}}</tool_call>

and nothing else. Results come back in the next message. When no call is needed, answer in plain text.

Tools (JSON Schema of the arguments):
{tools}"""


def tools_prompt(tools: list[ToolContract]) -> str:
    """The system-prompt section describing the tools."""
    lines = [
        json.dumps(
            {"name": t.name, "description": t.description, "parameters": t.provider_schema()},
            ensure_ascii=False,
        )
        for t in tools
    ]
    return INSTRUCTIONS.format(tools="\n".join(lines))


def to_text_messages(messages: list[Message], tools: list[ToolContract]) -> list[Message]:
    """Rewrite a native-tools conversation as plain text turns."""
    system = "\n\n".join(
        [m.content for m in messages if m.role == "system"] + ([tools_prompt(tools)] if tools else [])
    )
    out = [Message.system(system)] if system else []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            text = (
                f"<tool_response name={message.name!r} id={message.tool_call_id!r}>\n"
                f"{message.content}\n</tool_response>"
            )
            if out and out[-1].role == "user" and out[-1].content.startswith("<tool_response"):
                out[-1] = Message.user(out[-1].content + "\n" + text)
            else:
                out.append(Message.user(text))
        elif message.role == "assistant" and message.tool_calls:
            blocks = [_block(c.name, c.arguments, c.arguments_raw) for c in message.tool_calls]
            out.append(Message(role="assistant", content="\n".join(filter(None, [message.content, *blocks]))))
        else:
            out.append(Message(role=message.role, content=message.content))
    return out


def _block(name: str, arguments: dict[str, Any] | None, raw: str) -> str:
    args = json.dumps(arguments, ensure_ascii=False) if arguments is not None else raw
    return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {args}}}</tool_call>'


def read_turn(turn: ModelTurn, tools: list[ToolContract], id_prefix: str = "call") -> ModelTurn:
    """Replace a text turn by one with the calls read from its text.

    A turn that already carries native calls (some servers parse tool calls out of any text) is
    kept as it is. The text as received is kept in ``raw_text`` whatever the parser made of it.
    """
    if turn.tool_calls:
        return turn
    parsed = parse_text_calls(turn.text, {t.name for t in tools}, id_prefix=id_prefix)
    finish = FORMAT_ERROR if parsed.format_error else turn.finish_reason
    update = {"text": parsed.text, "tool_calls": parsed.calls, "finish_reason": finish, "raw_text": turn.text}
    return turn.model_copy(update=update)


class PromptProvider(Provider):
    """Wraps any provider; tools travel in the prompt instead of the API's tools field."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = f"prompt:{inner.name}"
        self.model = inner.model
        self.needs_network = inner.needs_network

    def connection_key(self) -> str:
        return self.inner.connection_key()

    def endpoint_url(self) -> str | None:
        return self.inner.endpoint_url()

    def describe(self) -> dict[str, Any]:
        """The inner description plus the prompt-mode marker (part of the cache key)."""
        return {**self.inner.describe(), "tool_mode": "prompt"}

    def for_case(self, case: Case) -> Provider:
        inner = self.inner.for_case(case)
        return self if inner is self.inner else PromptProvider(inner)

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        """Ask the inner model without native tools and read calls from its text."""
        turn = await self.inner.generate(to_text_messages(messages, tools), [], settings)
        return read_turn(turn, tools, id_prefix=round_prefix(messages))

    async def aclose(self) -> None:
        await self.inner.aclose()


def make_provider(spec: str) -> PromptProvider:
    """Catalog factory for ``prompt:<provider>:<model>``, e.g. ``prompt:openai:llama3@http://...``."""
    name, _, rest = spec.partition(":")
    if not name:
        raise ConfigError(
            "prompt: needs a model string: prompt:<provider>:<model>, e.g. prompt:openai:gpt-4o-mini"
        )
    return PromptProvider(provider_from_catalog(name, rest))
