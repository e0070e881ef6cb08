"""Calls written as text in a format-sensitivity variant's return format: reading and writing them.

Reading (:func:`decode_text`) follows BFCL's prompt-mode decoding step by step, quirks included,
because the faithful verdict depends on it:

* the text is stripped of backticks, newlines and spaces at both ends and wrapped in ``[`` ``]``
  where it does not already start / end with them (for every return format);
* with tool-call tags, only the text of the first ``<TOOLCALL>...</TOOLCALL>`` counts (none: failure);
* ``python``: one call or a list (tuple, set) of calls, read from the syntax tree. Keyword arguments
  only (positional ones are dropped); constants as they are; a unary operator negates its constant
  operand, whatever the operator; arithmetic on literals is evaluated; a bare name is its text; a
  call without keywords is its source text, with keywords a nested ``{name: {...}}``; a subscript is
  its source text; anything else (attributes, comparisons, f-strings...) fails;
* ``json``: from the first ``[`` to the last ``]``, then the first ``[{...}, ...]``-shaped span;
  text that is no JSON decodes to no calls (so it fails later, on the count); each item
  ``{"function": name, "parameters": {...}}``;
* ``verbose_xml`` / ``concise_xml``: the first ``<functions>...</functions>`` span as XML; each
  parameter's value (attribute ``value``, or the element text, stripped) converted by its ``type``
  attribute: ``integer`` / ``float`` by number parsing, ``boolean`` true iff ``true`` in any case,
  ``null`` to None, ``array`` / ``tuple`` / ``dict`` / ``object`` as a Python literal, anything
  else kept as text.

BFCL evaluates arithmetic with Python's ``eval``; here only literals, containers, indexing, unary and
binary operators are evaluated (an expression calling a builtin, which ``eval`` would run, fails
instead: model output is never executed).

Writing (:func:`render_calls`) gives the text a model that followed the variant exactly would have
written for structured calls; the scorer uses it for a round that carries calls but no text (the
built-in agents, which answer with structured calls), and marks the verdict so.
"""

from __future__ import annotations

import ast
import json
import operator
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from callbench.benchmarks.bfcl.format_prompts import TAG_CLOSE, TAG_OPEN, Variant


class TextDecodeError(Exception):
    """The text cannot be read as calls in the variant's format (BFCL: ``ast_decoder:decoder_failed``)."""


_TAGGED = re.compile(re.escape(TAG_OPEN) + r"(.*?)" + re.escape(TAG_CLOSE), re.DOTALL)
_XML_SPAN = re.compile(r"<functions>(.*?)</functions>", re.DOTALL)
_BRACKETS = re.compile(r"\[.*\]", re.DOTALL)
_JSON_LIST = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)


def decode_text(text: Any, variant: Variant, whole_json: bool = False) -> Any:
    """The calls ``text`` holds, as BFCL decodes them: normally ``[{name: {param: value}}]``, but
    any value the format's reader produces (the caller checks the shape). ``whole_json`` (improved
    mode's ``json_whole_answer``): a JSON answer's call list is read as one JSON value, where BFCL's
    reader cuts it at the first ``}]``.

    Raises:
        TextDecodeError: when BFCL's decoder raises.
    """
    try:
        return _decode(text, variant, whole_json)
    except TextDecodeError:
        raise
    except Exception as exc:  # BFCL reports every decoding failure the same way
        raise TextDecodeError(f"{type(exc).__name__}: {exc}") from exc


def _decode(text: Any, variant: Variant, whole_json: bool) -> Any:
    body = text.strip("`\n ")
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body += "]"
    if variant.tool_call_tag:
        found = _TAGGED.search(body)
        if found is None:
            raise TextDecodeError(f"no {TAG_OPEN} section in the answer")
        body = found.group(1).strip()
    if variant.return_format == "python":
        return _python_calls(body)
    if variant.return_format == "json":
        return _json_calls(body, whole_json)
    found = _XML_SPAN.search(body)
    if found is None:
        raise TextDecodeError("no <functions> element in the answer")
    root = ET.fromstring(found.group(0))
    return _xml_calls(root, verbose=variant.return_format == "verbose_xml")


# -- python ---------------------------------------------------------------------------------------


def _python_calls(body: str) -> list[dict[str, Any]]:
    tree = ast.parse(body.strip().strip("'"), mode="eval").body
    if isinstance(tree, ast.Call):
        return [_call(tree)]
    calls = []
    for item in tree.elts:  # type: ignore[attr-defined]  # a non-container fails, as in BFCL
        if not isinstance(item, ast.Call):
            raise TextDecodeError(f"not a call: {ast.unparse(item)}")
        calls.append(_call(item))
    return calls


def _call(node: ast.Call) -> dict[str, Any]:
    parts = []
    target = node.func
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        parts.append(target.id)
    return {".".join(reversed(parts)): {kw.arg: _value(kw.value) for kw in node.keywords}}


def _value(node: ast.expr | None) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        return -node.operand.value  # type: ignore[attr-defined]  # BFCL negates, whatever the operator
    if isinstance(node, ast.List):
        return [_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(key): _value(item) for key, item in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _call(node) if node.keywords else ast.unparse(node)
    if isinstance(node, ast.Tuple):
        return tuple(_value(item) for item in node.elts)
    if isinstance(node, ast.Subscript):
        return f"{ast.unparse(node.value)}[{ast.unparse(node.slice)}]"
    raise TextDecodeError(f"unsupported value {type(node).__name__}")


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_LARGEST_POWER = 10_000


def _arithmetic(node: ast.expr) -> Any:
    """What Python evaluates a literal expression to (BFCL runs ``eval`` on arithmetic)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [_arithmetic(item) for item in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and all(key is not None for key in node.keys):
        return {_arithmetic(k): _arithmetic(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_arithmetic(node.operand))
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
        return _arithmetic(node.value)[_arithmetic(node.slice)]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, int | float) and abs(right) > _LARGEST_POWER:
            raise TextDecodeError("exponent too large to evaluate")
        return _BINARY[type(node.op)](left, right)
    raise TextDecodeError(f"cannot evaluate {ast.unparse(node)}")


# -- json -----------------------------------------------------------------------------------------


def _json_calls(body: str, whole_json: bool) -> list[dict[str, Any]]:
    items = _first_json_list(body) if whole_json else None
    if items is not None:
        return [{item["function"]: item["parameters"]} for item in items if isinstance(item, dict)]
    span = _BRACKETS.search(body)
    text = span.group(0) if span else body
    listed = _JSON_LIST.search(text)
    if listed:
        text = listed.group(0)
    try:
        items = json.loads(text)
    except json.JSONDecodeError:
        return []  # BFCL's JSON reader gives no calls for text that is no JSON
    return [{item["function"]: item["parameters"]} for item in items if isinstance(item, dict)]


def _first_json_list(body: str) -> list[Any] | None:
    """The first JSON array of calls (objects with a ``function`` key) that starts at a ``[`` of
    ``body`` (text after it ignored), or None."""
    decoder = json.JSONDecoder()
    start = body.find("[")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(body, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, list) and all(isinstance(item, dict) and "function" in item for item in value):
            return value
        start = body.find("[", start + 1)
    return None


# -- xml ------------------------------------------------------------------------------------------


def _xml_calls(root: ET.Element, verbose: bool) -> list[dict[str, Any]]:
    calls = []
    for function in root.findall("function"):
        name = function.attrib["name"]
        arguments: dict[Any, Any] = {}
        if verbose:
            holder = function.find("params")
            for param in (holder if holder is not None else function).findall("param"):
                arguments[param.attrib.get("name")] = _typed(
                    param.attrib.get("value", ""), param.attrib.get("type", "string")
                )
        else:
            for param in function.findall("param"):
                text = (param.text or "").strip()
                arguments[param.attrib["name"]] = _typed(text, param.attrib.get("type", "string"))
        calls.append({name: arguments})
    return calls


def _typed(raw: str, kind: str) -> Any:
    if kind == "integer":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "boolean":
        return raw.lower() == "true"
    if kind == "null":
        return None
    if kind in ("array", "tuple", "object", "dict"):
        return ast.literal_eval(raw)
    return raw  # "string" and any type name BFCL does not know


# -- writing --------------------------------------------------------------------------------------


def render_calls(calls: list[tuple[str, dict[str, Any]]], variant: Variant) -> str:
    """``calls`` ((name, arguments) pairs) as a model following ``variant`` exactly writes them."""
    if variant.return_format == "python":
        inner = ", ".join(
            f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
            for name, arguments in calls
        )
        text = f"[{inner}]"
    elif variant.return_format == "json":
        items = [{"function": name, "parameters": arguments} for name, arguments in calls]
        text = f"```json\n{json.dumps(items, ensure_ascii=False)}\n```"
    else:
        verbose = variant.return_format == "verbose_xml"
        text = (
            "<functions>" + "".join(_xml_call(name, args, verbose) for name, args in calls) + "</functions>"
        )
    return f"{TAG_OPEN}{text}{TAG_CLOSE}" if variant.tool_call_tag else text


def _xml_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "dict"
    return "string"


def _xml_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return repr(value)


def _escape(text: str, attribute: bool) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if attribute:  # XML folds raw whitespace inside attribute values into spaces
        text = text.replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    return text


def _xml_call(name: str, arguments: dict[str, Any], verbose: bool) -> str:
    params = []
    for key, value in arguments.items():
        kind, text = _xml_kind(value), _xml_text(value)
        if verbose:
            params.append(f'<param name="{_escape(key, True)}" value="{_escape(text, True)}" type="{kind}"/>')
        else:
            params.append(f'<param name="{_escape(key, True)}" type="{kind}">{_escape(text, False)}</param>')
    body = "".join(params)
    if verbose:
        body = f"<params>{body}</params>"
    return f'<function name="{_escape(name, True)}">{body}</function>'
