"""JSON for callbench's models that holds any text a model, agent or tool can send.

JSON allows a lone UTF-16 surrogate (``"\\ud800"``); Python keeps it in a ``str``; UTF-8 cannot encode
it. pydantic's fast JSON path refuses such text both ways: ``model_dump_json`` raises, and
``model_validate_json`` rejects the escaped form. A model reply, an agent's answer or a tool result
holding one is still data to store and score, so the helpers here take pydantic's fast path and fall
back to the standard library only when it refuses: the stored text then carries the surrogate as its
JSON escape (lossless, ASCII), and reading it back gives the same string.

The same goes for values nested deeper than pydantic's JSON reader follows (about 200 levels):
:data:`MAX_DEPTH` keeps structured values well inside it, and :func:`depth_exceeds` tells the
parsers when to keep a value as text instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

M = TypeVar("M", bound=BaseModel)

FROM_JSON_TEXT = "from_json_text"
"""Validation context key set when :func:`load_model` reads JSON text through the standard library:
validators that tell a stored record from a model built in Python (``info.mode == "json"``) see it."""

MAX_DEPTH = 64
"""The deepest nesting callbench keeps as a structured value (tool-call arguments, tool results).

Deeper values stay text: a call's arguments are then malformed (no tool schema nests this deep), a
tool result is kept as its JSON text. pydantic reads about 200 levels and writes about 250; a
record holds a value a few levels below its root, so 64 leaves a wide margin."""


def model_json_bytes(model: BaseModel, **options: Any) -> bytes:
    """``model``'s compact JSON as UTF-8 bytes, whatever text it holds (``options``: pydantic's dump
    options such as ``exclude``)."""
    try:
        return model.__pydantic_serializer__.to_json(model, **options)
    except PydanticSerializationError:
        # Lone surrogates (pydantic refuses to encode them): the stdlib writes them as escapes.
        return dumps_ascii(model.model_dump(mode="json", **options)).encode("ascii")


def model_json(model: BaseModel, **options: Any) -> str:
    """:func:`model_json_bytes` as text."""
    return model_json_bytes(model, **options).decode("utf-8")


def dumps_ascii(value: Any) -> str:
    """Compact JSON with every non-ASCII character escaped: valid for any ``str``, surrogates too."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def load_model(cls: type[M], raw: str | bytes) -> M:
    """Validate ``raw`` JSON as ``cls``; text pydantic's reader refuses only because it holds an
    escaped lone surrogate is read by the standard library instead. Other errors are pydantic's own
    :class:`ValidationError`, as from ``cls.model_validate_json``."""
    try:
        return cls.model_validate_json(raw)
    except ValidationError as exc:
        if not _may_hold_surrogate(raw, exc):
            raise
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            raise exc from None
        return cls.model_validate(value, context={FROM_JSON_TEXT: True})


def _may_hold_surrogate(raw: str | bytes, exc: ValidationError) -> bool:
    if not any(error["type"] == "json_invalid" for error in exc.errors()):
        return False
    needle_lower, needle_upper = ("\\ud", "\\uD") if isinstance(raw, str) else (b"\\ud", b"\\uD")
    return needle_lower in raw or needle_upper in raw  # type: ignore[operator]


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` (parsed JSON: dicts, lists, scalars) nests deeper than ``limit`` levels.

    Iterative, so a value nested thousands deep is measured without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children: Iterator[Any] | None = None
        if isinstance(item, dict):
            children = iter(item.values())
        elif isinstance(item, list):
            children = iter(item)
        if children is not None:
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def utf8_encodable(value: Any) -> bool:
    """False when ``value`` (JSON data) holds a lone surrogate, which UTF-8 cannot encode."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class JsonTextProblem(ValueError):
    """Valid (or nearly valid) JSON text that callbench will not hold as a structured value; the
    message says why in words for a record."""


def _refuse_constant(name: str) -> Any:
    raise JsonTextProblem(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise JsonTextProblem(f"the number {shown} is beyond a 64-bit float")
    return value


def parse_json_value(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON text from a model, an agent or a tool strictly into a value callbench can store
    and read back.

    Raises:
        json.JSONDecodeError: The text is not JSON (``.msg``/``.pos`` say where).
        JsonTextProblem: The text is JSON callbench does not hold as a value: nested deeper than
            ``max_depth``, an integer with more digits than Python converts (4,300 by default), a
            number beyond a 64-bit float, or ``NaN``/``Infinity`` (not JSON, though Python reads them).
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise JsonTextProblem(f"it nests deeper than {max_depth} levels") from None
    except json.JSONDecodeError:
        raise
    except JsonTextProblem:
        raise
    except ValueError as exc:  # int() past sys.get_int_max_str_digits()
        if "digits" in str(exc):
            raise JsonTextProblem("an integer in it has more digits than Python converts") from None
        raise
    if depth_exceeds(value, max_depth):
        raise JsonTextProblem(f"it nests deeper than {max_depth} levels")
    return value
