"""The tool contract: one YAML/JSON file per tool."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")


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
    equivalent_to: list[str] = Field(default_factory=list)
    """Tools that satisfy the same capability (symmetric once loaded into a registry)."""
    alternative_keys: dict[str, list[list[str]]] = Field(default_factory=dict)
    """Schema-documented alternatives: expected key -> list of alternative key sets.

    ``{"position": [["start"]]}`` lets a start-only call stand for ``position``.
    """
    follow_up_of: list[str] = Field(default_factory=list)
    """Tools this one is a documented follow-up of (an extra call of it after them is tolerated)."""
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

    def provider_schema(self) -> dict[str, Any]:
        """The parameters schema exactly as validated (strictified when ``strict``)."""
        from callbench.tools.schema import strictify

        return strictify(self.parameters) if self.strict else self.parameters

    def hash_payload(self) -> dict[str, Any]:
        """The part of the contract that defines behaviour (metadata excluded) for hashing."""
        return self.model_dump(exclude={"metadata"})
