"""Java and JavaScript literal readers that mirror BFCL's type converters.

BFCL asks models to pass every Java/JavaScript argument as a *string* holding a
source-language literal (``"5L"``, ``"new int[]{1, 2}"``, ``"{a: 1}"``) and turns it into a
Python value with small regular-expression readers before comparing.  Parity with the
leaderboard requires reproducing those readers' behaviour, including their quirks:

* a literal that does not match its type's pattern stays a plain string (and then usually
  fails the later type check);
* a Java ``char`` literal never converts (BFCL's pattern cannot match);
* ``new X[]{...}`` elements of type ``String`` keep their quotes, while ``ArrayList``
  elements lose them;
* ``Set``, ``Hashtable``, ``Queue`` and ``Stack`` are not supported (BFCL raises).

The patterns below are behavioural facts of bfcl-eval 2026.3.23; the code is our own.

Improved mode passes :class:`LiteralRules` that read some literals as the languages do instead
(quoted collection elements, typed ``any`` elements, int-valued float literals for integer
types); :data:`FAITHFUL` keeps every quirk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LiteralRules:
    """Improved-mode reading rules (all off reproduces BFCL).

    Attributes:
        quoted_elements: ``String``/``char`` elements of Java arrays and ArrayLists: a quoted
            literal reads as its text, an unquoted word as a :class:`JavaName` (a variable).
        typed_any: Elements of a Java collection of ``any`` read as typed literals.
        int_valued_floats: A decimal literal with an integral value (``"5.0"``) reads as an
            integer for Java byte/short/integer/long and JavaScript integer parameters.
    """

    quoted_elements: bool = False
    typed_any: bool = False
    int_valued_floats: bool = False


FAITHFUL = LiteralRules()


@dataclass(frozen=True)
class JavaName:
    """An unquoted word where a Java ``String``/``char`` was due: a variable, never equal to a text."""

    text: str

    def __repr__(self) -> str:
        return f"<variable {self.text}>"


JAVA_TYPES: dict[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "long": int,
    "float": float,
    "double": float,
    "boolean": bool,
    "char": str,
    "Array": list,
    "ArrayList": list,
    "Queue": list,
    "Stack": list,
    "Set": set,
    "HashMap": dict,
    "Hashtable": dict,
    "String": str,
    "any": str,
}
JS_TYPES: dict[str, type] = {
    "String": str,
    "integer": int,
    "float": float,
    "Bigint": int,
    "Boolean": bool,
    "dict": dict,
    "array": list,
    "any": str,
}

_INT = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")
_JS_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"^-?\d+n$")
_F_SUFFIX = re.compile(r"[fF]$")
_L_SUFFIX = re.compile(r"[lL]$")

_ARRAYLIST_ASLIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_ARRAYLIST_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADD_CALL = re.compile(r"add\((.+?)\)")
_ARRAYLIST_EMPTY = re.compile(r"new\s+ArrayList<\w*>\(\)")
_JAVA_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_HASHMAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_HASHMAP_EMPTY = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_PUT_CALL = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")

_JS_ARRAY_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
_JS_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_JS_INNER = re.compile(r"\[(.*?)\]")
_JS_OBJECT = re.compile(r"\{(.*?)\}")
_JS_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


class UnsupportedLiteralType(Exception):
    """A type BFCL's converters cannot handle (BFCL itself raises on these)."""


# ---------------------------------------------------------------- Java


def java_value(value: str, java_type: str, nested: str | None = None, rules: LiteralRules = FAITHFUL) -> Any:
    """Convert a Java literal string the way BFCL does for parameter type ``java_type``."""
    if java_type not in JAVA_TYPES:
        raise UnsupportedLiteralType(f"Unsupported type: {java_type}")
    if rules.int_valued_floats and java_type in ("byte", "short", "integer", "long"):
        whole = _whole_number(value, _JAVA_DOUBLE)
        if whole is not None:
            return whole
    if java_type in ("byte", "short", "integer"):
        return int(value) if _INT.match(value) else str(value)
    if java_type == "float":
        return float(_F_SUFFIX.sub("", value)) if _JAVA_FLOAT.match(value) else str(value)
    if java_type == "double":
        return float(value) if _JAVA_DOUBLE.match(value) else str(value)
    if java_type == "long":
        return int(_L_SUFFIX.sub("", value)) if _JAVA_LONG.match(value) else str(value)
    if java_type == "boolean":
        return value == "true" if value in ("true", "false") else str(value)
    if java_type == "ArrayList":
        return _java_arraylist(value, nested, rules)
    if java_type == "Array":
        return _java_array(value, nested, rules)
    if java_type == "HashMap":
        return _java_hashmap(value)
    if java_type in ("Set", "Hashtable", "Queue", "Stack"):
        raise UnsupportedLiteralType(f"{java_type} conversion is not implemented")
    # char (BFCL's char pattern can never match), String and any stay strings.
    return str(value)


def _whole_number(text: str, pattern: re.Pattern[str]) -> int | None:
    """The integer value of a decimal literal such as ``5.0`` (None when not integral or not a number)."""
    if not pattern.match(text):
        return None
    number = float(text)
    return int(number) if number.is_integer() else None


def _java_element(text: str, nested: str | None, strip_quotes: bool, rules: LiteralRules) -> Any:
    if rules.quoted_elements and nested in ("char", "String"):
        return _java_text_element(text, nested)
    if rules.typed_any and nested == "any":
        return _java_typed_element(text, rules)
    if strip_quotes and nested in ("char", "String"):
        return text[1:-1]
    return java_value(text, nested, rules=rules) if nested else java_plain_value(text)


def _java_text_element(text: str, nested: str) -> Any:
    """A String/char element read as Java reads it: a quoted literal, else a variable."""
    quote = "'" if nested == "char" else '"'
    if len(text) >= 2 and text[0] == quote and text[-1] == quote:
        return text[1:-1].replace("\\" + quote, quote)
    return JavaName(text)


def _java_typed_element(text: str, rules: LiteralRules) -> Any:
    """An element of a collection of ``any``: a typed literal, else (with quoted_elements) a variable."""
    value = java_plain_value(text)
    if rules.quoted_elements and type(value) is str and not (text.startswith('"') and text.endswith('"')):
        return JavaName(text)
    return value


def _java_arraylist(text: str, nested: str | None, rules: LiteralRules = FAITHFUL) -> Any:
    found = _ARRAYLIST_ASLIST.search(text)
    if found:
        return [_java_element(part.strip(), nested, True, rules) for part in found.group(1).split(",")]
    found = _ARRAYLIST_ADDS.search(text)
    if found:
        return [_java_element(arg.strip(), nested, True, rules) for arg in _ADD_CALL.findall(found.group(1))]
    if _ARRAYLIST_EMPTY.search(text):
        return []
    return text


def _java_array(text: str, nested: str | None, rules: LiteralRules = FAITHFUL) -> Any:
    found = _JAVA_ARRAY.search(text)
    if not found:
        return text
    parts = [part.strip() for part in found.group(1).split(",") if part.strip()]
    # Unlike ArrayList, BFCL keeps the quotes of String elements inside `new T[]{...}`.
    return [_java_element(part, nested, False, rules) for part in parts]


def _java_hashmap(text: str) -> Any:
    found = _HASHMAP.search(text)
    if found:
        body = found.group(1)
        result: dict[str, Any] = {}
        if body.strip():
            for key, raw in _PUT_CALL.findall(body):
                result[key] = java_plain_value(raw.strip())
        return result
    if _HASHMAP_EMPTY.search(text):
        return {}
    return text


def java_plain_value(text: str) -> Any:
    """Read an untyped Java literal (collection element or map value)."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(_F_SUFFIX.sub("", text))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


# ---------------------------------------------------------------- JavaScript


def js_value(value: str, js_type: str, nested: str | None = None, rules: LiteralRules = FAITHFUL) -> Any:
    """Convert a JavaScript literal string the way BFCL does for parameter type ``js_type``."""
    if js_type not in JS_TYPES:
        raise UnsupportedLiteralType(f"Unsupported type: {js_type}")
    if rules.int_valued_floats and js_type == "integer":
        whole = _whole_number(value, _JS_FLOAT)
        if whole is not None:
            return whole
    if js_type == "String":
        quoted = (value.startswith('"') and value.endswith('"')) or (
            value.startswith("'") and value.endswith("'")
        )
        return value[1:-1] if quoted else str(value)
    if js_type == "integer":
        return int(value) if _INT.match(value) else str(value)
    if js_type == "float":
        return float(value) if _JS_FLOAT.match(value) else str(value)
    if js_type == "Bigint":
        return int(value[:-1]) if _JS_BIGINT.match(value) else str(value)
    if js_type == "Boolean":
        return value == "true" if value in ("true", "false") else str(value)
    if js_type == "dict":
        return _js_object(value.strip())
    if js_type == "array":
        return _js_array(value.strip(), nested, rules)
    return str(value)


def _js_array(code: str, nested: str | None, rules: LiteralRules = FAITHFUL) -> Any:
    try:
        return _js_array_unguarded(code, nested, rules)
    except Exception:  # noqa: BLE001 - BFCL falls back to the raw text on any conversion failure
        return code


def _js_array_unguarded(code: str, nested: str | None, rules: LiteralRules) -> Any:
    grid = _JS_ARRAY_2D.match(code)
    if grid:
        rows = []
        for index, inner in enumerate(_JS_INNER.findall(grid.group(0))):
            inner = inner.strip()
            if index == 0 and inner.startswith("["):
                inner = inner[1:]
            rows.append([js_plain_value(part.strip()) for part in inner.split(",")])
        return rows
    flat = _JS_ARRAY.match(code)
    if not flat:
        return code
    body = flat.group(1) if flat.group(1) is not None else flat.group(2)
    body = (body or "").strip()
    parts = body.split(",") if body else []
    if not nested:
        return [js_plain_value(part.strip()) for part in parts]
    return [js_value(part.strip(), nested, rules=rules) for part in parts]


def _js_object(code: str) -> Any:
    if code == "{}":
        return {}
    found = _JS_OBJECT.match(code)
    if not found:
        return code
    result: dict[str, Any] = {}
    for key, raw in _JS_PAIR.findall(found.group(1)):
        key = key.strip().strip("'\"")
        raw = raw.strip()
        if raw.startswith("[") and raw.endswith("]"):
            result[key] = _js_array(raw, None)
        elif raw.startswith("{") and raw.endswith("}"):
            result[key] = _js_object(raw)
        else:
            result[key] = js_plain_value(raw.strip("'\""))
    return result


def js_plain_value(text: str) -> Any:
    """Read an untyped JavaScript literal (array element or object value)."""
    text = text.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    quoted = (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'"))
    if quoted:
        return text[1:-1]
    return _number_or_text(text)
