"""Verdicts and reason codes: what every scorer returns for one case."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ReasonCode = Literal[
    "no_structured_call",
    "tool_missing",
    "wrong_order",
    "unexpected_call",
    "unexpected_state_change",
    "argument_mismatch",
    "argument_missing",
    "unresolved_reference",
    "schema_invalid",
    "unknown_tool",
    "malformed_arguments",
    "not_executed",
    "execution_failed",
    "unexpected_success",
    "answer_mismatch",
    "round_limit",
    "timeout",
    "agent_crashed",
    "agent_timeout",
    "no_answer",
    "serving_parse_suspected",
    "format_error",
    "output_truncated",
    "context_overflow",
]
"""Machine-readable failure reasons of the three strict tiers. Other scorers may use their own codes.

The last four tell serving faults and run limits apart from the model's choices (see
``callbench.scoring.serving``): ``serving_parse_suspected`` (native mode: the answer's text holds a
call the server's parser did not return; in place of ``no_structured_call``), ``format_error``
(prompt mode: call-like text that could not be read), ``output_truncated`` (a round stopped at the
output token limit), ``context_overflow`` (the endpoint refused the conversation as too long). They
are only added to verdicts that fail for their own reasons."""

SERVING_REASONS: tuple[str, ...] = (
    "serving_parse_suspected",
    "format_error",
    "output_truncated",
    "context_overflow",
)
"""Reason codes about serving faults and run limits rather than about the calls themselves."""

Tier = Literal["native-function-contract", "real-tool-execution", "task-completion-execution"]
TIERS: tuple[Tier, ...] = ("native-function-contract", "real-tool-execution", "task-completion-execution")
"""The three strict tiers (defined here, beside the verdict types, so that reading them costs no import of the
scorers' numerical dependencies)."""


class Reason(BaseModel):
    """One machine-readable failure reason with a human message."""

    code: str
    message: str
    step: str | None = None
    call_index: int | None = None


class Verdict(BaseModel):
    """A scorer's judgement of one case."""

    scorer: str
    passed: bool
    partial: float | None = None
    """Diagnostic partial score in [0, 1]; never decides ``passed``. 1.0 only when passed."""
    reasons: list[Reason] = Field(default_factory=list)
    rationale: str = ""
    """One-line human summary."""
    warnings: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)
    """Extra per-case numbers a scorer aggregates (efficiency, call accuracy...)."""
    applicable: bool = True
    """False when the scorer cannot judge this case (e.g. state-match with a stateless executor): the
    verdict is kept for the record but left out of every rate, and tables show "n/a"."""

    @property
    def codes(self) -> list[str]:
        return [r.code for r in self.reasons]


def one_line(reasons: list[Reason], limit: int = 3) -> str:
    """A one-line rationale built from the first reasons."""
    if not reasons:
        return "pass: every strict condition holds"
    head = "; ".join(r.message for r in reasons[:limit])
    more = f" (+{len(reasons) - limit} more)" if len(reasons) > limit else ""
    return f"fail: {head}{more}"
