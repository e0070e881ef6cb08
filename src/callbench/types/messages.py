"""Provider-neutral conversation types: messages, tool calls, model turns, usage, settings.

Every provider converts its wire format to and from these types; nothing downstream of a
provider re-parses provider text.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


def _absent(value: Any) -> bool:
    # New optional fields are left out of dumps when unset, so that cache keys and records of
    # providers that never set them stay byte-identical.
    return value is None


class ToolCall(BaseModel):
    """One structured function call emitted by a model."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Call id as given by the provider (synthesised when the provider gives none)."""
    name: str
    """Tool name exactly as emitted (after reversing any provider-name sanitisation)."""
    arguments_raw: str = ""
    """The raw argument text as received, before parsing."""
    arguments: dict[str, Any] | None = None
    """Parsed arguments; ``None`` when ``arguments_raw`` was not a JSON object."""
    parse_error: str | None = None
    """Why the raw arguments could not be parsed (malformed JSON, not an object...)."""
    provider_data: dict[str, Any] | None = Field(default=None, exclude_if=_absent)
    """Opaque fields the provider must get back on this call in the next request (Gemini's
    ``extra_content.google.thought_signature``); never scored."""
    recovered_from: str | None = Field(default=None, exclude_if=_absent)
    """Set when the call was read out of the answer's text (``--recover-text-calls``), not
    returned as a structured call: the serialisation it was read from (``hermes``, ``mistral``...)."""


class Usage(BaseModel):
    """Token usage reported by a provider for one request."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


class ModelTurn(BaseModel):
    """What a model returned for one request: text and/or tool calls."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    """Reasoning text when the provider returns it (replayed to providers that need it)."""
    reasoning_items: list[dict[str, Any]] | None = Field(default=None, exclude_if=_absent)
    """Opaque reasoning state to send back unchanged in the next request of the tool loop (the
    Responses API's ``reasoning`` items with their ``encrypted_content``)."""
    raw_text: str | None = Field(default=None, exclude_if=_absent)
    """The answer's text exactly as received, when a parser took calls out of it (prompt mode,
    recovered text calls); ``text`` is then what is left."""
    text_call_format: str | None = Field(default=None, exclude_if=_absent)
    """Native mode: the answer has no structured calls but its text holds one in a known
    serialisation (``hermes``, ``mistral``, ``llama``, ``json``, ``harmony``): the server's
    tool-call parser probably failed."""
    ttft_ms: float | None = Field(default=None, exclude_if=_absent)
    """Streamed requests: milliseconds from sending the request to the first text, reasoning or
    tool-call delta."""
    model: str | None = None
    """Model version string reported by the provider, when given."""
    latency_ms: float | None = None
    """Wall time of the request that produced this turn (set by the model wrapper)."""
    cached: bool = False
    """True when the turn came from the response cache, not a live request."""


class Message(BaseModel):
    """One conversation message."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Assistant messages only: the calls the model made."""
    tool_call_id: str | None = None
    """Tool messages only: the call this message answers."""
    name: str | None = None
    """Tool messages only: the tool that produced the result."""
    reasoning: str | None = None
    """Assistant messages: the turn's reasoning text (sent back to servers that want it)."""
    reasoning_items: list[dict[str, Any]] | None = Field(default=None, exclude_if=_absent)
    """Assistant messages: opaque reasoning items to send back unchanged (Responses API)."""

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=text)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", content=text)

    @classmethod
    def assistant(cls, turn: ModelTurn) -> Message:
        return cls(
            role="assistant",
            content=turn.text,
            tool_calls=turn.tool_calls,
            reasoning=turn.reasoning,
            reasoning_items=turn.reasoning_items,
        )

    @classmethod
    def tool(cls, call: ToolCall, content: str) -> Message:
        return cls(role="tool", content=content, tool_call_id=call.id, name=call.name)


class GenerationSettings(BaseModel):
    """Explicit generation settings; recorded in ``run.json`` and part of the cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = 0.0
    max_tokens: int = 4096
    stream: bool = False
    """Stream the answer (``--stream``): tool-call deltas are assembled, time to first token is
    recorded. Off by default; a server whose parser differs when streaming is measured as deployed."""
    provider_fallback: Literal[False] = False
    """Benchmark requests never fall back to another model (recorded for reproducibility)."""
    seed: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    tool_choice: str = "auto"
    """``auto``, ``required``, ``none`` or the name of one tool to force (``--tool-choice``)."""
    parallel_tool_calls: bool = True
    """Allow several calls in one answer (``--parallel-tool-calls on|off``)."""
    timeout_s: float = 120.0
    """Per-request timeout."""
