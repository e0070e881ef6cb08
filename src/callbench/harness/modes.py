"""Harness modes: production-parity (default) and oracle-assisted. Never pooled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from callbench.types.case import Case
from callbench.types.hashing import sha256_of

HarnessMode = Literal["production-parity", "oracle-assisted", "agent-under-test"]
HARNESS_MODES: tuple[HarnessMode, ...] = ("production-parity", "oracle-assisted", "agent-under-test")
AGENT_UNDER_TEST: HarnessMode = "agent-under-test"
"""The in-app harness: the user's agent runs its own loop and calls the case's tools over MCP
(``--agent``). callbench adds no guidance, nudge or round budget; rules about rounds are "n/a"."""
NOT_APPLICABLE = "n/a"

PRODUCTION_ROUND_BUDGET = 10
ORACLE_EXTRA_ROUNDS = 4
CONVERSATION_ROUND_BUDGET = 100
"""Agent rounds of a conversation case that sets no ``max_rounds`` (all of its user turns included)."""


def round_override(case: Case) -> int | None:
    """The round budget a case sets for itself: its ``max_rounds``, or the conversation budget."""
    if case.max_rounds is not None:
        return case.max_rounds
    return CONVERSATION_ROUND_BUDGET if case.user is not None else None


# The application's text also claims that repeating a step "will be rejected"; the harness executes
# every valid call (cases may ask for the same call several times), so that claim is left out.
CONTINUATION_GUIDANCE = (
    "These steps are done. Do not repeat a step that is already done unless the request asks for it again. "
    "If the request has remaining steps, emit the next tool call(s); otherwise reply with the final answer."
)

ORACLE_NUDGE = (
    "You have completed {done} of {total} requested steps; {missing} are still missing. "
    "Emit the next tool call now instead of answering."
)


@dataclass(frozen=True)
class ModePolicy:
    """What a harness mode does; recorded in every record as ``harness_assistance``."""

    mode: HarnessMode

    def round_budget(self, expected_calls: int, case_override: int | None) -> int:
        if case_override is not None:
            return case_override
        if self.mode == "oracle-assisted":
            return max(1, expected_calls + ORACLE_EXTRA_ROUNDS)
        return PRODUCTION_ROUND_BUDGET

    @property
    def discloses_step_count(self) -> bool:
        return self.mode == "oracle-assisted"

    @property
    def appends_guidance(self) -> bool:
        return self.mode == "production-parity"

    @property
    def has_rounds(self) -> bool:
        """False for an agent under test: its loop is its own, callbench sees calls, not rounds."""
        return self.mode != AGENT_UNDER_TEST

    def assistance(self) -> dict[str, Any]:
        if not self.has_rounds:
            return {"step_count_disclosed": False, "round_budget": NOT_APPLICABLE}
        return {
            "step_count_disclosed": self.discloses_step_count,
            "round_budget": "expected_steps + 4"
            if self.mode == "oracle-assisted"
            else PRODUCTION_ROUND_BUDGET,
        }

    def case_assistance(self, expected_calls: int, case_override: int | None) -> dict[str, Any]:
        """What a record carries: the mode's rule with the round budget the case really ran with
        (cases may set their own), or "n/a" where there are no rounds."""
        if not self.has_rounds:
            return self.assistance()
        return {**self.assistance(), "round_budget": self.round_budget(expected_calls, case_override)}


RECOVERED_TEXT_CALLS = "+recovered-text-calls"
"""Suffix of the harness mode a record of a ``--recover-text-calls`` run carries: its calls include
calls read from answer texts, so its figures are a stratum of their own, never pooled (summaries,
comparisons, leaderboards) with runs that score only structured calls."""


def recorded_mode(mode: HarnessMode, recover_text_calls: bool) -> str:
    """The harness mode written on a record: the mode, marked when text calls are recovered."""
    return f"{mode}{RECOVERED_TEXT_CALLS}" if recover_text_calls else mode


def prompt_template_hash(system_prompt: str) -> str:
    """Hash of every fixed text the harness adds: system prompt, guidance and nudge templates."""
    return sha256_of({"system": system_prompt, "guidance": CONTINUATION_GUIDANCE, "nudge": ORACLE_NUDGE})
