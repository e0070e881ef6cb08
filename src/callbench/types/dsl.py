"""Realising argument-DSL values: concrete values for a DSL expectation, and paths into call results.

Used by the built-in agents (to send the gold call), the gold replay of state match, and the
importers; matching actual values against the DSL is the scorers' business (``scoring.arguments``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from callbench.types.case import REF_PATTERN

_TOKEN = re.compile(r"[^.\[\]]+|\[\d+\]")

RefLookup = Callable[[str], tuple[bool, Any]]


def realize(value: Any, lookup: RefLookup, schema: dict[str, Any] | None = None) -> Any:
    """A concrete value satisfying ``value`` (first alternative, explicit defaults, examples)."""
    if isinstance(value, list):
        item_schema = (schema or {}).get("items") if isinstance(schema, dict) else None
        return [realize(v, lookup, item_schema) for v in value]
    if not isinstance(value, dict):
        return value
    if "$any" in value or "$pattern" in value:
        return value["example"] if "example" in value else placeholder_value(schema)
    if "$default" in value:
        return realize(value["$default"], lookup, schema)
    if "$ref" in value:
        found, resolved = lookup(str(value["$ref"]))
        return resolved if found else placeholder_value(schema)
    props = (schema or {}).get("properties", {}) if isinstance(schema, dict) else {}
    out = {k: realize(v, lookup, props.get(k)) for k, v in value.items() if k != "$one_of"}
    if "$one_of" in value and value["$one_of"]:
        first = realize(value["$one_of"][0], lookup, schema)
        if isinstance(first, dict) and len(value) > 1:
            out.update(first)
        elif len(value) == 1:
            return first
    return out


def placeholder_value(schema: dict[str, Any] | None) -> Any:
    """A schema-valid stand-in for 'any concrete value' when the case gives no example."""
    schema = schema or {}
    for key in ("const",):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if schema.get("examples"):
        return schema["examples"][0]
    kind = schema.get("type", "string")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "array":
        return [placeholder_value(schema.get("items"))]
    if kind == "object":
        return {}
    return "value"


def parse_tool_content(content: str) -> Any:
    """The JSON result inside a tool message: the whole text, or the text without the guidance line the
    harness may append (a result written over several lines, as MCP servers often write JSON), or its
    first line."""
    for text in (content, content.rsplit("\n", 1)[0], content.split("\n", 1)[0]):
        try:
            return json.loads(text)
        except (json.JSONDecodeError, ValueError):
            continue
    return content


def ref_lookup(step_calls: dict[str, str], results: dict[str, Any]) -> RefLookup:
    """Resolve ``step.path`` against the result of the call this agent made for that step."""

    def lookup(ref: str) -> tuple[bool, Any]:
        match = REF_PATTERN.match(ref)
        if not match:
            return False, None
        call_id = step_calls.get(match.group("step"))
        if call_id is None or call_id not in results:
            return False, None
        return follow_path(results[call_id], match.group("path") or "")

    return lookup


def path_tokens(path: str) -> list[str]:
    """The parts of a ``$ref`` path: ``a.b[0].c`` -> ``["a", "b", "[0]", "c"]``."""
    return list(_TOKEN.findall(path))


def follow_path(value: Any, path: str) -> tuple[bool, Any]:
    """Follow ``a.b[0].c`` into nested dicts/lists; ``(False, None)`` when a part is absent."""
    for token in _TOKEN.findall(path):
        if token.startswith("["):
            index = int(token[1:-1])
            if not isinstance(value, list) or index >= len(value):
                return False, None
            value = value[index]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value
