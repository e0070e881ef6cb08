"""Example values for ``$any`` / ``$pattern`` markers, so built-in agents can play imported cases.

An ``example`` is never compared by the scorer; it is what the ``oracle`` sends. Named
placeholders use the original harness's fixture context (genome ECOLI.gbk, chromosome U00096);
everything else gets a minimal value that is valid against the contract's property schema.
"""

from __future__ import annotations

import re
from typing import Any

PLACEHOLDER_EXAMPLES: dict[str, Any] = {
    "current_chromosome": "U00096",
    "created_annotation_id": "user_1_a1b2c3",
    "created_protein_database": "Ecoli_protein",
    "highlight_id": "highlight_1",
    "primer_name": "primer_1",
}


def example_for_schema(schema: Any) -> Any:
    """A small value valid against ``schema`` (first enum value, minimum, one item, required keys)."""
    if not isinstance(schema, dict):
        return "example"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_for_schema(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return _example_of_type(kind, schema)


def _example_of_type(kind: Any, schema: dict[str, Any]) -> Any:
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = max(1, int(low) + (1 if "exclusiveMinimum" in schema else 0))
        high = schema.get("maximum")
        return min(value, high) if isinstance(high, (int, float)) else value
    if kind == "boolean":
        return True
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [example_for_schema(schema.get("items", {})) for _ in range(count)]
    if kind == "object":
        props = schema.get("properties") or {}
        keys = list(schema.get("required") or []) or list(props)[:1]
        out = {k: example_for_schema(props.get(k, {})) for k in keys}
        # An empty object is not a concrete value; an open object can take any key.
        if not out and schema.get("additionalProperties", True) is not False:
            out = {"value": "example"}
        return out
    if kind in (None, "string"):
        return _string_example(schema)
    return "example"


# Candidates tried in order against a string schema's pattern and length limits: DNA, protein,
# identifier-like and numeric text cover the patterns the CodeXomics contracts use.
_STRING_CANDIDATES = ("example", "ATGC", "MKTAYIAK", "example_1", "1", "A")


def _string_example(schema: dict[str, Any]) -> str:
    pattern = schema.get("pattern")
    low = int(schema.get("minLength", 1) or 1)
    high = schema.get("maxLength")
    for base in _STRING_CANDIDATES:
        text = base * (-(-low // len(base)))
        text = text[: max(low, len(base))] if high is None else text[: int(high)]
        if len(text) < low:
            continue
        if pattern is None or _search(pattern, text):
            return text
    return "example"


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def fill_examples(value: Any, schema: Any) -> Any:
    """Give every ``$any``/``$pattern`` marker in ``value`` an ``example`` (walking ``schema`` alongside)."""
    if isinstance(value, list):
        items = schema.get("items", {}) if isinstance(schema, dict) else {}
        return [fill_examples(v, items) for v in value]
    if not isinstance(value, dict):
        return value
    if "$pattern" in value and "example" not in value:
        base = schema if isinstance(schema, dict) else {}
        return {**value, "example": _string_example({**base, "pattern": value["$pattern"]})}
    if "$any" in value and "example" not in value:
        return {**value, "example": example_for_schema(schema)}
    if "$default" in value:
        return value
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if key == "$one_of" and isinstance(sub, list):
            out[key] = [fill_examples(option, schema) for option in sub]
        else:
            out[key] = fill_examples(sub, props.get(key, {}))
    return out
