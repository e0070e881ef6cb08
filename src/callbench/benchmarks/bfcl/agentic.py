"""BFCL v4's agentic checker (memory and web search): the entry passes when one of its possible
answers appears, as a whole word, in the last message of the model's that is not a function call.

Both sides are standardised as BFCL does before the search: the characters ``, . / - _ * ^ ( )``
removed, lower-cased, single quotes turned into double quotes; the answer is then searched between
word boundaries (so "april 1 2024" matches "April 1, 2024", but not "April 1,2024", which reads
"april 12024").
"""

from __future__ import annotations

import re
from typing import Any

from callbench.benchmarks.bfcl.options import Check

_DROPPED = re.compile(r"[,./\-_*^()]")

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
