"""BFCL v4's agentic checker (memory and web search): the entry passes when one of its possible
answers appears, as a whole word, in the last message of the model's that is not a function call.

Both sides are standardised as BFCL does before the search: the characters ``, . / - _ * ^ ( )``
removed, lower-cased, single quotes turned into double quotes; the answer is then searched between
word boundaries (so "april 1 2024" matches "April 1, 2024", but not "April 1,2024", which reads
"april 12024").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.options import BfclOptions, Check

if TYPE_CHECKING:
    from callbench.plugin import Trace

_DROPPED = re.compile(r"[,./\-_*^()]")

MESSAGE_KEPT = 2000
"""Characters of the judged message kept in a verdict's details."""
NO_LAST_MESSAGE = "agentic:no_last_message"
ANSWER_NOT_FOUND = "agentic:answer_not_found"


def standardize(text: str) -> str:
    """BFCL's standard form of an answer or a response (see the module docstring)."""
    return _DROPPED.sub("", text).lower().replace("'", '"')


def answer_found(response: Any, possible_answers: list[str]) -> bool:
    """Whether one possible answer occurs as a whole word in the standardised response (a response
    that is a list is read as its first element, anything else as its ``str``, as BFCL does)."""
    if isinstance(response, list):
        response = response[0] if response else ""
    text = standardize(response if isinstance(response, str) else str(response))
    return any(re.search(rf"\b{re.escape(standardize(answer))}\b", text) for answer in possible_answers)


def check_last_message(last_message: str | None, possible_answers: list[str]) -> Check:
    """The verdict of one agentic entry from its last non-call message (``None``: the model never
    answered in text, BFCL's ``agentic:no_last_message``)."""
    if not last_message:
        message = "Cannot find the last chat message that is not a function call."
        return Check(False, NO_LAST_MESSAGE, [message])
    if answer_found(last_message, possible_answers):
        return Check.ok()
    return Check(False, ANSWER_NOT_FOUND, ["None of the expected answers were found in the model response."])


def last_message(trace: Trace) -> str | None:
    """The last non-call message of the episode (``None``: every round made calls). A round whose
    calls could not be read counts as a message, as BFCL's decoder fails on it: its first call's
    raw text, written as BFCL's result line holds it."""
    by_round: dict[int, list[Any]] = {}
    for call in trace.calls:
        by_round.setdefault(call.round, []).append(call)
    found: str | None = None
    for number, info in enumerate(trace.rounds, 1):
        calls = by_round.get(number, [])
        if not calls:
            found = info.text or ""
        elif any(call.arguments is None for call in calls):
            first = calls[0]
            found = str({first.tool: first.arguments_raw})
    return found


def judge_episode(
    meta: dict[str, Any], trace: Trace, state: dict[str, Any], options: BfclOptions
) -> tuple[Check, dict[str, Any]]:
    """The agentic check of one episode (memory question or web search entry) and the details every
    agentic verdict records: its category, the check, the mode, the judged message, the steps taken
    and whether the episode was force-quit or ended on an unreadable call (``state``: the executor's
    ``final_state["bfcl"]``). In improved mode the faithful outcome is repeated: no correction applies."""
    message = last_message(trace)
    check = check_last_message(message, list(meta.get("ground_truth") or []))
    details: dict[str, Any] = {
        "category": meta["category"],
        "passed": check.valid,
        "error_type": check.error_type,
        **options.describe(),
        "last_message": None if message is None else message[:MESSAGE_KEPT],
        "steps": state.get("steps"),
        "force_quit": bool(state.get("force_quit")),
    }
    if state.get("ended_undecodable"):
        details["ended_undecodable"] = True
    if options.improved:
        details["faithful_passed"] = check.valid
        details["faithful_error_type"] = check.error_type
    return check, details
