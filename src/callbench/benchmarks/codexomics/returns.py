"""Turn a CodeXomics ``returns`` block into a callbench result schema.

Upstream documents results as ``field: 'type - description'`` prose. Reading the leading type word
gives a result schema, so the ``contract`` executor returns the documented fields and a ``$ref``
can be checked against them.
"""

from __future__ import annotations

import re
from typing import Any

_TYPE_WORD = re.compile(r"^\s*(string|boolean|number|integer|object|array)\b", re.IGNORECASE)


def result_schema_from_returns(returns: Any) -> dict[str, Any] | None:
    """The result schema for a ``returns`` mapping, or ``None`` when it documents nothing usable."""
    if not isinstance(returns, dict) or not returns:
        return None
    properties: dict[str, Any] = {}
    for name, spec in returns.items():
        if not isinstance(name, str):
            continue
        properties[name] = _field_schema(spec)
    if not properties:
        return None
    return {"type": "object", "properties": properties, "required": sorted(properties)}


def _field_schema(spec: Any) -> dict[str, Any]:
    if isinstance(spec, str):
        match = _TYPE_WORD.match(spec)
        text = spec.split(" - ", 1)[-1].strip()
        out: dict[str, Any] = {"description": text} if text else {}
        if match:
            out["type"] = match.group(1).lower()
        return out
    if isinstance(spec, dict):
        return {"type": "object"}
    return {}
