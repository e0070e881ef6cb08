"""The tool contract: one YAML/JSON file per tool."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")
VALUE_SOURCE = re.compile(r"^(arguments|result)(\.[^.].*)?$")


class Equivalence(BaseModel):
    """A tool that satisfies the same capability, with the argument keys that correspond.

    ``keys`` maps this tool's argument names to the other tool's (``{sequence: dna}``); keys not
    listed are the same on both sides. The mapping is used in both directions.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str
    keys: dict[str, str] = Field(default_factory=dict)


class FollowUp(BaseModel):
    """A documented follow-up: an extra call of this tool is tolerated (task-completion tier) only
    after a matched expected call of ``tool``, and only where the stated condition holds."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    """The tool this one follows."""
    same_values: dict[str, str] = Field(default_factory=dict)
    """This call's argument key -> where the equal value sits in the followed call:
    ``arguments.<path>`` or ``result.<path>`` (e.g. ``{filename: result.savedTo}``: re-exporting the
    file the followed call wrote)."""
    requires: dict[str, Any] = Field(default_factory=dict)
    """Literal argument values the followed call must have had (e.g. ``{auto_save: true}``)."""

    @field_validator("same_values")
    @classmethod
    def _check_sources(cls, value: dict[str, str]) -> dict[str, str]:
        for key, source in value.items():
            if not VALUE_SOURCE.match(source):
                raise ValueError(
                    f"same_values.{key}: {source!r} must be 'arguments.<path>' or 'result.<path>'"
                )
        return value


class ToolContract(BaseModel):
    """A tool as offered to models and checked by scorers.

    ``parameters`` is a JSON Schema object. With ``strict`` (the default) every object schema that
    lists ``properties`` forbids additional properties unless it says otherwise, and the ``required``
    lists are honoured by the validator.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    """Unique tool name (what the model calls)."""
    description: str = ""
    category: str = "general"
    keywords: list[str] = Field(default_factory=list)
    """Extra retrieval terms."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the argument object."""
    result_schema: dict[str, Any] | None = None
    """Optional JSON Schema of the result; shapes synthetic results of the contract executor."""
    read_only: bool = False
    """True when calling the tool changes no state (extra calls of it are tolerated in task completion)."""
    equivalent_to: list[str | Equivalence] = Field(default_factory=list)
    """Tools that satisfy the same capability (symmetric once loaded into a registry): a name, or
    ``{tool, keys}`` when the argument names differ (``keys``: this tool's key -> the other's)."""
    alternative_keys: dict[str, list[list[str]]] = Field(default_factory=dict)
    """Schema-documented alternatives: expected key -> list of alternative key sets.

    ``{"position": [["start"]]}`` lets a start-only call stand for ``position``.
    """
    follow_up_of: list[str | FollowUp] = Field(default_factory=list)
    """Tools this one is a documented follow-up of: a name (tolerated after a matched call of it) or
    a :class:`FollowUp` with the condition under which it is tolerated."""
    strict: bool = True
    """Forbid additional properties on object schemas that do not say otherwise."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form extras (source file, version, priority...). Not sent to models."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not NAME_PATTERN.match(value):
            raise ValueError(f"tool name {value!r} must match {NAME_PATTERN.pattern}")
        return value

    def equivalences(self) -> list[Equivalence]:
        """``equivalent_to`` with plain names as key-preserving equivalences."""
        return [e if isinstance(e, Equivalence) else Equivalence(tool=e) for e in self.equivalent_to]

    def follow_ups(self) -> list[FollowUp]:
        """``follow_up_of`` with plain names as unconditional follow-ups."""
        return [f if isinstance(f, FollowUp) else FollowUp(tool=f) for f in self.follow_up_of]

    _memo: dict[str, tuple[int, Any]] = PrivateAttr(default_factory=dict)

    def memo(self, key: str, compute: Callable[[ToolContract], Any]) -> Any:
        """``compute(self)``, kept while ``parameters`` is the same object (contracts are read-only by
        convention; a copy with other parameters computes its own). Every call validates its arguments
        against the strict schema, so re-deriving it each time was a hot spot."""
        stamp = id(self.parameters)
        hit = self._memo.get(key)
        if hit is None or hit[0] != stamp:
            hit = self._memo[key] = (stamp, compute(self))
        return hit[1]

    def provider_schema(self) -> dict[str, Any]:
        """The parameters schema exactly as validated (strictified when ``strict``). Read-only: shared."""
        schema: dict[str, Any] = self.memo(
            "provider_schema", lambda c: strictify(c.parameters) if c.strict else c.parameters
        )
        return schema

    def hash_payload(self) -> dict[str, Any]:
        """The part of the contract that defines behaviour (metadata excluded) for hashing."""
        return self.model_dump(exclude={"metadata"})


def strictify(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a copy where object schemas with ``properties`` default to ``additionalProperties: false``."""
    out = copy.deepcopy(schema)
    _strictify_in_place(out)
    return out


def _strictify_in_place(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            node.setdefault("type", "object")
            node.setdefault("properties", {})
            node.setdefault("additionalProperties", False)
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
                for sub in value.values():
                    _strictify_in_place(sub)
            elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
                _strictify_in_place(value)
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
                for sub in value:
                    # Branches of a root-level anyOf usually only add "required" constraints;
                    # forbidding extra keys inside them would reject every valid call.
                    if isinstance(sub, dict) and "properties" in sub:
                        _strictify_in_place(sub)
