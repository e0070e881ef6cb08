"""Final-answer checks for DAG tasks: the official lenient match and callbench's strict one."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"(?<!\d)\d+(?!\d)")


def numbers_in(text: str) -> list[str]:
    """Standalone digit runs in ``text``, in order (the official definition of a number)."""
    return _NUMBER.findall(text)


def lenient_match(text: str, value: int) -> bool:
    """Official rule: any standalone digit run in the text equals the value."""
    return str(value) in set(numbers_in(text))


def strict_match(text: str, target: str, value: int) -> tuple[bool, str]:
    """The answer must state the value unambiguously.

    When the text binds the target variable to numbers (``x = 5``, ``x: 5``, ``x is 5``), every
    binding must give the value. Otherwise the text must contain exactly one distinct number, the
    value. Returns (passed, reason).
    """
    bound = _bindings(text, target)
    if bound:
        wrong = sorted({b for b in bound if b != str(value)})
        if wrong:
            return False, f"the answer binds {target} to {', '.join(wrong)}, not {value}"
        return True, f"the answer states {target} = {value}"
    found = sorted(set(numbers_in(text)), key=int)
    if found == [str(value)]:
        return True, f"the answer's only number is {value}"
    if not found:
        return False, "the answer states no number"
    if str(value) in found:
        return False, f"the answer is ambiguous: it states {', '.join(found)}"
    return False, f"the answer states {', '.join(found)}, not {value}"


def _bindings(text: str, target: str) -> list[str]:
    pattern = re.compile(
        rf"(?<![A-Za-z0-9_]){re.escape(target)}(?![A-Za-z0-9_])[`*\"']*\s*(?:=|:|is|equals)\s*[`*\"']*(\d+)(?!\d)",
        re.IGNORECASE,
    )
    return pattern.findall(text)
