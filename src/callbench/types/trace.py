"""The trace: request-scoped evidence of one case's episode; the only input scorers read."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    FieldSerializationInfo,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from callbench.types.conversation import UserTurn
from callbench.types.jsoncodec import FROM_JSON_TEXT
from callbench.types.messages import Usage
from callbench.types.textcap import cap_text

ExecutionStatus = Literal["ok", "error", "skipped", "rejected", "not_executed"]
"""``ok``/``error``: executed; ``skipped``: call-only; ``rejected``: not executed because the call was
malformed, schema-invalid or named an unknown tool; ``not_executed``: past the call cap or no executor."""

StopReason = Literal[
    "answer",
    "max_rounds",
    "max_calls",
    "timeout",
    "error",
    "executor_end",
    "agent_crashed",
    "agent_timeout",
    "no_answer",
    "context_overflow",
    "user_stop",
    "agent_stop",
    "max_turns",
]
"""``user_stop`` / ``agent_stop`` / ``max_turns``: a conversation (a case with a user) ended because the
user or the agent sent a stop signal, or the user's turn budget was spent (``docs/conversations.md``).
``executor_end``: the executor session declared the episode over (e.g. a replayed gold path ended).
``context_overflow``: the endpoint refused a request because the conversation exceeds the model's
context window; scored, with the reason ``context_overflow`` counted apart in the summary.
``agent_crashed`` / ``agent_timeout`` / ``no_answer``: an agent under test (``--agent``) crashed or exited
non-zero, ran past the case's time limit, or finished without an answer; scored failures."""

AGENT_FAILURES: tuple[StopReason, ...] = ("agent_crashed", "agent_timeout", "no_answer")


def _absent(value: Any) -> bool:
    return value is None


class TraceCall(BaseModel):
    """One structured call and everything that happened to it."""

    index: int
    """Position among all calls of the episode (0-based, emitted order)."""
    call_id: str
    round: int
    """1-based round in which the model emitted the call."""
    tool: str
    arguments_raw: str = ""
    arguments: dict[str, Any] | None = None
    parse_error: str | None = None
    known_tool: bool = True
    """False when the name is not among the offered tools."""
    schema_valid: bool = False
    schema_errors: list[str] = Field(default_factory=list)
    execution: ExecutionStatus = "not_executed"
    result: Any = None
    error: str | None = None
    duration_ms: float = 0.0
    annotations: dict[str, Any] = Field(default_factory=dict)
    started_at: float | None = Field(default=None, exclude_if=_absent)
    """Unix time the call arrived (agent-under-test runs, where calls come over MCP; else absent)."""
    recovered_from: str | None = Field(default=None, exclude_if=_absent)
    """``--recover-text-calls``: the serialisation the call was read from in the answer's text (the
    server returned no structured call); absent for structured calls."""

    @property
    def executed_ok(self) -> bool:
        return self.execution == "ok"

    @property
    def execution_observed(self) -> bool:
        return self.execution in ("ok", "error")


class RoundInfo(BaseModel):
    """One model request/response round."""

    index: int
    started_at: float
    """Unix time when the request was sent."""
    text: str = ""
    call_ids: list[str] = Field(default_factory=list)
    usage: Usage | None = None
    latency_ms: float | None = None
    cached: bool = False
    model: str | None = None
    finish_reason: str | None = None
    raw_text: str | None = Field(default=None, exclude_if=_absent)
    """The model's text exactly as received, when a parser took calls out of it (prompt mode,
    ``--recover-text-calls``) and it differs from ``text``, which is what was left."""
    reasoning: str | None = Field(default=None, exclude_if=_absent)
    """The round's reasoning text, where the API returns it (tokens are in ``usage``)."""
    text_call_format: str | None = Field(default=None, exclude_if=_absent)
    """Native mode: the answer had no structured calls but its text holds a call in this
    serialisation: the server's tool-call parser probably failed (reason ``serving_parse_suspected``)."""
    recovered_calls: int | None = Field(default=None, exclude_if=_absent)
    """``--recover-text-calls``: how many of the round's calls were read from its text."""
    ttft_ms: float | None = Field(default=None, exclude_if=_absent)
    """Streamed requests: milliseconds to the first byte of the answer."""
    nudge: str | None = None
    """A harness message added after this round (oracle-assisted step reminder)."""
    reconstructed: bool | None = Field(default=None, exclude_if=_absent)
    """True for an agent under test: the round was inferred from call timing, for display only."""
    agent_request: bool | None = Field(default=None, exclude_if=_absent)
    """True for an agent under test whose model callbench's proxy served: the round is one request
    the agent made to its model (usage, latency and model as answered), with the calls that followed
    it (docs/agents.md, "The agent's model")."""
    agent_reported: bool | None = Field(default=None, exclude_if=_absent)
    """True for an agent under test that sent its own OpenTelemetry spans (``--agent-otel``) while
    callbench's proxy did not serve its model: the round is one model request the agent reported
    (tokens, latency, model and finish reason as its spans say), with the calls that followed it
    (docs/agents.md, "The agent's own spans")."""


class AgentRun(BaseModel):
    """How an agent under test (``--agent``) ran on one case."""

    agent: str
    """The ``--agent`` spec."""
    outcome: str
    """``answer``, ``agent_crashed``, ``agent_timeout`` or ``no_answer``."""
    exit_code: int | None = None
    stderr_tail: str = ""
    message: str = ""
    duration_ms: float = 0.0
    mcp_url: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


KEEP_COPIES = "keep_copies"
"""Serialization context key: ``{KEEP_COPIES: True}`` writes ``final_text`` even when it is the last
round's text (page data read by a browser, not by :class:`Trace`)."""


class Trace(BaseModel):
    """Everything the model did in one episode, as structured evidence."""

    rounds: list[RoundInfo] = Field(default_factory=list)
    calls: list[TraceCall] = Field(default_factory=list)
    final_text: str = ""
    """The episode's answer. Stored once: written as ``null`` when it is the last round's text (as it
    is whenever the episode ended with an answer), and read back as that text."""
    stop_reason: StopReason = "answer"
    usage: Usage = Field(default_factory=Usage)
    final_state: dict[str, Any] | None = None
    """Executor state after the episode, when the executor keeps state."""
    agent: AgentRun | None = Field(default=None, exclude_if=_absent)
    """Agent-under-test runs only: exit status, stderr tail, answer source."""
    loop_stall_s: float | None = Field(default=None, exclude_if=_absent)
    """Seconds this case held callbench's event loop (a blocking tool, executor or built-in agent),
    stalling every other case meanwhile; the other cases' clocks were credited for it. QC flag
    ``blocked_event_loop``."""
    user_turns: list[UserTurn] | None = Field(default=None, exclude_if=_absent)
    """Conversation cases: every user turn (its text, its calls on the user's tools, the simulated
    user's tokens), in order; ``after_round`` places each between the agent's rounds."""
    truncated: dict[str, int] | None = Field(default=None, exclude_if=_absent)
    """Texts cut to their size limit (``--size-limit``): field path (``rounds[0].text``,
    ``final_text``, ``calls[2].result``, ``agent.stderr_tail``) -> its original size in UTF-8 bytes.
    Each such text keeps a head and a tail around a marker saying how many bytes were cut."""

    def note_truncated(self, path: str, original_bytes: int | None) -> None:
        """Record that the text at ``path`` was cut from ``original_bytes`` (``None``: it was not)."""
        if original_bytes is not None:
            self.truncated = {**(self.truncated or {}), path: original_bytes}

    def adopt_rounds(
        self, rounds: list[RoundInfo], text_limit: int | None, *, reasoning: bool = False
    ) -> None:
        """Make ``rounds`` the trace's rounds (an agent's model requests, as its proxy or its own spans
        reported them): numbered from 1, their texts (and, with ``reasoning``, their reasoning) capped
        at ``text_limit`` UTF-8 bytes, each call moved to the round that lists it, and ``usage`` the
        rounds' tokens."""
        for n, info in enumerate(rounds):
            info.index = n + 1
            if text_limit is None:
                continue
            info.text, size = cap_text(info.text, text_limit)
            self.note_truncated(f"rounds[{n}].text", size)
            if reasoning and info.reasoning is not None:
                info.reasoning, size = cap_text(info.reasoning, text_limit)
                self.note_truncated(f"rounds[{n}].reasoning", size)
        by_id = {cid: info.index for info in rounds for cid in info.call_ids}
        for call in self.calls:
            call.round = by_id.get(call.call_id, call.round)
        self.rounds = rounds
        total = Usage()
        for info in rounds:
            if info.usage is not None:
                total = total + info.usage
        self.usage = total

    _final_text_as_read: bool = PrivateAttr(default=False)
    """Read from a record that wrote ``final_text`` out (written before it was stored once): written
    out again, so that re-scoring such a record changes its line only where a verdict changed (a
    review is tied to the line's hash)."""

    @model_validator(mode="wrap")
    @classmethod
    def _remember_written_final_text(
        cls, data: Any, handler: ModelWrapValidatorHandler[Trace], info: ValidationInfo
    ) -> Trace:
        trace = handler(data)
        from_text = info.mode == "json" or bool(info.context and info.context.get(FROM_JSON_TEXT))
        if from_text and isinstance(data, dict) and data.get("final_text") is not None:
            trace._final_text_as_read = True
        return trace

    @field_serializer("final_text")
    def _final_text_once(self, value: str, info: FieldSerializationInfo) -> str | None:
        if value and self.rounds and self.rounds[-1].text == value and not self._final_text_as_read:
            if not (info.context and info.context.get(KEEP_COPIES)):
                return None  # the last round's text: read back from there
        return value

    @field_validator("final_text", mode="before")
    @classmethod
    def _final_text_restored(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:  # stored once, as the last round's text
            rounds = info.data.get("rounds") or []
            return rounds[-1].text if rounds else ""
        return value


def trace_from_calls(calls: list[dict[str, Any]], *, final_text: str = "") -> Trace:
    """Build a trace from plain call dicts (e.g. stored golden paths) for offline scoring.

    Each dict needs ``tool`` and ``arguments``; optional ``result``, ``execution`` (default ``ok``),
    ``schema_valid`` (default True), ``schema_errors``, ``round``. Use
    :func:`callbench.harness.validate.revalidate` to recompute schema verdicts against a registry.
    """
    out = []
    for index, spec in enumerate(calls):
        out.append(
            TraceCall(
                index=index,
                call_id=spec.get("call_id", f"call_{index}"),
                round=spec.get("round", index + 1),
                tool=spec["tool"],
                arguments=spec.get("arguments", {}),
                arguments_raw=spec.get("arguments_raw", ""),
                parse_error=spec.get("parse_error"),
                known_tool=spec.get("known_tool", True),
                schema_valid=spec.get("schema_valid", True),
                schema_errors=spec.get("schema_errors", []),
                execution=spec.get("execution", "ok"),
                result=spec.get("result"),
                error=spec.get("error"),
            )
        )
    return Trace(calls=out, final_text=final_text)
