"""Lines for a terminal: text from models and agents made safe to print, and what a run measures.

Model and agent text is shown, never obeyed: :func:`printable` escapes terminal control sequences (ESC
colours, OSC 8 links, carriage returns, bidi overrides) and blanks known API keys.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

from callbench.secrets import scrub

if TYPE_CHECKING:
    from callbench.types.records import CaseRecord, RunHeader

AGENT_MODE = "agent-under-test"
"""The harness mode of ``callbench run --agent`` (the user's agent runs its own loop)."""


# C0 controls but newline and tab, DEL, C1 controls (0x9b is a one-byte CSI), and the bidi
# embeddings/overrides/isolates that reorder what a reader sees.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters escaped (``\\x1b``), known keys blanked.

    Newlines and tabs are kept: they are how model text is laid out, and cannot move the cursor
    anywhere a reader would not expect.
    """
    return _CONTROL.sub(_escape, scrub(text))


def agent_failure(record: CaseRecord) -> str | None:
    """An agent under test's failure on one line (``agent_crashed (exit 3)``,
    ``agent_timeout (after 30000 ms)``), or ``None`` when it answered or the run measured a model.

    Without it a crashing agent reads like a model that answered wrongly.
    """
    agent = record.trace.agent
    if agent is None or agent.outcome == "answer":
        return None
    if agent.exit_code is not None:
        detail = f"exit {agent.exit_code}"
    elif agent.outcome == "agent_timeout":
        detail = f"after {agent.duration_ms:.0f} ms"
    else:
        detail = " ".join(agent.message.split())[:120]
    # The outcome and message come from the agent's side: never let them drive the terminal.
    return printable(f"{agent.outcome} ({detail})" if detail else agent.outcome)


def run_subject(header: RunHeader) -> str:
    """What a run measures, for progress and watch headers: ``model X`` or ``agent SPEC (kind)``."""
    provider = getattr(header, "provider", None) or {}
    if getattr(header, "harness_mode", None) == AGENT_MODE:
        spec = str(provider.get("agent") or header.model.removeprefix("agent:"))
        kind = provider.get("kind")
        return f"agent {spec}" + (f" ({kind})" if kind else "")
    return f"model {header.model}"


def tenths(value: float) -> str:
    """``value`` with one decimal, halves rounded away from zero (``20.45`` -> ``20.5``).

    The one rounding rule of every figure callbench prints (terminal, Markdown, progress): always
    from the unrounded value, so two views of one figure never differ in the last digit. Float noise
    below 1e-9 is cleared first (``100 * 0.2045`` is ``20.449999...``).
    """
    rounded = Decimal(repr(round(value, 9))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return str(rounded.copy_abs() if rounded == 0 else rounded)


def percent(fraction: float) -> str:
    """A fraction (0.2045...) as a percentage with one decimal (``20.5%``); see :func:`tenths`."""
    return tenths(100 * fraction) + "%"
