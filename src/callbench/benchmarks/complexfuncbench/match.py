"""ComplexEval's per-pair checks: format check, rule matcher, critical-parameter gate,
offline response equivalence, and the error label when every matcher fails.

All functions are pure. ``improved`` switches on the fixes documented in
``docs/complexfuncbench.md`` (normalised comparison of critical values, for instance).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

ErrorKind = Literal[
    "func_error",
    "param_missing",
    "param_hallucination",
    "value_error",
    "stop_early",
    "func_hallucination",
    "format_error",
    "decode_error",
    "max_turns",
    "infra_error",
]
"""The closed first-error taxonomy."""

ERROR_KINDS: tuple[ErrorKind, ...] = ErrorKind.__args__  # type: ignore[attr-defined]

MatchMethod = Literal["identical", "free", "rule", "response", "judge"]


class CallLike(Protocol):
    """Anything with a function name and an argument object (read only: calls are frozen)."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CallError:
    """Why a predicted call did not match its mapped gold call."""

    kind: ErrorKind
    param: str | None = None
    detail: str = ""


@cache
def critical_table() -> dict[str, frozenset[str]]:
    """The critical-parameter table (function -> arguments compared exactly), shipped as data."""
    text = (Path(__file__).parent / "exact_match_values.json").read_text("utf-8")
    return {name: frozenset(params) for name, params in json.loads(text).items()}


# ---------------------------------------------------------------- format check

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


def format_error(name: str, arguments: dict[str, Any], functions: dict[str, dict[str, Any]]) -> str | None:
    """The specific error text returned to the model, or ``None`` when the call is well formed.

    Checks what upstream checks: the function is offered, required parameters are present, no
    unknown parameters, and the JSON type of string/number/boolean/array parameters.
    """
    fn = functions.get(name)
    if fn is None:
        return f"Function {name} is not defined in the function list."
    params = fn.get("parameters") or {}
    props: dict[str, Any] = params.get("properties") or {}
    missing = [p for p in params.get("required") or [] if p not in arguments]
    if missing:
        return f"Function {name} requires parameters {missing}, but the call does not provide them."
    unknown = [p for p in arguments if p not in props]
    if unknown:
        return f"Function {name} does not have parameters {unknown}."
    for param, value in arguments.items():
        expected = (props[param] or {}).get("type")
        allowed = _TYPES.get(expected) if isinstance(expected, str) else None
        # bool is an int subclass in Python; a boolean is never a valid number.
        if allowed and (not isinstance(value, allowed) or (expected == "number" and isinstance(value, bool))):
            return (
                f"Parameter {param} of function {name} should be a {expected}, "
                f"but {type(value).__name__} is provided."
            )
    return None


# ---------------------------------------------------------------- value normalisation


def _norm_text(text: str) -> Any:
    text = text.strip()
    if text[:1] in "[{":
        try:
            return norm_value(json.loads(text))
        except json.JSONDecodeError:
            pass
    try:
        return float(text)
    except ValueError:
        pass
    if "," in text:
        # Comma-separated id lists (categories_filter and friends) are order-insensitive.
        return ("set", tuple(sorted({part.strip() for part in text.split(",") if part.strip()})))
    return text


def norm_value(value: Any) -> Any:
    """A hashable normal form: numeric strings become numbers, comma lists and plain lists
    become order-insensitive, JSON text is parsed (JSON arrays such as ``legs`` keep their order)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # an integer past a float (a model may send one): compared exactly
            return value
    if isinstance(value, str):
        return _norm_text(value)
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, norm_value(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("list", tuple(norm_value(v) for v in value))
    return repr(value)


def _norm_list_unordered(value: Any) -> Any:
    normal = norm_value(value)
    if isinstance(value, list):
        return ("set", tuple(sorted(map(repr, normal[1]))))
    return normal


def _comma_set(value: Any) -> Any:
    return frozenset(p.strip() for p in value.split(",")) if isinstance(value, str) else value


def values_equal(pred: Any, gold: Any, *, improved: bool) -> bool:
    """Equality of one argument value: plain equality faithfully, normal forms when improved."""
    if pred == gold:
        return True
    return improved and norm_value(pred) == norm_value(gold)


# ---------------------------------------------------------------- cascade steps


def rule_match(pred: CallLike, gold: CallLike) -> bool:
    """Same name, same argument keys, equal values (``categories_filter`` as a set of items)."""
    if pred.name != gold.name or pred.arguments.keys() != gold.arguments.keys():
        return False
    for key, gold_value in gold.arguments.items():
        pred_value = pred.arguments[key]
        if key == "categories_filter":
            pred_value, gold_value = _comma_set(pred_value), _comma_set(gold_value)
        if pred_value != gold_value:
            return False
    return True


def critical_gate(pred: CallLike, gold: CallLike, *, improved: bool) -> CallError | None:
    """The hard gate: wrong function, or a critical gold argument missing or different."""
    if pred.name != gold.name:
        return CallError("func_error", None, f"called {pred.name}, expected {gold.name}")
    critical = critical_table().get(gold.name, frozenset())
    for param, gold_value in gold.arguments.items():
        if param not in critical:
            continue
        if param not in pred.arguments:
            return CallError("param_missing", param, f"critical parameter {param} missing")
        pred_value = pred.arguments[param]
        if param == "categories_filter":
            # Upstream's value checker compares this one as a set of comma-separated items.
            pred_value, gold_value = _comma_set(pred_value), _comma_set(gold_value)
        if not values_equal(pred_value, gold_value, improved=improved):
            return CallError("value_error", param, f"critical parameter {param} differs")
    return None


# A default stated in a parameter description. Three shapes, all case-insensitive:
#   explicit anywhere:     "Default value is 1", "The default is USD", "Default: en-us", "default=3"
#   "defaults to" anywhere: "Defaults to 1"
#   bare, opening a clause: "Default 1.", "Currency, default USD.", "(default 30)"
# The bare shape must open a sentence or clause and be followed by the end of one, so prose such
# as "uses the default sort order" or "by default, all" is not read as a value.
_VALUE = r"""(?P<v>'[^']*'|"[^"]*"|`[^`]*`|[^\s,;()'"`]+?)"""
_END = r"""(?=[.,;:)]*(?:\s|$))"""
_DEFAULT_PATTERNS = (
    re.compile(r"\bdefault(?:\s+value)?\s*(?:\bis\b|:|=)\s*" + _VALUE + _END, re.IGNORECASE),
    re.compile(r"\bdefaults?\s+to\s+" + _VALUE + _END, re.IGNORECASE),
    re.compile(
        r"(?:^|[.;,(]\s*)default(?:\s+value)?\s+" + _VALUE + r"(?=[.,;)]+(?:\s|$)|\s*$)", re.IGNORECASE
    ),
)
_NOT_VALUES = frozenset(
    {
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "it",
        "its",
        "is",
        "be",
        "to",
        "of",
        "for",
        "if",
        "when",
        "by",
        "as",
        "in",
        "on",
        "and",
        "or",
        "not",
        "no",
        "none",
        "null",
        "empty",
        "nothing",
        "user",
        "user's",
        "users",
        "value",
        "values",
        "will",
        "all",
        "any",
        "one's",
        "your",
        "their",
        "current",
    }
)
"""Words that follow "default" in prose but are no value ("defaults to the user's choice")."""


def description_default(description: str) -> Any:
    """The default a parameter description states, or ``None``.

    Reads "Default value is X", "Default: X", "default is X", "defaults to X" and a bare
    "Default X." opening a clause; trailing punctuation is dropped, quotes are removed, and
    ``true``/``false`` become booleans. Prose ("defaults to the user's choice") gives ``None``.
    """
    for pattern in _DEFAULT_PATTERNS:
        for found in pattern.finditer(description):
            raw = found.group("v")
            if raw[:1] in "'\"`" and raw[-1:] == raw[:1]:
                return raw[1:-1]
            value = raw.rstrip(".")
            if not value or value.lower() in _NOT_VALUES:
                continue
            lowered = value.lower()
            return {"true": True, "false": False}.get(lowered, value)
    return None


def schema_defaults(function: dict[str, Any]) -> dict[str, Any]:
    """Parameter defaults: a schema ``default``, else one stated in the description."""
    props = ((function.get("parameters") or {}).get("properties")) or {}
    out: dict[str, Any] = {}
    for param, spec in props.items():
        spec = spec if isinstance(spec, dict) else {}
        if "default" in spec:
            out[param] = spec["default"]
            continue
        found = description_default(str(spec.get("description", "")))
        if found is not None:
            out[param] = found
    return out


def _normal_call(call: CallLike, defaults: dict[str, Any]) -> dict[str, Any]:
    merged = {**defaults, **call.arguments}
    return {k: _norm_list_unordered(v) for k, v in merged.items() if v not in (None, "")}


def response_equivalent(pred: CallLike, gold: CallLike, function: dict[str, Any] | None) -> bool:
    """Offline stand-in for upstream's live API comparison: equal when both calls would get the
    same annotated response, after filling defaults, coercing numeric strings and comparing
    lists and comma lists without order."""
    if pred.name != gold.name:
        return False
    defaults = schema_defaults(function) if function else {}
    return _normal_call(pred, defaults) == _normal_call(gold, defaults)


def classify_mismatch(pred: CallLike, gold: CallLike, *, improved: bool) -> CallError:
    """The label upstream gives a pair no matcher accepted: first missing gold argument, else the
    first differing one, else the first argument the gold call does not have."""
    for param in gold.arguments:
        if param not in pred.arguments:
            return CallError("param_missing", param, f"parameter {param} missing")
    for param, gold_value in gold.arguments.items():
        if not values_equal(pred.arguments[param], gold_value, improved=improved):
            return CallError("value_error", param, f"parameter {param} differs")
    for param in pred.arguments:
        if param not in gold.arguments:
            return CallError("param_hallucination", param, f"parameter {param} not asked for")
    return CallError("value_error", None, "calls differ")
