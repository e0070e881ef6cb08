"""BFCL v4's agentic checker (memory and web search): the entry passes when one of its possible
answers appears, as a whole word, in the last message of the model's that is not a function call.

Both sides are standardised as BFCL does before the search: the characters ``, . / - _ * ^ ( )``
removed, lower-cased, single quotes turned into double quotes; the answer is then searched between
word boundaries (so "april 1 2024" matches "April 1, 2024", but not "April 1,2024", which reads
"april 12024").

Stored results (``bfcl score-results``, ``export bfcl``): an agentic entry's FC result is BFCL's
multi-turn shape with one turn, ``[[step, ...]]``, each step the calls ``[{name: "<JSON>"}]`` or the
text; :func:`judge_result` judges it as bfcl-eval's ``_evaluate_single_agentic_entry`` does.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.options import BfclOptions, Check

if TYPE_CHECKING:
    from callbench.plugin import Trace

_DROPPED = re.compile(r"[,./\-_*^()]")

MESSAGE_KEPT = 2000
"""Characters of the judged message kept in a verdict's details."""
INFERENCE_ERROR = "agentic:inference_error"
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


def check_last_message(last_message: Any, possible_answers: list[str]) -> Check:
    """The verdict of one agentic entry from its last non-call message (``None`` or empty: the model
    never answered in text, BFCL's ``agentic:no_last_message``; a stored step that is not text is read
    as :func:`answer_found` reads it)."""
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


def step_decodes(step: Any) -> bool:
    """Whether a stored FC step decodes as calls, as BFCL's FC decoder (``convert_to_function_call``)
    reads it: a ``{name: arguments}`` or a list of them, each arguments a JSON object (as text) or an
    object, and at least one call. Text, an empty step or arguments that are not an object do not."""
    items = [step] if isinstance(step, dict) else step
    if isinstance(items, str):
        return False  # a non-empty text fails on its first character, an empty one decodes to nothing
    if not isinstance(items, list):
        return False  # not iterable (None, a number): the decoder raises
    count = 0
    for item in items:
        if not isinstance(item, dict):
            return False
        for value in item.values():
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    return False
            if not isinstance(value, dict):
                return False
            count += 1
    return count > 0


def judge_result(result: Any, possible_answers: list[str]) -> Check:
    """The verdict of a stored agentic FC result (``[[step, ...]]``): BFCL's checker on the last step
    that does not decode as calls. Anything but a list of one turn is ``agentic:inference_error``
    (e.g. BFCL's ``Error during inference: ...`` text); a last such step that is empty (``""``,
    ``None``, ``[]``) or none at all is ``agentic:no_last_message``."""
    if not isinstance(result, list) or len(result) != 1:
        message = "Error during inference phase. Model did not output a list of model responses."
        return Check(False, INFERENCE_ERROR, [message])
    steps = result[0]
    if not isinstance(steps, list | str | dict):  # BFCL's loop over the turn raises (a crash there)
        message = "Error during inference phase. The turn is not a list of steps."
        return Check(False, INFERENCE_ERROR, [message])
    last: Any = None
    for step in steps:  # as BFCL iterates it (a text turn: its characters; an object: its keys)
        if not step_decodes(step):
            last = step
    return check_last_message(last, possible_answers)
