"""The optional final-answer check."""

from __future__ import annotations

import re

from callbench.types.case import Case


def answer_problem(case: Case, final_text: str) -> str | None:
    """A one-line problem when the final text does not satisfy ``case.expected_answer``."""
    spec = case.expected_answer
    if spec is None:
        return None
    text = final_text.casefold()
    missing = [s for s in spec.contains if s.casefold() not in text]
    if missing:
        return f"final answer does not mention {missing!r}"
    if spec.pattern and not re.search(spec.pattern, final_text, flags=re.IGNORECASE):
        return f"final answer does not match /{spec.pattern}/"
    return None
