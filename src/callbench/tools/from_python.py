"""Strict tool contracts from Python functions: type hints, defaults and docstrings.

``contracts_from_module(module)`` reads every public function a module defines and returns one
contract mapping per function (the shape of a ``tools/*.yaml`` file) plus one note per parameter it
could not type. The JSON Schema of the parameters comes from pydantic: ``Literal[...]`` becomes an
``enum``, ``Annotated[int, Field(ge=1)]`` or ``annotated_types.Ge(1)`` a bound, ``X | None`` a nullable
type, a default a ``default``; a parameter without a default is required, and no other key is
allowed (``additionalProperties: false``). Descriptions come from the docstring: its first paragraph
for the tool, its ``Args:`` section (Google style) for the parameters.

Names: a first parameter called ``state`` is the per-case state of a suite with ``state:`` and is not
a tool parameter; a parameter named like a Python keyword with a trailing underscore (``from_``) is
the keyword in the contract (``from``), and the suite's bindings pass it back under the underscored
name (:mod:`callbench.suites.bindings`).
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from pydantic import ConfigDict, create_model

STATE_PARAMETER = "state"


def contract_name(parameter: str) -> str:
    """The contract's name of a Python parameter: ``from_`` -> ``from``; others unchanged."""
    stripped = parameter[:-1] if parameter.endswith("_") else parameter
    return stripped if stripped != parameter and keyword.iskeyword(stripped) else parameter


def public_functions(module: ModuleType) -> dict[str, Callable[..., Any]]:
    """The functions ``module`` defines itself (not imported ones), public, in source order."""
    found = [
        (name, value)
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
    ]
    found.sort(key=lambda item: item[1].__code__.co_firstlineno)
    return dict(found)


def contract_from_function(function: Callable[..., Any]) -> tuple[dict[str, Any], list[str]]:
    """The contract mapping of ``function`` and the notes on parameters it could not type."""
    name = function.__name__
    summary, documented = _docstring(inspect.getdoc(function) or "")
    notes: list[str] = []
    fields: dict[str, Any] = {}
    parameters = list(inspect.signature(function).parameters.values())
    if parameters and parameters[0].name == STATE_PARAMETER:
        parameters = parameters[1:]
    for parameter in parameters:
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            notes.append(f"{name}: *{parameter.name} cannot be described as parameters; left out")
            continue
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty:
            notes.append(f"{name}: parameter {parameter.name!r} has no type hint; any JSON value is accepted")
            annotation = Any
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[contract_name(parameter.name)] = (annotation, default)
    model = create_model(f"{name}_parameters", __config__=ConfigDict(extra="forbid"), **fields)
    try:
        schema = model.model_json_schema()
    except Exception as exc:  # noqa: BLE001 - a type pydantic cannot describe: say so, keep the rest
        notes.append(f"{name}: its parameter types cannot be written as JSON Schema ({exc}); none written")
        schema = {"type": "object", "properties": {}, "additionalProperties": False}
    schema.pop("title", None)
    for field_name, prop in (schema.get("properties") or {}).items():
        prop.pop("title", None)
        if field_name in documented:
            prop["description"] = documented[field_name]
    schema.setdefault("required", [])
    contract: dict[str, Any] = {"name": name, "description": summary or name.replace("_", " ")}
    contract["parameters"] = schema
    return contract, notes


STATE_FACTORY_PARAMETERS = ["case", "workdir"]
"""The signature of a suite's state factory (``state: tools.py:make_state``): not a tool."""


def contracts_from_module(module: ModuleType) -> tuple[list[dict[str, Any]], list[str]]:
    """A contract per public function of ``module`` (a state factory ``f(case, workdir)`` aside),
    and every note."""
    contracts, notes = [], []
    for name, function in public_functions(module).items():
        if list(inspect.signature(function).parameters) == STATE_FACTORY_PARAMETERS:
            notes.append(f"{name}: takes (case, workdir), a state factory: not a tool")
            continue
        contract, found = contract_from_function(function)
        contracts.append(contract)
        notes.extend(found)
    return contracts, notes


_SECTIONS = ("Args:", "Arguments:", "Parameters:")
_ARG_LINE = re.compile(r"(\w+)\s*(?:\([^)]*\))?:\s*(.*)")


def _docstring(text: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and ``{parameter: description}`` from a Google-style ``Args:`` section
    (``text`` as :func:`inspect.getdoc` gives it: section headers unindented)."""
    lines = text.splitlines()
    head: list[str] = []
    for line in lines:
        if not line.strip() or line.strip() in _SECTIONS:
            break
        head.append(line.strip())
    described: dict[str, str] = {}
    inside, current, base = False, "", -1
    for line in lines:
        stripped = line.strip()
        if stripped in _SECTIONS:
            inside, current, base = True, "", -1
            continue
        if not inside or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:  # the next section (Returns:, Raises:...)
            inside = False
            continue
        match = _ARG_LINE.fullmatch(stripped)
        if match and (base < 0 or indent <= base):
            base, current = indent, contract_name(match[1])
            described[current] = match[2]
        elif current:
            described[current] = f"{described[current]} {stripped}".strip()
    return " ".join(head), described
