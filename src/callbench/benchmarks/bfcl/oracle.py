"""Gold arguments for BFCL entries: the first acceptable value of every parameter.

Used for the cases' expected steps (so the built-in oracle agent can play them) and to build
oracle result files.  Java/JavaScript arguments are rendered as the source-language literal
strings BFCL expects (``5L``, ``new ArrayList<>(Arrays.asList(1, 2))``, ``{a: 1}``).
"""

from __future__ import annotations

import json
from typing import Any

from callbench.benchmarks.bfcl.entry import language_of
from callbench.benchmarks.bfcl.literals import FAITHFUL, LiteralRules


def first_acceptable(values: list[Any]) -> tuple[bool, Any]:
    """(present, value): the first acceptable value, or absent when only ``""`` is allowed."""
    for value in values:
        if value != "":
            return True, value
    return False, None


def gold_dict(candidates: list[Any]) -> Any:
    """Dict parameters: the first candidate dict with each key at its first acceptable value."""
    present, candidate = first_acceptable(candidates)
    if not present or not isinstance(candidate, dict):
        return candidate
    out = {}
    for key, options in candidate.items():
        has, value = first_acceptable(options)
        if has:
            out[key] = value
    return out


def gold_dict_list(candidates: list[Any]) -> Any:
    """List-of-dict parameters: the first candidate list, each dict at its first acceptable values."""
    present, candidate = first_acceptable(candidates)
    if not present or not isinstance(candidate, list):
        return candidate
    return [gold_dict([item]) if isinstance(item, dict) else item for item in candidate]


def gold_arguments(
    answer_params: dict[str, list[Any]], doc: dict[str, Any], category: str, rules: LiteralRules = FAITHFUL
) -> dict[str, Any]:
    """Arguments of one gold call, rendered for the category's language.

    ``rules``: how the scorer reads Java literals (improved mode reads quoted ``String``
    elements and typed elements of ``any`` as Java does); the gold path is written to match.
    """
    language = language_of(category)
    properties = doc["parameters"]["properties"]
    args: dict[str, Any] = {}
    required = set(doc["parameters"].get("required", []))
    for name, options in answer_params.items():
        if "" in options and (name not in properties or (options[0] == "" and name not in required)):
            continue  # optional: omitted (a param the doc does not define must be omitted)
        if options == [""]:
            args[name] = ""  # the doc requires it, the answer only accepts "" (e.g. live_multiple_507-149-4)
            continue
        spec = properties.get(name, {})
        declared = spec.get("type", "string")
        if declared in ("dict", "HashMap"):
            value = gold_dict(options)
        elif declared == "array" and spec.get("items", {}).get("type") == "dict":
            value = gold_dict_list(options)
        else:
            value = first_acceptable(options)[1]
        if not first_acceptable(options)[0]:
            continue
        if language == "java":
            value = java_literal(value, declared, properties.get(name, {}), rules)
        elif language == "javascript":
            value = js_literal(value, declared)
        args[name] = value
    return args


def java_literal(value: Any, declared: str, spec: dict[str, Any], rules: LiteralRules = FAITHFUL) -> str:
    """A Java source literal for ``value`` of BFCL Java type ``declared``, as ``rules`` read it back."""
    if isinstance(value, str):
        return value  # a variable name or an expression, passed through
    if declared == "long":
        return f"{value}L"
    if declared == "float":
        return f"{value}f"
    if declared == "boolean" or isinstance(value, bool):
        return "true" if value else "false"
    if declared in ("Array", "ArrayList") and isinstance(value, list):
        item_type = spec.get("items", {}).get("type", "any")
        # BFCL keeps the quotes of String/any elements of `new T[]{...}` (and of any-typed ArrayList
        # elements), so only unquoted elements can match; see docs/bfcl.md.
        bare = item_type in ("String", "any", "char") and (declared == "Array" or item_type == "any")
        if item_type == "any":
            bare = bare and not rules.typed_any
        else:
            bare = bare and not rules.quoted_elements
        items = ", ".join(str(item) if bare else _java_item(item, item_type) for item in value)
        if declared == "Array":
            return f"new {_java_array_type(item_type)}[]{{{items}}}"
        return f"new ArrayList<>(Arrays.asList({items}))"
    if declared == "HashMap" and isinstance(value, dict):
        puts = " ".join(f'put("{key}", {_java_item(item, "any")});' for key, item in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def _java_item(item: Any, item_type: str) -> str:
    if isinstance(item, str):
        return json.dumps(item)
    if isinstance(item, bool):
        return "true" if item else "false"
    if item_type == "long":
        return f"{item}L"
    return str(item)


def _java_array_type(item_type: str) -> str:
    return {"integer": "int", "String": "String", "long": "long", "char": "char"}.get(item_type, "Object")


def js_literal(value: Any, declared: str) -> str:
    """A JavaScript source literal for ``value`` of BFCL JS type ``declared``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "Bigint":
        return f"{value}n"
    if isinstance(value, list):
        return "[" + ", ".join(_js_item(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_js_item(item)}" for key, item in value.items()) + "}"
    return str(value)


def _js_item(item: Any) -> str:
    if isinstance(item, str):
        return json.dumps(item)
    return js_literal(item, "any")


def gold_calls(
    entry: dict[str, Any], ground_truth: list[dict[str, Any]], category: str, rules: LiteralRules = FAITHFUL
) -> list[tuple[str, dict]]:
    """(function name, arguments) for every gold call of an entry."""
    docs = {doc["name"]: doc for doc in entry["function"]}
    calls = []
    for expected in ground_truth:
        name, params = next(iter(expected.items()))
        doc = docs.get(name, {"name": name, "parameters": {"properties": {}}})
        calls.append((name, gold_arguments(params, doc, category, rules)))
    return calls


def fc_result(calls: list[tuple[str, dict]], underscore_to_dot: bool) -> list[dict[str, str]]:
    """BFCL FC-format result: ``[{name: "<JSON arguments>"}]``."""
    out = []
    for name, args in calls:
        shown = name.replace(".", "_") if underscore_to_dot else name
        out.append({shown: json.dumps(args)})
    return out
