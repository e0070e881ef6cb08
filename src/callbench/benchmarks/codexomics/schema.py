"""Sanitise CodeXomics parameter schemas the way its native-tool conversion does.

The original sends and validates a cleaned copy of each YAML ``parameters`` block: only an
allowlist of JSON Schema keywords survives, a per-property ``required: true`` is hoisted into the
parent's ``required`` list, objects get ``properties``/``required`` arrays, and
``additionalProperties`` defaults to ``false`` at the root and on objects with properties.
"""

from __future__ import annotations

from typing import Any

ALLOWED_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "oneOf",
        "anyOf",
        "allOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "pattern",
        "additionalProperties",
    }
)
DESCRIPTION_LIMIT = 1024
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})


def sanitize_parameters(schema: Any, notes: list[str]) -> dict[str, Any]:
    """Return the sanitised root parameters schema; ``notes`` receives what was changed."""
    if not isinstance(schema, dict):
        notes.append("parameters is not a mapping; replaced by an empty object schema")
        return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    out = _sanitize(schema, "$", notes, is_root=True)
    out["type"] = "object"
    return out


def _sanitize(node: dict[str, Any], path: str, notes: list[str], *, is_root: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in ALLOWED_KEYWORDS:
            continue
        out[key] = _sanitize_keyword(key, value, path, notes)
    if isinstance(out.get("description"), str) and len(out["description"]) > DESCRIPTION_LIMIT:
        out["description"] = out["description"][:DESCRIPTION_LIMIT]
    _fix_type(out, path, notes)
    if is_root or out.get("type") == "object" or "properties" in out:
        _normalize_object(out, path, notes, is_root=is_root)
    return out


def _sanitize_keyword(key: str, value: Any, path: str, notes: list[str]) -> Any:
    if key == "properties" and isinstance(value, dict):
        return {
            name: _sanitize(sub, f"{path}.{name}", notes) if isinstance(sub, dict) else {}
            for name, sub in value.items()
        }
    if key == "items" and isinstance(value, dict):
        return _sanitize(value, f"{path}[]", notes)
    if key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
        return [_sanitize(sub, path, notes) if isinstance(sub, dict) else sub for sub in value]
    if key == "additionalProperties" and isinstance(value, dict):
        return _sanitize(value, f"{path}.*", notes)
    return value


def _fix_type(out: dict[str, Any], path: str, notes: list[str]) -> None:
    kind = out.get("type")
    if kind is None or (isinstance(kind, str) and kind in JSON_TYPES):
        return
    if isinstance(kind, list) and kind and all(isinstance(k, str) and k in JSON_TYPES for k in kind):
        return
    notes.append(f"{path}: unknown type {kind!r} dropped")
    del out["type"]


def _normalize_object(out: dict[str, Any], path: str, notes: list[str], *, is_root: bool) -> None:
    props = out.get("properties")
    if not isinstance(props, dict):
        props = {}
    required = (
        [r for r in out.get("required", []) if isinstance(r, str)]
        if isinstance(out.get("required"), list)
        else []
    )
    for name, sub in props.items():
        flag = sub.pop("required", None) if isinstance(sub, dict) else None
        if flag is True and name not in required:
            required.append(name)
            notes.append(f"{path}.{name}: per-property 'required: true' hoisted")
    missing = [r for r in required if r not in props]
    if missing:
        notes.append(f"{path}: required keys without a property: {', '.join(missing)}")
    out["properties"] = props
    out["required"] = required
    # Upstream closes the root and objects that declare properties; a bare {type: object} stays
    # open (said explicitly, because callbench's strictify would otherwise close it).
    out.setdefault("additionalProperties", not (is_root or props))
    if out.get("type") is None:
        out["type"] = "object"


def infer_schema(values: list[Any]) -> dict[str, Any]:
    """A permissive property schema accepting every value in ``values`` (for added keys)."""
    kinds: list[str] = []
    for value in values:
        kind = _json_type(value)
        if kind and kind not in kinds:
            kinds.append(kind)
    if "integer" in kinds and "number" in kinds:
        kinds.remove("integer")
    if not kinds:
        return {}
    return {"type": kinds[0] if len(kinds) == 1 else kinds}


# bool before int: True is an int in Python but a boolean in JSON.
_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _json_type(value: Any) -> str | None:
    if isinstance(value, dict) and any(k.startswith("$") for k in value):
        return _marker_type(value)
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), None)


def _marker_type(marker: dict[str, Any]) -> str | None:
    if "$default" in marker:
        return _json_type(marker["$default"])
    if "$pattern" in marker:
        return "string"
    return None  # $any / $ref / $one_of: leave the type open
