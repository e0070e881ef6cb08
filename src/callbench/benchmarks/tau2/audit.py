"""The simulator audit: rules that find a failed conversation the *user* spoiled, not the agent.

Each rule decides from the trajectory and the task alone (no model), so the audit is reproducible and
re-scoring gives the same findings. A rule that cannot decide says nothing: what is left needs a
judge, and the audit does not guess. The rules:

* ``ended_before_write`` — the user ended the conversation while the agent was waiting on it (its last
  message asks a question) and a gold write of the agent's was still missing: the user stopped before
  the agent could act (τ²'s users are known to say they are done early).
* ``invented_information`` — the user gave an identifier (a reservation code, a user id, an order id,
  an e-mail address) that is neither in its instructions nor said before by the agent or a tool: the
  simulator made it up.
* ``withheld_instruction`` — a gold action of the agent's needs a value only the user's instructions
  hold, the agent asked for it (a question of the agent's names the argument), the user never said it,
  and the agent did not make that action: the agent could not have succeeded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from callbench.benchmarks.tau2 import trajectory as tj
from callbench.plugin import Case, Trace

IDENTIFIER = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.]+"  # an e-mail address
    r"|#[A-Z]\d{5,}"  # an order id (#W1234567)
    r"|\b[a-z]+_[a-z]+_\d{3,}\b"  # a user id (emma_kim_9957)
    r"|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b"  # a reservation code (EHGLP3)
)


@dataclass(frozen=True)
class SimulatorFault:
    """One finding: the rule and what it saw."""

    rule: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message}


def simulator_faults(
    case: Case, task: Any, trajectory: list[dict[str, Any]], trace: Trace, result: dict[str, Any]
) -> list[SimulatorFault]:
    """The simulator faults of a failed conversation (empty: none a rule can decide)."""
    faults = []
    for rule in (_ended_before_write, _invented_information, _withheld_instruction):
        found = rule(case, task, trajectory, trace, result)
        if found is not None:
            faults.append(found)
    return faults


def _scenario_text(case: Case) -> str:
    user = case.user
    if user is None:
        return ""
    return "\n".join(t for t in (user.instructions, user.known_info, user.persona) if t)


def _missing_writes(task: Any, trajectory: list[dict[str, Any]]) -> list[Any]:
    calls = tj.tool_calls_in_order(trajectory)
    actions = task.evaluation_criteria.actions or [] if task.evaluation_criteria else []
    return [
        a for a in actions if a.requestor == "assistant" and not any(tj.action_matches(a, c) for c in calls)
    ]


def _ended_before_write(
    case: Case, task: Any, trajectory: list[dict[str, Any]], trace: Trace, result: dict[str, Any]
) -> SimulatorFault | None:
    if trace.stop_reason != "user_stop":
        return None
    texts = tj.assistant_texts(trajectory)
    waiting = bool(texts) and texts[-1].rstrip().endswith("?")
    writes = set(case.metadata.get("tau2_writes") or [])
    missing = [a for a in _missing_writes(task, trajectory) if a.name in writes]
    if waiting and missing:
        return SimulatorFault(
            "ended_before_write",
            f"the user ended the conversation while the agent asked it a question, before the agent's "
            f"{missing[0].name} call",
        )
    return None


def _invented_information(
    case: Case, task: Any, trajectory: list[dict[str, Any]], trace: Trace, result: dict[str, Any]
) -> SimulatorFault | None:
    known = _scenario_text(case)
    heard = ""
    for message in trajectory:
        text = message.get("content") or ""
        if message["role"] == "user" and message.get("tool_calls") is None:
            for token in IDENTIFIER.findall(text):
                if token not in known and token not in heard:
                    return SimulatorFault(
                        "invented_information",
                        f"the user gave {token!r}, which is not in its instructions and was not said to it",
                    )
        heard += "\n" + text
    return None


def _withheld_instruction(
    case: Case, task: Any, trajectory: list[dict[str, Any]], trace: Trace, result: dict[str, Any]
) -> SimulatorFault | None:
    known = _scenario_text(case)
    said = "\n".join(tj.user_texts(trajectory))
    others = "\n".join(
        m.get("content") or ""
        for m in trajectory
        if m["role"] in ("assistant", "tool") and m.get("requestor") != "user"
    )
    questions = [t.lower() for t in tj.assistant_texts(trajectory) if "?" in t]
    for action in _missing_writes(task, trajectory):
        keys = action.compare_args if action.compare_args is not None else list(action.arguments)
        for key in keys:
            value = action.arguments.get(key)
            if not _asked_for(key, questions):
                continue  # the agent never asked: its own failure, not the user's
            if (
                isinstance(value, str)
                and len(value) >= 4
                and value in known
                and value not in said
                and value not in others
            ):
                return SimulatorFault(
                    "withheld_instruction",
                    f"the agent's {action.name} needs {key}={value!r}, which only the user's "
                    "instructions hold and the user never said",
                )
    return None


def _asked_for(key: str, questions: list[str]) -> bool:
    """True when one of the agent's questions names the argument (``reservation_id``: "reservation")."""
    words = [w for w in key.lower().split("_") if len(w) >= 4 and w not in ("info", "type")]
    return any(word in question for question in questions for word in words or [key.lower()])
