"""Parse ``ComplexFuncBench.jsonl`` lines into typed samples.

One line holds ``id`` (``"<Domain>-<n>"``), ``functions`` (the offered tool list) and
``conversations``: the user query, then per gold step an assistant turn with its parallel
``function_call`` list followed by an ``observation`` turn whose ``content`` list answers those
calls by index, and finally the gold answer as assistant text. Problems are reported per line
with the file, line and field named; they are never asserted. A parameter schema that is not
valid JSON Schema only because of a type name (``"float"``) is repaired for the offered tools and
the repair is reported; the sample is kept, as upstream keeps it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict

from callbench.plugin import SuiteError, canonical_json

OPTIONAL_FUNCTIONS = frozenset(
    {
        "Location_to_Lat_Long",
        "Search_Hotel_Destination",
        "Search_Attraction_Location",
        "Search_Car_Location",
        "Search_Flight_Location",
        "Taxi_Search_Location",
    }
)
"""Location look-ups ComplexEval treats as optional ("free") calls."""

PUBLISHED_DOMAIN_SIZES = {"Hotels": 150, "Flights": 150, "Car-Rental": 150, "Attraction": 150, "Cross": 400}
"""Per-domain sample counts hard-coded as success-rate denominators upstream."""


class CfbCall(BaseModel):
    """One gold function call with its annotated (replayed) response."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any]
    response: Any = None


class CfbSample(BaseModel):
    """One ComplexFuncBench sample."""

    id: str
    domain: str
    index: int
    query: str
    functions: list[dict[str, Any]]
    steps: list[list[CfbCall]]
    """Gold path: one list of parallel calls per step."""
    answer: str
    repaired: dict[str, dict[str, Any]] = {}
    """Function name -> its parameter schema repaired into valid JSON Schema (only repaired ones)."""

    @property
    def template(self) -> str:
        """Template id: the upstream data expands each template to 10 consecutive ids."""
        return f"{self.domain}/{self.index // 10}"

    def offered_functions(self) -> list[dict[str, Any]]:
        """The functions as offered to a model: ``functions`` with repaired parameter schemas."""
        if not self.repaired:
            return self.functions
        return [
            {**f, "parameters": self.repaired[f["name"]]} if f["name"] in self.repaired else f
            for f in self.functions
        ]


@dataclass
class LoadReport:
    """Samples read from a file and the per-line problems that made lines unusable."""

    samples: list[CfbSample] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    """One ``file:line: functions[i] (name): what was repaired`` per repaired schema (line kept)."""


class _LineProblem(Exception):
    """Internal: one problem in one line; turned into a ``file:line: message`` string."""


def _split_id(raw: Any) -> tuple[str, int]:
    if not isinstance(raw, str) or "-" not in raw:
        raise _LineProblem(f"field 'id' must look like '<Domain>-<n>', got {raw!r}")
    domain, _, number = raw.rpartition("-")  # right split keeps 'Car-Rental' whole
    if not domain or not number.isdigit():
        raise _LineProblem(f"field 'id' must look like '<Domain>-<n>', got {raw!r}")
    return domain, int(number)


def _as_json(value: Any, what: str, kind: type) -> Any:
    # Some exports store arguments / observation lists as JSON strings; accept both forms.
    if isinstance(value, str) and kind is not str:
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _LineProblem(f"{what} is a string that is not valid JSON ({exc.msg})") from None
    if not isinstance(value, kind):
        raise _LineProblem(f"{what} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _parse_calls(turn: dict[str, Any], k: int) -> list[dict[str, Any]]:
    calls = _as_json(turn.get("function_call"), f"conversations step {k}: function_call", list)
    if not calls:
        raise _LineProblem(f"conversations step {k}: function_call list is empty")
    out = []
    for j, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _LineProblem(f"conversations step {k} call {j}: needs a string 'name'")
        args = _as_json(call.get("arguments", {}), f"conversations step {k} call {j}: arguments", dict)
        out.append({"name": call["name"], "arguments": args})
    return out


def _parse_steps(turns: list[Any]) -> list[list[CfbCall]]:
    steps: list[list[CfbCall]] = []
    body = turns[1:-1]
    for pos in range(0, len(body), 2):
        k = pos // 2
        call_turn = body[pos]
        if not isinstance(call_turn, dict) or call_turn.get("role") != "assistant":
            raise _LineProblem(f"conversations step {k}: expected an assistant function_call turn")
        calls = _parse_calls(call_turn, k)
        if pos + 1 >= len(body):
            raise _LineProblem(f"conversations step {k}: {len(calls)} call(s) but no observation turn")
        obs = body[pos + 1]
        if not isinstance(obs, dict) or obs.get("role") != "observation":
            raise _LineProblem(f"conversations step {k}: expected an observation turn after the calls")
        responses = _as_json(obs.get("content"), f"conversations step {k}: observation content", list)
        if len(responses) != len(calls):
            raise _LineProblem(
                f"conversations step {k}: {len(calls)} call(s) but {len(responses)} response(s)"
            )
        steps.append([CfbCall(response=r, **c) for c, r in zip(calls, responses, strict=True)])
    return steps


def _parse_functions(raw: Any) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], list[str]]:
    functions = _as_json(raw, "field 'functions'", list)
    seen: set[str] = set()
    repaired: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for i, fn in enumerate(functions):
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise _LineProblem(f"functions[{i}]: needs a string 'name'")
        if fn["name"] in seen:
            raise _LineProblem(f"functions[{i}]: duplicate function name {fn['name']!r}")
        seen.add(fn["name"])
        fixed, changes = _check_parameters(fn, i)
        if fixed is not None:
            repaired[fn["name"]] = fixed
            notes.extend(f"functions[{i}] ({fn['name']}): {change}" for change in changes)
    return functions, repaired, notes


TYPE_ALIASES = {
    "float": "number",
    "double": "number",
    "decimal": "number",
    "int": "integer",
    "long": "integer",
    "str": "string",
    "text": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "map": "object",
}
"""Type names that are not JSON Schema types, read as the JSON Schema type they mean."""
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})


def _check_parameters(fn: dict[str, Any], i: int) -> tuple[dict[str, Any] | None, list[str]]:
    """Check one function's parameter schema; returns (repaired schema or ``None``, repair notes).

    A schema the validator cannot use would crash the run mid-case. When only its type names are
    wrong, they are repaired (upstream checks no other type than string/number/boolean/array and
    so accepts such schemas); anything else is reported with its line and the line is skipped.
    """
    parameters = fn.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, dict):
        raise _LineProblem(f"functions[{i}] ({fn['name']}): 'parameters' must be an object")
    problem = _schema_problem(canonical_json(parameters))
    if not problem:
        return None, []
    fixed, changes = _repair_types(canonical_json(parameters))
    left = _schema_problem(canonical_json(fixed)) if changes else problem
    if left:
        raise _LineProblem(f"functions[{i}] ({fn['name']}): {left}")  # what no repair could fix
    return copy.deepcopy(fixed), list(changes)


@lru_cache(maxsize=1024)
def _schema_problem(parameters_json: str) -> str | None:
    # Checking a schema takes milliseconds and the data set repeats its 43 functions ~15,000 times.
    try:
        Draft202012Validator.check_schema(json.loads(parameters_json))
    except SchemaError as exc:
        where = "/".join(map(str, exc.path)) or "parameters"
        return f"invalid JSON Schema at {where}: {exc.message}"
    return None


@lru_cache(maxsize=1024)
def _repair_types(parameters_json: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    # Cached like the check: the data set repeats its functions thousands of times.
    schema = json.loads(parameters_json)
    changes: list[str] = []
    _fix_node(schema, "parameters", changes)
    return schema, tuple(changes)


def _fix_node(node: Any, where: str, changes: list[str]) -> None:
    if isinstance(node, list):
        for k, item in enumerate(node):
            _fix_node(item, f"{where}/{k}", changes)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if isinstance(kind, str) and kind not in JSON_TYPES:
        fixed = _fixed_type(kind)
        if fixed is None:
            del node["type"]  # an unknown type name: any value is accepted, as upstream does
            changes.append(f"{where}/type {kind!r} is not a JSON Schema type: dropped (any value accepted)")
        else:
            node["type"] = fixed
            changes.append(f"{where}/type {kind!r} read as {fixed!r}")
    for key, value in node.items():
        if key in ("enum", "const", "default", "examples", "required"):
            continue  # values, not schemas
        _fix_node(value, f"{where}/{key}", changes)


def _fixed_type(kind: str) -> str | None:
    lowered = kind.strip().lower()
    return lowered if lowered in JSON_TYPES else TYPE_ALIASES.get(lowered)


def parse_sample(obj: Any) -> CfbSample:
    """Turn one decoded JSONL object into a sample.

    Raises:
        _LineProblem: with a message naming the field; callers add file and line.
    """
    if not isinstance(obj, dict):
        raise _LineProblem(f"line must hold a JSON object, got {type(obj).__name__}")
    domain, index = _split_id(obj.get("id"))
    turns = _as_json(obj.get("conversations"), "field 'conversations'", list)
    if len(turns) < 2:
        raise _LineProblem("field 'conversations' needs at least the user query and the gold answer")
    first, last = turns[0], turns[-1]
    if (
        not isinstance(first, dict)
        or first.get("role") != "user"
        or not isinstance(first.get("content"), str)
    ):
        raise _LineProblem("conversations[0] must be the user turn with string content")
    if (
        not isinstance(last, dict)
        or last.get("role") != "assistant"
        or not isinstance(last.get("content"), str)
    ):
        raise _LineProblem("the last conversation turn must be the assistant's gold answer (string content)")
    steps = _parse_steps(turns)
    functions, repaired, _notes = _parse_functions(obj.get("functions"))
    return CfbSample(
        id=obj["id"],
        domain=domain,
        index=index,
        query=first["content"],
        functions=functions,
        steps=steps,
        answer=last["content"],
        repaired=repaired,
    )


def schema_repairs(obj: dict[str, Any]) -> list[str]:
    """What :func:`parse_sample` repaired in a line's function schemas (one note per change)."""
    return _parse_functions(obj.get("functions"))[2]


def read_jsonl(path: Path, *, strict: bool = False) -> LoadReport:
    """Read a ComplexFuncBench JSONL file.

    Args:
        path: The file.
        strict: Raise on the first bad line instead of collecting problems.

    Returns:
        The usable samples, one ``file:line: problem`` string per skipped line, and one
        ``file:line: repair`` string per repaired schema.

    Raises:
        SuiteError: the file is unreadable, ``strict`` and a line is bad, or ids repeat.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read ComplexFuncBench data ({exc.strerror or exc})") from None
    report = LoadReport()
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _LineProblem(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
            sample = parse_sample(obj)
            if sample.id in seen:
                raise _LineProblem(f"id {sample.id!r} already used on line {seen[sample.id]}")
        except _LineProblem as problem:
            message = f"{path.name}:{lineno}: {problem}"
            if strict:
                raise SuiteError(message) from None
            report.problems.append(message)
            continue
        seen[sample.id] = lineno
        report.samples.append(sample)
        if sample.repaired:
            report.repairs.extend(f"{path.name}:{lineno}: {note}" for note in schema_repairs(obj))
    return report
