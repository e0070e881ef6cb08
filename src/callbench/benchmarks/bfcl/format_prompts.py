"""The 26 prompt-format variants of BFCL's format-sensitivity category and their system prompts.

A variant fixes five choices: the return format the model must write its calls in (``python``,
``json``, ``verbose_xml``, ``concise_xml``), whether the calls go inside ``<TOOLCALL>`` tags, the
format the function docs are shown in (``python``, ``xml``, ``json``), the prompt layout
(``plaintext`` or ``markdown``) and the wording style (``classic`` or ``experimental``). BFCL
crosses the first three (4 x 2 x 3 = 24 variants, plaintext and classic) and adds two variants that
change only the layout or the style of its default prompt; the variant is named by its query
string (``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic``).

The prompt texts are BFCL's benchmark input, so they are read from the installed ``bfcl-eval``
(``constants/default_prompts.py``, parsed as source, never imported: the import pulls in every
provider SDK). The function docs are rendered here in the three doc formats, to the character as
BFCL renders them (``tests/benchmarks/bfcl/test_format_sensitivity.py`` compares every variant with
BFCL's own prompt builder).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.data import package_root
from callbench.plugin import UserError

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
DOC_FORMATS = ("python", "xml", "json")
TAG_OPEN, TAG_CLOSE = "<TOOLCALL>", "</TOOLCALL>"
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
"""What BFCL appends to every function description it shows a Python-category model."""


@dataclass(frozen=True)
class Variant:
    """One prompt format (see the module docstring)."""

    return_format: str
    tool_call_tag: bool
    doc_format: str
    prompt_format: str = "plaintext"
    style: str = "classic"

    @property
    def name(self) -> str:
        """BFCL's name of the variant: its query string."""
        return (
            f"ret_fmt={self.return_format}&tool_call_tag={self.tool_call_tag}&func_doc_fmt={self.doc_format}"
            f"&prompt_fmt={self.prompt_format}&style={self.style}"
        )

    @property
    def short(self) -> str:
        """A compact label for tables (``python+tag/json``, ``python/json markdown``)."""
        label = f"{self.return_format}{'+tag' if self.tool_call_tag else ''}/{self.doc_format}"
        extras = [
            value for value in (self.prompt_format, self.style) if value not in ("plaintext", "classic")
        ]
        return " ".join([label, *extras])


def _all_variants() -> tuple[Variant, ...]:
    crossed = [
        Variant(returned, tag, doc)
        for returned in RETURN_FORMATS
        for tag in (True, False)
        for doc in DOC_FORMATS
    ]
    # BFCL's default prompt with one more change each: markdown layout, experimental wording
    crossed.append(Variant("python", False, "json", prompt_format="markdown"))
    crossed.append(Variant("python", False, "json", style="experimental"))
    return tuple(crossed)


VARIANTS: tuple[Variant, ...] = _all_variants()
"""The 26 variants in BFCL's order (the order decides the ``format_sensitivity_<n>`` numbering)."""
DEFAULT_VARIANT = Variant("python", False, "json")
"""The format BFCL's prompt-mode models get outside this category."""
_BY_NAME = {variant.name: variant for variant in VARIANTS}


def parse_variant(name: str) -> Variant:
    """The variant named ``name`` (BFCL's query string)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UserError(f"bfcl: unknown format-sensitivity variant {name!r}") from None


# ---------------------------------------------------------------------------------------------
# BFCL's prompt texts, read from the installed package


@dataclass(frozen=True)
class PromptTexts:
    """The template texts of ``constants/default_prompts.py``."""

    output_formats: dict[str, str]
    param_types: dict[str, str]
    styles: dict[str, dict[str, str]]
    layouts: dict[str, str]


def _prompts_source() -> Path:
    root = package_root()
    path = root / "constants" / "default_prompts.py" if root else None
    if path is None or not path.is_file():
        raise UserError(
            "bfcl: format sensitivity needs BFCL's prompt templates from the installed bfcl-eval "
            "(pip install --no-deps bfcl-eval)"
        )
    return path


@lru_cache(maxsize=1)
def prompt_texts() -> PromptTexts:
    """BFCL's prompt templates, parsed from the package source (literals only, nothing executed)."""
    path = _prompts_source()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError) as exc:
        raise UserError(f"{path}: cannot read BFCL's prompt templates ({exc})") from None
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = _literal(node.value, values)
    try:
        return PromptTexts(
            output_formats=values["OUTPUT_FORMAT_MAPPING"],
            param_types=values["PARAM_TYPE_MAPPING"],
            styles=values["PROMPT_STYLE_TEMPLATES"],
            layouts=values["PROMPT_TEMPLATE_MAPPING"],
        )
    except KeyError as exc:
        raise UserError(f"{path}: BFCL's prompt templates lack {exc.args[0]}") from None


def _literal(node: ast.expr, known: dict[str, Any]) -> Any:
    """A literal expression, where a bare name stands for a module constant defined before it."""
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.Dict):
        return {
            _literal(key, known): _literal(value, known)
            for key, value in zip(node.keys, node.values, strict=True)
            if key is not None
        }
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None  # not a literal (e.g. an f-string); no template needs one


# ---------------------------------------------------------------------------------------------
# The system prompt of a variant


def shown_docs(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The docs as BFCL shows them in this category: the Python note appended to every description
    twice (BFCL adds it when it reads the source category's entries, and again when it reads them
    as format-sensitivity entries)."""
    return [{**doc, "description": doc.get("description", "") + PYTHON_HINT * 2} for doc in functions]


def system_prompt(variant: Variant, functions: list[dict[str, Any]]) -> str:
    """The system prompt BFCL sends a prompt-mode model for ``variant`` (docs as shipped; the
    Python note is added here)."""
    texts = prompt_texts()
    wording = texts.styles[variant.style]
    call_rule = wording["tool_call_with_tag" if variant.tool_call_tag else "tool_call_no_tag"].format(
        output_format=texts.output_formats[variant.return_format],
        param_types=texts.param_types[variant.return_format],
    )
    tools = wording["available_tools"].format(
        format=variant.doc_format, functions=render_docs(shown_docs(functions), variant.doc_format)
    )
    return texts.layouts[variant.prompt_format].format(
        persona=wording["persona"],
        task=wording["task"],
        tool_call_format=call_rule,
        multiturn_behavior=wording["multiturn_behavior"],
        available_tools=tools,
    )


def render_docs(functions: list[dict[str, Any]], doc_format: str) -> str:
    """Function docs in one of the three doc formats."""
    if doc_format == "json":
        return json.dumps(functions, indent=4)
    if doc_format == "xml":
        return "\n".join(_xml_function(doc) for doc in functions)
    if doc_format == "python":
        pieces: list[str] = []
        for doc in functions:
            pieces += [_python_function(doc), "\n"]
        return "\n\n".join(pieces)
    raise UserError(f"bfcl: unknown function-doc format {doc_format!r}")


def _with_enum(spec: dict[str, Any]) -> str:
    text = spec.get("description", "")
    if "enum" in spec:
        text += f" Enum values: {spec['enum']}."
    return text


def _xml_function(doc: dict[str, Any]) -> str:
    schema = doc["parameters"]
    required = schema.get("required")
    lines = [
        f'<function name="{doc["name"]}">\n',
        f"  <desc>{doc.get('description', '')}</desc>\n",
        "  <params>\n",
    ]
    lines += [_xml_param(name, spec, required, 2) for name, spec in schema.get("properties", {}).items()]
    lines += ["  </params>\n", "</function>\n"]
    return "".join(lines)


def _xml_param(name: str, spec: dict[str, Any], required: list[str] | None, level: int) -> str:
    pad = "  " * level
    kind = spec.get("type", "string")
    if "type" in spec.get("items", {}):
        kind = f"{kind}[{spec['items']['type']}]"
    elif "additionalProperties" in spec:
        kind = f"{kind}[{spec['additionalProperties'].get('type', 'string')}]"
    needed = "true" if required is None or name in required else "false"
    attributes = f'name="{name}" type="{kind}" required="{needed}"'
    if "default" in spec:
        attributes += f' default="{spec["default"]!r}"'
    # BFCL drops every comma of the attribute text, those inside a default value included
    out = [f"{pad}<param {attributes.replace(',', '')}>\n", f"{pad}  <desc>{_with_enum(spec)}</desc>\n"]
    if "properties" in spec:
        out.append(f"{pad}  <params>\n")
        out += [
            _xml_param(child, child_spec, spec.get("required"), level + 2)
            for child, child_spec in spec["properties"].items()
        ]
        out.append(f"{pad}  </params>\n")
    out.append(f"{pad}</param>\n")
    return "".join(out)


_PY_NAMES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}


def _python_type(spec: dict[str, Any]) -> str:
    kind = spec.get("type", "string")
    if kind in _PY_NAMES:
        return _PY_NAMES[kind]
    if kind in ("array", "list", "tuple") and "items" in spec:
        return f"list[{_python_type(spec['items'])}]"
    if kind in ("object", "dict"):
        if "additionalProperties" in spec:
            return f"dict[str, {_python_type(spec['additionalProperties'])}]"
        return "dict"
    return str(kind)


def _python_function(doc: dict[str, Any]) -> str:
    properties = doc.get("parameters", {}).get("properties", {})
    lines = [f"# Function: {doc['name']}\n", '    """\n', f"    {doc.get('description', '')}\n\n"]
    if properties:
        lines.append("    Args:\n")
        for name, spec in properties.items():
            lines += _python_param(name, spec, 0)
    lines.append('    """\n')
    return "".join(lines)


def _python_param(name: str, spec: dict[str, Any], depth: int) -> list[str]:
    pad = " " * (8 + 4 * depth)
    default = f", default={spec['default']!r}" if "default" in spec else ""
    lines = [f"{pad}{name} ({_python_type(spec)}{default}): {_with_enum(spec)}\n"]
    for child, child_spec in spec.get("properties", {}).items():
        lines += _python_param(child, child_spec, depth + 1)
    return lines
