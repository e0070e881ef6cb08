"""Declaring genomics tools: one decorator carries both the implementation and its contract.

The YAML contracts under ``registry/`` are generated from these declarations by
``scripts/make_genomics_registry.py`` and checked against them by the tests, so the schema a model
sees and the function that runs can never drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ToolFunc = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its implementation and everything its contract says."""

    name: str
    category: str
    description: str
    func: ToolFunc
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    read_only: bool = False
    keywords: tuple[str, ...] = ()
    equivalent_to: tuple[str | dict[str, Any], ...] = ()
    """Equivalent tools: names, or ``{tool, keys}`` when argument names differ (see ToolContract)."""
    alternative_keys: dict[str, list[list[str]]] = field(default_factory=dict)
    follow_up_of: tuple[str | dict[str, Any], ...] = ()
    """Tools this one follows: names, or ``{tool, same_values, requires}`` with the tolerance condition."""
    result: dict[str, Any] = field(default_factory=dict)
    any_of: tuple[tuple[str, ...], ...] = ()
    long_running: bool = False

    def contract(self) -> dict[str, Any]:
        """The contract mapping written to ``registry/<category>/<name>.yaml``."""
        params: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            params["required"] = list(self.required)
        if self.any_of:
            params["anyOf"] = [{"required": list(keys)} for keys in self.any_of]
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "category": self.category,
            "keywords": list(self.keywords),
            "read_only": self.read_only,
            "parameters": params,
        }
        if self.result:
            out["result_schema"] = {"type": "object", "properties": self.result}
        if self.equivalent_to:
            out["equivalent_to"] = list(self.equivalent_to)
        if self.alternative_keys:
            out["alternative_keys"] = self.alternative_keys
        if self.follow_up_of:
            out["follow_up_of"] = list(self.follow_up_of)
        if self.long_running:
            out["metadata"] = {"long_running": True}
        return out


TOOLS: dict[str, ToolSpec] = {}


def tool(
    category: str,
    description: str,
    *,
    params: dict[str, Any] | None = None,
    required: tuple[str, ...] = (),
    read_only: bool = False,
    keywords: tuple[str, ...] = (),
    equivalent_to: tuple[str | dict[str, Any], ...] = (),
    alternative_keys: dict[str, list[list[str]]] | None = None,
    follow_up_of: tuple[str | dict[str, Any], ...] = (),
    result: dict[str, Any] | None = None,
    any_of: tuple[tuple[str, ...], ...] = (),
    long_running: bool = False,
    name: str | None = None,
) -> Callable[[ToolFunc], ToolFunc]:
    """Register the decorated function ``f(ws, **arguments) -> dict`` as a tool."""

    def wrap(func: ToolFunc) -> ToolFunc:
        tool_name = name or func.__name__
        if tool_name in TOOLS:
            raise ValueError(f"duplicate genomics tool {tool_name!r}")
        TOOLS[tool_name] = ToolSpec(
            tool_name,
            category,
            description,
            func,
            params or {},
            required,
            read_only,
            keywords,
            equivalent_to,
            alternative_keys or {},
            follow_up_of,
            result or {},
            any_of,
            long_running,
        )
        return func

    return wrap


# -- schema shorthands ----------------------------------------------------------------------------
def integer(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "integer", "description": desc, **kw}


def number(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "number", "description": desc, **kw}


def string(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **kw}


def boolean(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": desc, **kw}


def enum(desc: str, values: list[Any], **kw: Any) -> dict[str, Any]:
    kind = "integer" if all(isinstance(v, int) for v in values) else "string"
    return {"type": kind, "enum": values, "description": desc, **kw}


def array(desc: str, items: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, "description": desc, **kw}


def obj(desc: str, props: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "description": desc, **kw}
    if props is not None:
        out["properties"] = props
    return out


CHROM = string("Chromosome / sequence id, e.g. SYN01; defaults to the current chromosome")
START = integer("1-based start position (inclusive)", minimum=1)
END = integer("1-based end position (inclusive)", minimum=1)
SEQ = string("DNA sequence (A, C, G, T, N)", minLength=1)
PROTEIN = string("Protein sequence in one-letter code", minLength=1)
FILE = string("File path, relative to the working directory")
REGION = {"chromosome": CHROM, "start": START, "end": END}
