"""The ``contract`` executor: deterministic synthetic results shaped by the tool's result schema."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.hashing import canonical_json

MAX_DEPTH = 6


class ContractExecutor(Executor):
    """Synthetic results seeded by a hash of the tool name and arguments (same on every machine)."""

    name = "contract"

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        return ContractSession(suite.registry_for(case))


class ContractSession(ExecutorSession):
    """Answers every call of a registered tool with its synthetic result."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        contract = self.registry.find(name)
        if contract is None:
            return ToolOutcome.failure(f"Unknown tool: {name}")
        return ToolOutcome(ok=True, result=synthetic_result(name, arguments, contract.result_schema))


def synthetic_result(name: str, arguments: dict[str, Any], schema: dict[str, Any] | None) -> Any:
    """A reproducible result for ``name(arguments)``: a value of ``schema`` or a generic acknowledgement."""
    seed = int(
        hashlib.sha256(f"{name}\n{canonical_json(arguments)}".encode("utf-8", "surrogatepass")).hexdigest()[
            :16
        ],
        16,
    )
    if schema is None:
        return {"status": "ok", "tool": name, "arguments": arguments}
    return _value(schema, random.Random(seed), name, arguments, depth=0)


def _value(
    schema: dict[str, Any], rng: random.Random, label: str, arguments: dict[str, Any], depth: int
) -> Any:
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if key in schema and schema[key]:
            return _value(schema[key][0], rng, label, arguments, depth + 1)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if depth > MAX_DEPTH:
        return None
    if kind == "object":
        props = schema.get("properties", {})
        return {key: _field(key, sub, rng, arguments, depth) for key, sub in props.items()}
    if kind == "array":
        items = schema.get("items", {"type": "string"})
        count = max(int(schema.get("minItems", 1)), 1)
        return [_value(items, rng, label, arguments, depth + 1) for _ in range(min(count, 3))]
    return _scalar(kind, schema, rng, label)


def _field(
    key: str, schema: dict[str, Any], rng: random.Random, arguments: dict[str, Any], depth: int
) -> Any:
    # Echo an argument of the same name when its type fits: results then carry the values later
    # steps refer to (a file path, an id the caller chose), as a real tool's result would.
    if key in arguments and _fits(schema, arguments[key]):
        return arguments[key]
    return _value(schema, rng, key, arguments, depth + 1)


def _fits(schema: dict[str, Any], value: Any) -> bool:
    kind = schema.get("type")
    checks: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "integer": int,
        "number": (int, float),
        "boolean": bool,
        "array": list,
        "object": dict,
    }
    return kind is None or (isinstance(kind, str) and isinstance(value, checks.get(kind, object)))


def _scalar(kind: str, schema: dict[str, Any], rng: random.Random, label: str) -> Any:
    if kind == "string":
        return f"{label}_{rng.getrandbits(32):08x}"
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        high = int(schema.get("maximum", low + 1000))
        return rng.randint(low, max(low, high))
    if kind == "number":
        least = float(schema.get("minimum", 0.0))
        most = float(schema.get("maximum", least + 100.0))
        return round(rng.uniform(least, most), 3)
    if kind == "boolean":
        return bool(rng.getrandbits(1))
    return None
