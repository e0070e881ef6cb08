"""OpenAI strict-mode schemas: every property required, optional ones nullable.

Strict mode rejects schemas with optional properties, so optional ones are made nullable and
listed as required; the nulls the model then sends for "not given" are removed on the way back,
so scorers see the same arguments as in non-strict mode.
"""

from __future__ import annotations

import copy
from typing import Any


def strict_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a strict-mode copy of a parameters schema."""
    result = copy.deepcopy(schema)
    _walk(result)
    return result


def _walk(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item)
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    if isinstance(props, dict):
        required = set(node.get("required") or [])
        for key, sub in props.items():
            if key not in required and isinstance(sub, dict):
                props[key] = _nullable(sub)
        node["required"] = list(props)
        node["additionalProperties"] = False
    for value in node.values():
        _walk(value)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "null" not in kind:
        return {**schema, "type": [*kind, "null"]}
    if kind is None:
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def strip_optional_nulls(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Drop ``null`` values of properties that the original schema did not require."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return arguments
    required = set(schema.get("required") or [])
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if value is None and key in props and key not in required:
            continue
        sub = props.get(key)
        if isinstance(value, dict) and isinstance(sub, dict):
            value = strip_optional_nulls(value, sub)
        out[key] = value
    return out
