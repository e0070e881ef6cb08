"""Conversation cases: the user side of a case, and what the trace keeps of each user turn.

A case with a ``user`` is a conversation: after every answer without calls the user speaks again,
until the user or the agent sends a stop signal, the user's turn budget is spent or the round budget
is. The user is *scripted* (fixed turns, or turns chosen by rules on what the agent said: tests,
oracles, reproducible CI runs) or *simulated* by a model (``--user-model``) from the case's
instructions, persona and known/unknown information. See ``docs/conversations.md``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from callbench.types.messages import Usage

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
USER_STOP_SIGNALS: tuple[str, ...] = (STOP, TRANSFER, OUT_OF_SCOPE)
"""The texts that end a conversation from the user's side (τ²-bench's conventions)."""
AGENT_STOP_SIGNALS: tuple[str, ...] = (STOP,)
"""The texts that end a conversation from the agent's side."""
DEFAULT_GREETING = "Hi! How can I help you today?"
"""The agent's first message when the conversation opens with the user's own words (τ²'s opening)."""


def _absent(value: Any) -> bool:
    return value is None


class UserCall(BaseModel):
    """One call the user makes on its own tools (dual control: the user's phone, its device)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptedTurn(BaseModel):
    """One turn of a scripted user: what it says, and the calls it makes on its own tools first."""

    model_config = ConfigDict(extra="forbid")

    say: str = ""
    """The user's message (a stop signal ends the conversation)."""
    calls: list[UserCall] = Field(default_factory=list)
    """Calls on the user's tools made before the message is sent."""
    when: str | None = None
    """A regular expression searched (case-insensitive) in the agent's last message: the turn is
    taken only when it matches. Turns without ``when`` are taken in order."""

    @field_validator("when")
    @classmethod
    def _valid_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"'when' is not a regular expression: {exc}") from None
        return value


class UserSide(BaseModel):
    """The user of a conversation case."""

    model_config = ConfigDict(extra="forbid")

    script: list[ScriptedTurn] | None = None
    """The scripted user's turns (used when the run names no ``--user-model``). When the script is
    spent the user sends ``###STOP###``."""
    instructions: str | None = None
    """What a simulated user is told about its situation and task (reason for the call, what to do
    when the agent says what)."""
    persona: str | None = None
    known_info: str | None = None
    """Facts the user knows and may give when asked (ids, names)."""
    unknown_info: str | None = None
    """Facts the user does not know and must not make up (audited)."""
    greeting: str | None = DEFAULT_GREETING
    """The agent's opening message before the user's first turn (``None``: the user speaks first)."""
    max_turns: int = Field(default=30, ge=1, le=1000)
    """At most this many user turns; then the conversation ends (``stop_reason: max_turns``)."""
    tools: list[str] = Field(default_factory=list)
    """Names of the user's own tools (served by the case's executor), offered to a simulated user."""
    stop_signals: list[str] = Field(default_factory=lambda: list(USER_STOP_SIGNALS))

    def simulated_prompt_parts(self) -> dict[str, str]:
        """The scenario a simulated user is given, by part (empty parts left out)."""
        parts = {
            "persona": self.persona,
            "instructions": self.instructions,
            "known_info": self.known_info,
            "unknown_info": self.unknown_info,
        }
        return {name: text for name, text in parts.items() if text}

    def is_stop(self, text: str) -> bool:
        """True when the user's message holds one of its stop signals."""
        return any(signal in text for signal in self.stop_signals)


class UserToolCall(BaseModel):
    """A call the user made on its own tools, with what it returned."""

    call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    result: Any = None
    error: str | None = Field(default=None, exclude_if=_absent)


class UserTurn(BaseModel):
    """One user turn of a conversation, as the trace keeps it."""

    after_round: int
    """The agent round this turn answered (0: the user's opening, before the first round)."""
    text: str = ""
    calls: list[UserToolCall] = Field(default_factory=list)
    stop: bool = False
    """True when the turn ended the conversation (it held a stop signal or the script was spent)."""
    usage: Usage | None = Field(default=None, exclude_if=_absent)
    """The simulated user's tokens for this turn (never added to the agent's usage)."""
    model: str | None = Field(default=None, exclude_if=_absent)
    latency_ms: float | None = Field(default=None, exclude_if=_absent)


class SimulatorInfo(BaseModel):
    """Who played the user: recorded in ``run.json`` and every record of a conversation case."""

    kind: str
    """``scripted`` or ``simulated``."""
    model: str | None = None
    """The simulated user's model spec (``--user-model``)."""
    seed: int | None = None
    temperature: float | None = None
    prompt_sha256: str | None = None
    """Hash of the fixed texts the simulated user is given (guidelines and turn format)."""

    @property
    def label(self) -> str:
        """A short name of the simulator, part of the records' harness mode (never pooled)."""
        if self.kind == "scripted":
            return "scripted"
        return f"{self.model}~t{self.temperature:g}~s{self.seed}~{(self.prompt_sha256 or '')[:8]}"
