"""JSON Schema handling for tool parameters: strictify, check, validate with readable messages."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from callbench.types.hashing import canonical_json


def check_schema(schema: dict[str, Any]) -> str | None:
    """Return a one-line problem description when ``schema`` is not a valid parameters schema."""
    if not isinstance(schema, dict):
        return "parameters must be a JSON Schema object"
    return _check_schema_json(canonical_json(schema))


@lru_cache(maxsize=8192)
def _check_schema_json(schema_json: str) -> str | None:
    # Generated suites repeat identical schemas thousands of times; meta-validation is the slow part.
    import json

    schema = json.loads(schema_json)
    if schema.get("type", "object") != "object":
        return f"parameters schema must have type 'object', not {schema.get('type')!r}"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return f"invalid JSON Schema at {where}: {exc.message}"
    return None


def check_result_schema(schema: dict[str, Any]) -> str | None:
    """Return a one-line problem description when ``schema`` is not a valid JSON Schema."""
    return _check_result_schema_json(canonical_json(schema))


@lru_cache(maxsize=8192)
def _check_result_schema_json(schema_json: str) -> str | None:
    # Cached like the parameters check: a registry built per case (an episode's offered tools)
    # re-checks the same result schemas thousands of times (80 s of one conformance test).
    import json

    try:
        Draft202012Validator.check_schema(json.loads(schema_json))
    except SchemaError as exc:
        return exc.message
    return None


@lru_cache(maxsize=4096)
def _validator_for(schema_json: str) -> Draft202012Validator:
    import json

    return Draft202012Validator(json.loads(schema_json))


def validator_for(schema: dict[str, Any]) -> Draft202012Validator:
    """A cached compiled validator for ``schema``."""
    return _validator_for(canonical_json(schema))


def validate_arguments(
    schema: dict[str, Any], arguments: Any, validator: Draft202012Validator | None = None
) -> list[str]:
    """Validate ``arguments`` against ``schema``.

    Returns messages like ``$.x is required`` (empty if valid).
    """
    if not isinstance(arguments, dict):
        return [f"$ must be an object, got {type(arguments).__name__}"]
    errors = sorted(
        (validator or validator_for(schema)).iter_errors(arguments),
        key=lambda e: list(map(str, e.absolute_path)),
    )
    return [_message(error) for error in errors]


def _message(error: Any) -> str:
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False:
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        pattern_keys = error.schema.get("patternProperties")
        if extra and not pattern_keys:
            return "; ".join(f"{path}.{key} is not allowed" for key in extra)
    if error.validator == "required":
        missing = [
            k for k in error.validator_value if isinstance(error.instance, dict) and k not in error.instance
        ]
        if missing:
            return "; ".join(f"{path}.{key} is required" for key in missing)
    return f"{path}: {error.message}"


SCHEMA_KEYWORDS = frozenset(
    {
        # JSON Schema 2020-12 (core, applicator, validation, meta-data, format, content, unevaluated)
        "$schema", "$id", "$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
        "$comment", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
        "prefixItems", "items", "contains", "properties", "patternProperties", "additionalProperties",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties", "type", "enum", "const",
        "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
        "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
        "maxProperties", "minProperties", "required", "dependentRequired", "title", "description",
        "default", "deprecated", "readOnly", "writeOnly", "examples", "format", "contentEncoding",
        "contentMediaType", "contentSchema",
        # earlier drafts and OpenAPI, still common in tool schemas
        "definitions", "dependencies", "nullable", "example",
    }
)  # fmt: skip
"""Keys a JSON Schema object may hold; ``x-`` extensions are allowed too."""
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMAS = (
    "items", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema",
)  # fmt: skip


def unknown_keywords(schema: Any, where: str) -> list[tuple[str, str]]:
    """``(location, key)`` of every key of ``schema`` and its subschemas that no JSON Schema
    vocabulary defines (``x-`` extensions aside): a misspelt keyword, or a YAML slip such as an unquoted
    ``description: City name, e.g. Paris`` in a flow mapping, which makes ``e.g. Paris`` a key."""
    if not isinstance(schema, dict):
        return []
    found = [
        (where, key)
        for key in schema
        if not (isinstance(key, str) and (key in SCHEMA_KEYWORDS or key.startswith("x-")))
    ]
    for name in _SUBSCHEMA_MAPS:
        children = schema.get(name)
        if isinstance(children, dict):
            for key, child in children.items():
                found += unknown_keywords(child, f"{where}.{name}.{key}")
    for name in _SUBSCHEMA_LISTS:
        children = schema.get(name)
        if isinstance(children, list):
            for index, child in enumerate(children):
                found += unknown_keywords(child, f"{where}.{name}[{index}]")
    for name in _SUBSCHEMAS:
        found += unknown_keywords(schema.get(name), f"{where}.{name}")
    if isinstance(schema.get("items"), list):  # draft-07 tuple form
        for index, child in enumerate(schema["items"]):
            found += unknown_keywords(child, f"{where}.items[{index}]")
    return found
