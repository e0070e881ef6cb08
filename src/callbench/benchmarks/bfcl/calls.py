"""BFCL's per-call AST rules (one model call against one acceptable call).

Order of checks and their ``error_type`` names follow bfcl-eval 2026.3.23: function name,
required parameters, then each provided parameter in the model's order (known to the doc
*and* to the possible answer, literal conversion for Java/JS, type, value), then parameters
the answer lists without the optional marker ``""``.
"""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.bfcl.literals import (
    FAITHFUL,
    JAVA_TYPES,
    JS_TYPES,
    LiteralRules,
    java_value,
    js_value,
)
from callbench.benchmarks.bfcl.options import BfclOptions, Check, Language
from callbench.benchmarks.bfcl.values import check_dict, check_list, check_list_of_dicts, check_string

PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_PY_NESTED = ("array", "tuple")
_COLLECTIONS = ("Array", "ArrayList", "array")


def expected_name(name: str, options: BfclOptions) -> str:
    """The tool name BFCL expects from the model (dots become underscores for some providers)."""
    if options.underscore_to_dot and "." in name:
        return name.replace(".", "_")
    return name


def check_call(
    doc: dict[str, Any],
    call: dict[str, Any],
    answer: dict[str, Any],
    language: Language,
    options: BfclOptions,
) -> Check:
    """Check one decoded model call ``{name: {param: value}}`` against one acceptable call."""
    accepted = next(iter(answer.values()))
    name = expected_name(doc["name"], options)
    properties = doc["parameters"]["properties"]
    if name not in call:
        return Check.fail(
            "simple_function_checker:wrong_func_name", f"Function name {name!r} not found in model output."
        )
    given = call[name]
    for param in doc["parameters"]["required"]:
        if param not in given:
            return Check.fail(
                "simple_function_checker:missing_required", f"Missing required parameter: {param!r}."
            )
    for param, value in given.items():
        if param not in properties or param not in accepted:
            return Check.fail("simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}.")
        verdict = _check_param(param, value, properties[param], accepted[param], language, options)
        if not verdict.valid:
            return verdict
    for param, values in accepted.items():
        if param not in given and "" not in values:
            return Check.fail(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return Check.ok()


def _check_param(
    param: str,
    value: Any,
    spec: dict[str, Any],
    accepted: list[Any],
    language: Language,
    options: BfclOptions,
) -> Check:
    declared = spec["type"]
    nested: type | None = None
    if language == "python":
        expected = PYTHON_TYPES[declared]
        if declared in _PY_NESTED:
            nested = PYTHON_TYPES[spec["items"]["type"]]
        if declared == "float" and type(value) is int:
            value = float(value)  # the one widening BFCL accepts (gorilla PR #407)
        elif options.mode == "improved":
            value = _python_widen(value, declared, accepted, options)
    else:
        table, convert = (JAVA_TYPES, java_value) if language == "java" else (JS_TYPES, js_value)
        expected = table[declared]
        if type(value) is not str:
            kind = "java" if language == "java" else "js"
            return Check.fail(
                f"type_error:{kind}",
                f"Incorrect type for parameter {param!r}. Expected type "
                f"String, got {type(value).__name__}. Parameter value: {value!r}.",
            )
        rules = literal_rules(options)
        if declared in _COLLECTIONS:
            item_type = spec["items"]["type"]
            nested = table[item_type]
            if rules.typed_any and item_type == "any":
                nested = None  # typed elements of `any`: every element type is acceptable
            value = convert(value, declared, item_type, rules)
        else:
            value = convert(value, declared, rules=rules)
    if declared == "tuple" and type(value) is tuple:
        value = list(value)
    typed = check_type(param, value, accepted, declared, expected, nested)
    if not typed.valid:
        return typed
    if not typed.is_variable:
        special = _special_value_check(param, value, accepted, expected, nested)
        if special is not None:
            return special
    if value not in accepted:
        return Check.fail(
            "value_error:others",
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}.",
        )
    return Check.ok()


def literal_rules(options: BfclOptions) -> LiteralRules:
    """How Java/JavaScript literals are read under ``options`` (BFCL's readers in faithful mode)."""
    if not options.improved:
        return FAITHFUL
    return LiteralRules(
        quoted_elements=options.java_array_quotes,
        typed_any=options.java_any_elements,
        int_valued_floats=options.int_valued_floats,
    )


def _python_widen(value: Any, declared: str, accepted: list[Any], options: BfclOptions) -> Any:
    """Improved-mode leniencies (numeric strings, int-valued floats)."""
    if options.int_valued_floats and declared == "integer" and type(value) is float and value.is_integer():
        return int(value)
    string_answer = any(type(item) is str and item != "" for item in accepted)  # then a string is data
    if (
        options.numeric_strings
        and declared in ("integer", "float")
        and type(value) is str
        and not string_answer
    ):
        return _parse_number(value, declared)
    return value


def _parse_number(text: str, declared: str) -> Any:
    try:
        number = float(text.strip())
    except ValueError:
        return text
    if declared == "integer":
        return int(number) if number.is_integer() else text
    return number


def _special_value_check(
    param: str, value: Any, accepted: list[Any], expected: type, nested: type | None
) -> Check | None:
    if expected is dict:
        return check_dict(param, value, accepted)
    if expected is list and nested is dict:
        return check_list_of_dicts(param, value, accepted)
    if expected is str:
        return check_string(param, value, accepted)
    if expected is list:
        return check_list(param, value, accepted)
    return None


class TypeCheck(Check):
    """A type verdict that also says whether the answer treats the value as a variable name."""

    is_variable: bool = False


_TYPE_PASS = TypeCheck(True)
_TYPE_VARIABLE = TypeCheck(True)
_TYPE_VARIABLE.is_variable = True  # shared, read-only verdicts


def _answer_type(accepted: list[Any]) -> type | None:
    for item in accepted:
        if item != "":
            return type(item)
    return None


def check_type(
    param: str, value: Any, accepted: list[Any], declared: str, expected: type[Any], nested: type | None
) -> TypeCheck:
    """BFCL's type rule: exact Python type, or the type of the first non-optional answer.

    When the answer's type differs from the declared one, BFCL treats the answer as a
    *variable* (e.g. a name standing for a list) and later compares values without
    normalisation.  Arrays and tuples get a one-level check of their items.
    """
    answer_type = _answer_type(accepted)
    result = _TYPE_VARIABLE if answer_type is not None and answer_type is not expected else _TYPE_PASS
    if type(value) is expected:
        if nested is None:
            return result
        for candidate in accepted:
            if type(candidate) is not list or all(
                check_type(param, item, candidate, str(nested), nested, None).valid for item in value
            ):
                return result
        message = (
            f"Nested type checking failed for parameter {param!r}. Expected outer type {declared} with "
            f"inner type {nested}. Parameter value: {value!r}."
        )
        failed = TypeCheck(False, "type_error:nested", [message])
        if answer_type is not None and type(value) is answer_type:
            failed.is_variable = True
            return failed
        return _type_error(param, value, declared, failed)
    if answer_type is not None and type(value) is answer_type:
        return _TYPE_VARIABLE
    return _type_error(param, value, declared, TypeCheck(False))


def _type_error(param: str, value: Any, declared: str, result: TypeCheck) -> TypeCheck:
    result.valid = False
    result.error_type = "type_error:simple"
    result.errors.append(
        f"Incorrect type for parameter {param!r}. Expected type {declared}, got "
        f"{type(value).__name__}. Parameter value: {value!r}."
    )
    return result
