"""The argument DSL: matching a call's actual arguments against expected ones.

Forms (see ``docs/case-format.md``):

* literal — strings compare after trimming and case folding (paths also after separator
  normalisation); numbers compare numerically (``5 == 5.0``; booleans are not numbers); lists
  element-wise with equal length; objects key by key (extra actual keys are left to the schema check).
* ``{"$any": true}`` — any concrete value: not missing, null, empty, or an unresolved placeholder.
* ``{"$default": v}`` — may be omitted; if given it must equal ``v``.
* ``{"$one_of": [a, b]}`` — any alternative matches; next to other keys it constrains the same object.
* ``{"$ref": "step.path"}`` — equals the value that an earlier call of that step actually returned.
* ``{"$pattern": "regex"}`` — a string in which the regular expression is found.
``$any`` and ``$pattern`` may carry an ``example`` that built-in agents use; it is never compared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
PLACEHOLDER = re.compile(r"^\s*(<[^<>]+>|\{\{?[A-Za-z_][\w.\[\]]*\}?\})\s*$")

RefResolver = Callable[[str], list[Any]]
"""Returns the candidate values of a ``$ref`` (empty when nothing resolves)."""


@dataclass
class Mismatch:
    """Why one expected value did not match."""

    path: str
    code: str
    """``argument_missing``, ``argument_mismatch`` or ``unresolved_reference``."""
    expected: Any
    actual: Any

    def describe(self) -> str:
        if self.code == "argument_missing":
            return f"parameter '{self.path}' is missing (expected {_short(self.expected)})"
        if self.code == "unresolved_reference":
            return (
                f"parameter '{self.path}': reference {_short(self.expected)} "
                "did not resolve to an earlier result"
            )
        return f"parameter '{self.path}' expected {_short(self.expected)}, received {_short(self.actual)}"


@dataclass
class MatchContext:
    """What value matching needs beyond the two values."""

    resolve_ref: RefResolver = lambda ref: []
    lenient_refs: bool = False
    """Accept an unresolvable ``$ref`` as ``$any`` (contract tier without execution results)."""
    notes: list[str] = field(default_factory=list)
    """Diagnostics: default omissions, alternative keys used, references not verified."""


def match_arguments(
    expected: dict[str, Any],
    actual: dict[str, Any] | None,
    ctx: MatchContext,
    alternative_keys: dict[str, list[list[str]]] | None = None,
) -> list[Mismatch]:
    """Match a call's argument object.

    ``alternative_keys`` (completion tier) may stand in for missing keys.
    """
    if actual is None:
        return [Mismatch("$", "argument_mismatch", expected, "<unparsable arguments>")]
    return _match_object(expected, actual, ctx, "", alternative_keys or {})


def match_value(expected: Any, actual: Any, ctx: MatchContext, path: str = "$") -> list[Mismatch]:
    """Match one value; returns the mismatches (empty list = match)."""
    if isinstance(expected, dict):
        return _match_dict(expected, actual, ctx, path)
    if actual is MISSING:
        return [Mismatch(path, "argument_missing", expected, actual)]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [Mismatch(path, "argument_mismatch", expected, actual)]
        return [
            m
            for i, (e, a) in enumerate(zip(expected, actual, strict=False))
            for m in match_value(e, a, ctx, f"{path}[{i}]")
        ]
    return [] if scalars_equal(expected, actual) else [Mismatch(path, "argument_mismatch", expected, actual)]


def _match_dict(expected: dict[str, Any], actual: Any, ctx: MatchContext, path: str) -> list[Mismatch]:
    if "$any" in expected:
        return [] if is_concrete(actual) else [_missing_or_mismatch(path, expected, actual)]
    if "$default" in expected:
        if actual is MISSING:
            ctx.notes.append(f"{path}: omitted, schema default applies")
            return []
        return match_value(expected["$default"], actual, ctx, path)
    if "$ref" in expected:
        return _match_ref(str(expected["$ref"]), actual, ctx, path)
    if "$pattern" in expected:
        ok = isinstance(actual, str) and re.search(str(expected["$pattern"]), actual) is not None
        return [] if ok else [_missing_or_mismatch(path, expected, actual)]
    if "$one_of" in expected and len(expected) == 1:
        return _match_alternatives(expected["$one_of"], actual, ctx, path)
    if actual is MISSING:
        return [Mismatch(path, "argument_missing", expected, actual)]
    if not isinstance(actual, dict):
        return [Mismatch(path, "argument_mismatch", expected, actual)]
    return _match_object(expected, actual, ctx, path, {})


def _match_object(
    expected: dict[str, Any],
    actual: dict[str, Any],
    ctx: MatchContext,
    path: str,
    alternative_keys: dict[str, list[list[str]]],
) -> list[Mismatch]:
    if "$one_of" in expected and len(expected) == 1 and not path:
        return _match_alternatives(expected["$one_of"], actual, ctx, "$")
    out: list[Mismatch] = []
    for key, exp in expected.items():
        if key == "$one_of":
            continue
        sub = f"{path}.{key}" if path else key
        value = actual.get(key, MISSING)
        problems = match_value(exp, value, ctx, sub)
        if problems and value is MISSING and key in alternative_keys:
            problems = _match_alternative_key(key, exp, actual, alternative_keys[key], ctx, sub) or []
        out.extend(problems)
    if "$one_of" in expected:
        out.extend(_match_alternatives(expected["$one_of"], actual, ctx, path or "$"))
    return out


def _match_alternative_key(
    key: str, expected: Any, actual: dict[str, Any], options: list[list[str]], ctx: MatchContext, path: str
) -> list[Mismatch] | None:
    """A documented alternative key set stands in for a missing key. None/[] = satisfied.

    A single alternative key is compared by value; a wrong value there is an ``argument_mismatch``
    (the model gave the parameter, under another documented name, with the wrong value).
    """
    wrong: list[Mismatch] = []
    for keys in options:
        if not all(is_concrete(actual.get(k, MISSING)) for k in keys):
            continue
        if len(keys) > 1:
            ctx.notes.append(f"{path}: satisfied by alternative keys {keys}")
            return []
        problems = match_value(expected, actual[keys[0]], ctx, path)
        if not problems:
            ctx.notes.append(f"{path}: satisfied by alternative key '{keys[0]}'")
            return []
        wrong = wrong or [Mismatch(path, "argument_mismatch", expected, actual[keys[0]])]
    return wrong or [Mismatch(path, "argument_missing", expected, MISSING)]


def _match_alternatives(options: list[Any], actual: Any, ctx: MatchContext, path: str) -> list[Mismatch]:
    best: list[Mismatch] | None = None
    for option in options:
        trial = MatchContext(ctx.resolve_ref, ctx.lenient_refs, [])
        problems = match_value(option, actual, trial, path)
        if not problems:
            ctx.notes.extend(trial.notes)
            return []
        if best is None or len(problems) < len(best):
            best = problems
    if best and len(best) == 1 and best[0].code == "argument_missing" and actual is MISSING:
        return best
    return [Mismatch(path, "argument_mismatch", {"$one_of": options}, _strip_missing(actual))]


def _match_ref(ref: str, actual: Any, ctx: MatchContext, path: str) -> list[Mismatch]:
    candidates = ctx.resolve_ref(ref)
    if not candidates:
        if ctx.lenient_refs:
            ctx.notes.append(f"{path}: reference {ref} not verified (no execution result)")
            return [] if is_concrete(actual) else [_missing_or_mismatch(path, {"$ref": ref}, actual)]
        return [Mismatch(path, "unresolved_reference", {"$ref": ref}, actual)]
    if actual is MISSING:
        return [Mismatch(path, "argument_missing", {"$ref": ref}, actual)]
    for value in candidates:
        if not match_value(value, actual, MatchContext(), path):
            return []
    return [Mismatch(path, "argument_mismatch", {"$ref": ref, "resolved": candidates[0]}, actual)]


def is_concrete(value: Any) -> bool:
    """Present and meaningful: not missing, null, empty, or an unresolved placeholder like ``<x>``."""
    if value is MISSING or value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip()) and not PLACEHOLDER.match(value)
    if isinstance(value, (list, dict)):
        return len(value) > 0
    return True


def scalars_equal(expected: Any, actual: Any) -> bool:
    """Literal equality with the documented normalisation."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and math.isclose(
            float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-12
        )
    if isinstance(expected, str):
        return isinstance(actual, str) and normalise_string(expected) == normalise_string(actual)
    return expected == actual


def normalise_string(text: str) -> str:
    """Trim and case-fold; paths also get ``\\`` → ``/``, ``/./`` → ``/`` and repeated slashes collapsed."""
    out = text.strip().casefold()
    if "/" in out or "\\" in out:
        out = out.replace("\\", "/")
        out = re.sub(r"/\./", "/", out)
        out = re.sub(r"/{2,}", "/", out)
        out = out.removeprefix("./")
    return out


def _missing_or_mismatch(path: str, expected: Any, actual: Any) -> Mismatch:
    code = "argument_missing" if actual is MISSING else "argument_mismatch"
    return Mismatch(path, code, expected, actual)


def _strip_missing(value: Any) -> Any:
    return "<missing>" if value is MISSING else value


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
