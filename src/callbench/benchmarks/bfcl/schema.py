"""BFCL function docs -> callbench tool contracts with valid JSON Schema.

BFCL docs use ``type: "dict"`` for the argument object and non-JSON-Schema type names.
Mapping (documented in docs/bfcl.md):

===========================  ===========================================================
BFCL type                    JSON Schema sent to providers
===========================  ===========================================================
dict                         object (``properties``/``required`` mapped recursively)
float                        number
tuple                        array (items mapped when given)
any                          string (BFCL's checker expects a string for ``any``)
integer/string/boolean/array the same JSON Schema type
Java / JavaScript (any type) string, with BFCL's hint that the value is a source literal
===========================  ===========================================================

Java/JavaScript parameters are strings because BFCL's checker requires a string holding the
source-language literal; the hint texts follow BFCL's own wording of that requirement.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from callbench.benchmarks.bfcl.entry import language_of
from callbench.plugin import ToolContract

_TYPE_MAP = {
    "dict": "object",
    "object": "object",
    "float": "number",
    "number": "number",
    "double": "number",
    "tuple": "array",
    "array": "array",
    "list": "array",
    "any": "string",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "string": "string",
    "char": "string",
    "boolean": "boolean",
    "bool": "boolean",
}
_KEEP = ("description", "enum", "default", "format", "minimum", "maximum", "minItems", "maxItems", "pattern")
_HINT = {
    "python": " Note that the provided function is in Python 3 syntax.",
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
}


def json_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """Map one BFCL (Python-flavoured) type spec to JSON Schema."""
    declared = spec.get("type", "string")
    out: dict[str, Any] = {"type": _TYPE_MAP.get(declared, "string")}
    for key in _KEEP:
        if key in spec:
            out[key] = spec[key]
    if out["type"] == "object":
        properties = spec.get("properties")
        if isinstance(properties, dict):
            out["properties"] = {name: json_schema(sub) for name, sub in properties.items()}
            required = [name for name in spec.get("required", []) if name in properties]
            if required:
                out["required"] = required
    if out["type"] == "array" and isinstance(spec.get("items"), dict):
        out["items"] = json_schema(spec["items"])
    if declared == "tuple":
        out["description"] = (out.get("description", "") + " (a tuple, given as an array)").strip()
    if "enum" in out and out["type"] in ("integer", "number", "boolean"):
        out.pop("enum")  # BFCL docs sometimes list string enums for numeric params
    return out


def _literal_param(spec: dict[str, Any], language: str) -> dict[str, Any]:
    """Java/JS parameter: always a string holding a source literal (BFCL's convention)."""
    label = "Java" if language == "java" else "JavaScript"
    declared = spec.get("type", "any")
    text = spec.get("description", "")
    if declared == "any":
        text += f" This parameter can be of any type of {label} object in string representation."
    else:
        text += f" This is {label} {declared} type parameter in string representation."
    items = spec.get("items", {}).get("type")
    if declared in ("ArrayList", "Array", "array") and items:
        text += f" The list elements are of type {items}; they are not in string representation."
    if declared == "dict" and language == "javascript" and "properties" in spec:
        text += (
            " The dictionary entries have the following schema; they are not in string representation. "
            + json.dumps(spec["properties"])
        )
    return {"type": "string", "description": text}


def contract_from_doc(doc: dict[str, Any], category: str) -> ToolContract:
    """A tool contract for one BFCL function doc of ``category``."""
    language = language_of(category)
    params = copy.deepcopy(doc.get("parameters") or {"type": "dict", "properties": {}})
    properties = params.get("properties") or {}
    if language == "python":
        schema = json_schema({**params, "type": "dict"})
    else:
        schema = {
            "type": "object",
            "properties": {name: _literal_param(spec, language) for name, spec in properties.items()},
        }
        required = [name for name in params.get("required", []) if name in properties]
        if required:
            schema["required"] = required
    schema.setdefault("properties", {})
    return ToolContract(
        name=doc["name"],
        description=(doc.get("description") or "") + _HINT[language],
        parameters=schema,
        strict=False,
        metadata={"bfcl_doc": doc},
    )
