"""Final-answer checks for DAG tasks: the official lenient match and callbench's strict one.

Strict reading of a final answer (``strict_match``):

* **Numbers** are whole tokens: ``-358``, ``358.5`` and ``358,000`` are numbers of their own,
  never 358. Digits inside names (``func_a12``) are not numbers.
* **Explicit statements** name the value: a binding of the target variable (``t = N``,
  ``t: N``, ``t is N``, ``t equals N``), a final-answer form (``the answer is N``,
  ``answer: N``, ``final answer: N``, ``the final result is N``, ``final value: N``) or
  ``\\boxed{N}``. A negated statement (``the answer is not N``) states nothing.
* With explicit statements, they alone decide: every one must give the value, none may offer an
  alternative straight after it (``N or M``, ``N/M``, ``N-M``, ``N, or maybe M``), and other
  numbers in the text are working. Conflicting statements (a self-correction included) fail.
  An alternative is only looked for on the statement's own line.
* Without one, the answer must contain exactly one distinct number, the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"(?<!\d)\d+(?!\d)")
# A strict number token: optional sign, digits, and any ".d"/",d" continuation (decimals,
# thousands), not glued to a word on either side.
_TOKEN = re.compile(r"(?<![\w.,])-?\d+(?:[.,]\d+)*(?![\w])")
_TOKEN_TEXT = r"-?\d+(?:[.,]\d+)*(?![\w])"
_MARKUP = r"[\s`*_\"']*"
_FINAL = re.compile(
    r"(?<![A-Za-z0-9_])(?:final\s+(?:answer|result|value)|answer)"
    + _MARKUP
    + r"(?:is|equals|=|:)"
    + r"[\s`*_\"':=]*"
    + rf"(?P<num>{_TOKEN_TEXT})",
    re.IGNORECASE,
)
_BOXED = re.compile(rf"\\boxed\{{\s*(?P<num>{_TOKEN_TEXT})\s*\}}")
# Words and signs that, standing alone between an explicit value and the next number, offer
# that number as an alternative ("358 or 359", "358-359", "358, or maybe 359").
_HEDGE = re.compile(
    r"[\s,;:()\[\]`*_\"']*(?:(?:or|either|maybe|perhaps|possibly|probably|alternatively|otherwise|"
    r"and|to|vs\.?|versus|/|-|–|—|~|±|\+/-)[\s,;:()\[\]`*_\"']*)+",
    re.IGNORECASE,
)


def numbers_in(text: str) -> list[str]:
    """Standalone digit runs in ``text``, in order (the official definition of a number)."""
    return _NUMBER.findall(text)


def lenient_match(text: str, value: int) -> bool:
    """Official rule: any standalone digit run in the text equals the value."""
    return str(value) in set(numbers_in(text))


@dataclass(frozen=True)
class Statement:
    """One explicit statement of a value: its number token and where the token ends."""

    number: str
    end: int


def strict_match(text: str, target: str, value: int) -> tuple[bool, str]:
    """Whether ``text`` states ``value`` unambiguously (rules in the module docstring).

    Returns (passed, reason).
    """
    statements = explicit_statements(text, target)
    if statements:
        return _judge_statements(text, statements, value)
    found = sorted(set(_TOKEN.findall(text)), key=_sort_key)
    if found and all(_equals(tok, value) for tok in found):
        return True, f"the answer's only number is {value}"
    if not found:
        return False, "the answer states no number"
    if any(_equals(tok, value) for tok in found):
        return False, f"the answer is ambiguous: it states {', '.join(found)} and no explicit final answer"
    return False, f"the answer states {', '.join(found)}, not {value}"


def explicit_statements(text: str, target: str) -> list[Statement]:
    """Bindings of ``target``, final-answer forms and ``\\boxed{}`` values, in text order."""
    binding = re.compile(
        rf"(?<![A-Za-z0-9_]){re.escape(target)}(?![A-Za-z0-9_]){_MARKUP}(?:=|:|is|equals)"
        rf"[\s`*_\"':=]*(?P<num>{_TOKEN_TEXT})",
        re.IGNORECASE,
    )
    found = {
        m.start("num"): Statement(m.group("num"), m.end("num"))
        for pattern in (binding, _FINAL, _BOXED)
        for m in pattern.finditer(text)
    }
    return [found[k] for k in sorted(found)]


def _judge_statements(text: str, statements: list[Statement], value: int) -> tuple[bool, str]:
    hedged = [s for s in statements if _alternative_after(text, s.end)]
    if hedged:
        s = hedged[0]
        return (
            False,
            f"the answer offers alternatives: {text[s.end - len(s.number) : _next_end(text, s.end)].strip()}",
        )
    stated = list(dict.fromkeys(s.number for s in statements))
    if len(stated) > 1:
        return False, f"the answer makes conflicting explicit statements: {', '.join(stated)}"
    if not _equals(stated[0], value):
        return False, f"the answer states {stated[0]}, not {value}"
    return True, f"the answer states {value} explicitly"


def _alternative_after(text: str, end: int) -> bool:
    """True when the next number after ``end`` is reached through hedge words and signs only."""
    nxt = _TOKEN.search(text, end) or re.compile(r"\d").search(text, end)
    if nxt is None:
        return False
    gap = text[end : nxt.start()]
    # A line break ends the statement ("Final answer: 358" then a "- 12 ..." list item).
    return bool(gap) and "\n" not in gap and _HEDGE.fullmatch(gap) is not None


def _next_end(text: str, end: int) -> int:
    nxt = re.compile(r"\d+").search(text, end)
    return nxt.end() if nxt else end


def _equals(token: str, value: int) -> bool:
    return token.isdigit() and int(token) == value


def _sort_key(token: str) -> tuple[int, str]:
    return (0, f"{int(token):020d}") if token.lstrip("-").isdigit() else (1, token)
