"""CodeXomics case objects (JSON dumps of its suites) -> callbench case mappings.

Each function returns plain JSON data in the callbench case format (``docs/case-format.md``) and
appends :class:`ImportProblem` findings; malformed cases are reported and skipped, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from callbench.benchmarks.codexomics.markers import MarkerContext, convert_value
from callbench.benchmarks.codexomics.rules import KEY_ALIASES, ImportProblem, camel_key, normalize_key
from callbench.plugin import sha256_of


@dataclass
class CaseOptions:
    """Choices of the case conversion.

    Attributes:
        resolve_refs: Turn ``{tool.path}`` references into ``$ref`` where the earlier tool's
            result schema carries the path (default ``False``: ``$any``, as the original scores).
    """

    resolve_refs: bool = False


@dataclass
class CaseContext:
    """Registry facts the case conversion needs, and what it learns about missing keys."""

    properties: dict[str, list[str]]
    """Tool name -> declared parameter keys."""
    result_fields: dict[str, set[str]]
    """Tool name -> top-level result fields (from the contract's result schema)."""
    missing_keys: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    """Tool name -> suite key absent from its schema -> expected values seen (filled in)."""
    missing_users: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Tool name -> missing key -> case keys that use it (filled in)."""


def convert_case(
    raw: Any, suite_id: str, ctx: CaseContext, options: CaseOptions, problems: list[ImportProblem]
) -> dict[str, Any] | None:
    """Convert one upstream case; ``None`` (with an error problem) when it cannot be imported."""
    where = f"{suite_id}:{raw.get('id') if isinstance(raw, dict) else '?'}"
    shape = _expected_shape(raw, where, problems)
    if shape is None:
        return None
    tools, params, times = shape
    unknown = sorted({t for step in tools for t in step if t not in ctx.properties})
    if unknown:
        problems.append(ImportProblem(where, "error", f"unknown tool(s) {', '.join(unknown)}; case skipped"))
        return None
    step_ids = _step_ids(tools)
    steps = [
        _convert_step(index, tools, params[index], step_ids, ctx, options, where, problems)
        for index in range(len(tools))
    ]
    if times > 1:
        steps[0]["times"] = times
    if raw.get("assertCallOnly") is True:
        for step in steps:
            step["call_only"] = True
    case: dict[str, Any] = {
        "id": f"{suite_id}:{raw['id']}",
        "category": str(raw.get("category") or "general"),
        "instruction": raw["instruction"],
        "expected": steps,
    }
    groups = order_free_groups(
        tools, step_ids, raw["expectedResult"].get("orderInsensitiveTools"), where, problems
    )
    if groups:
        case["order_free"] = groups
    timeout = raw.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        case["timeout_s"] = timeout / 1000
    case["metadata"] = _metadata(raw, suite_id)
    return case


def _expected_shape(
    raw: Any, where: str, problems: list[ImportProblem]
) -> tuple[list[list[str]], list[Any], int] | None:
    def fail(message: str) -> None:
        problems.append(ImportProblem(where, "error", message + "; case skipped"))

    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        fail("case is not an object with a string 'id'")
        return None
    if not isinstance(raw.get("instruction"), str) or not raw["instruction"].strip():
        fail("missing 'instruction'")
        return None
    expected = raw.get("expectedResult")
    if not isinstance(expected, dict):
        fail("missing 'expectedResult'")
        return None
    sequence = expected.get("tool_sequence")
    if isinstance(sequence, list) and sequence:
        tools = [[s] if isinstance(s, str) else s for s in sequence]
        params = expected.get("parameters")
        params = params if isinstance(params, list) else []
        if len(params) > len(tools):
            fail(f"{len(params)} parameter objects for {len(tools)} steps")
            return None
        if len(params) < len(tools):
            problems.append(
                ImportProblem(where, "warning", "fewer parameter objects than steps; padded with {}")
            )
            params = params + [{}] * (len(tools) - len(params))
        times = 1
    elif isinstance(expected.get("tool_name"), str):
        tools = [[expected["tool_name"]]]
        params = [expected.get("parameters") or {}]
        times = _repeat_count(expected)
    else:
        fail("expectedResult has neither 'tool_sequence' nor 'tool_name'")
        return None
    if not all(isinstance(t, list) and t and all(isinstance(n, str) for n in t) for t in tools):
        fail("a tool_sequence step is neither a name nor a list of names")
        return None
    if not all(isinstance(p, dict) for p in params):
        fail("an expected parameter entry is not an object")
        return None
    return tools, params, times


def _repeat_count(expected: dict[str, Any]) -> int:
    for key in ("expectedCallCount", "expectedTabsIncrease"):
        value = expected.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return 1


def _step_ids(tools: list[list[str]]) -> list[str]:
    # Same rule as callbench.types.case.assign_step_ids, written out so $ref targets are known.
    singles = [t[0] if len(t) == 1 else None for t in tools]
    return [
        name if name is not None and singles.count(name) == 1 else f"step{index}"
        for index, name in enumerate(singles, start=1)
    ]


def _convert_step(
    index: int,
    tools: list[list[str]],
    params: dict[str, Any],
    step_ids: list[str],
    ctx: CaseContext,
    options: CaseOptions,
    where: str,
    problems: list[ImportProblem],
) -> dict[str, Any]:
    step_where = f"{where} step {index + 1}"

    def resolver(step: int, tool: str, path: str) -> str | None:
        head = path.split(".")[0].split("[")[0]
        return f"{step_ids[step]}.{path}" if head in ctx.result_fields.get(tool, set()) else None

    marker_ctx = MarkerContext(step_where, tools[:index], options.resolve_refs, resolver, problems)
    arguments = convert_value(params, marker_ctx)
    arguments = _reconcile_keys(arguments, tools[index], ctx, step_where, problems)
    tool: str | list[str] = tools[index][0] if len(tools[index]) == 1 else list(tools[index])
    return {"id": step_ids[index], "tool": tool, "arguments": arguments}


def _reconcile_keys(
    arguments: Any, tools: list[str], ctx: CaseContext, where: str, problems: list[ImportProblem]
) -> Any:
    """Rename suite keys to the spelling the contract declares; record keys it lacks."""
    if not isinstance(arguments, dict):
        return arguments
    declared = [p for t in tools for p in ctx.properties.get(t, [])]
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if key == "$one_of":
            out[key] = [_reconcile_keys(a, tools, ctx, where, problems) for a in value]
            continue
        target = _declared_spelling(key, declared)
        if target is None:
            _record_missing(key, value, tools, ctx, where)
            problems.append(
                ImportProblem(
                    where, "info", f"key {key!r} is not declared by {'/'.join(tools)}; added to the contract"
                )
            )
            target = key
        elif target != key:
            problems.append(ImportProblem(where, "info", f"key {key!r} renamed to the contract's {target!r}"))
        out[target] = value
    return out


def _declared_spelling(key: str, declared: list[str]) -> str | None:
    if key in declared:
        return key
    by_norm = {normalize_key(p): p for p in declared}
    if normalize_key(key) in by_norm:
        return by_norm[normalize_key(key)]
    # The original matcher accepts directional aliases (filename <-> filePath, sequence -> dna...).
    for alias in KEY_ALIASES.get(camel_key(key), ()):
        if normalize_key(alias) in by_norm:
            return by_norm[normalize_key(alias)]
    return None


def _record_missing(key: str, value: Any, tools: list[str], ctx: CaseContext, where: str) -> None:
    for tool in tools:
        ctx.missing_keys.setdefault(tool, {}).setdefault(key, []).append(value)
        users = ctx.missing_users.setdefault(tool, {}).setdefault(key, [])
        case_key = where.rsplit(" step ", 1)[0]
        if case_key not in users:
            users.append(case_key)


def order_free_groups(
    tools: list[list[str]], step_ids: list[str], insensitive: Any, where: str, problems: list[ImportProblem]
) -> list[list[str]]:
    """Contiguous runs of steps whose tool is order-insensitive (as the strict tiers permute them)."""
    if not isinstance(insensitive, list) or not insensitive:
        return []
    names = {n for n in insensitive if isinstance(n, str)}
    groups: list[list[str]] = []
    run: list[str] = []
    for step_tools, step_id in zip([*tools, []], [*step_ids, ""], strict=False):
        if step_tools and any(t in names for t in step_tools):
            run.append(step_id)
            continue
        if len(run) >= 2:
            groups.append(run)
        elif run:
            problems.append(
                ImportProblem(
                    where,
                    "info",
                    f"order-insensitive step {run[0]!r} has no contiguous partner; "
                    "no strict-tier effect (as upstream)",
                )
            )
        run = []
    return groups


def _metadata(raw: dict[str, Any], suite_id: str) -> dict[str, Any]:
    keep = ("name", "type", "complexity", "maxScore", "number", "earlyReturn", "assertCallOnly")
    meta = {
        "source": "codexomics",
        "suite_id": suite_id,
        "upstream_id": raw["id"],
        "prompt_sha256": sha256_of(raw["instruction"]),
    }
    meta.update({k: raw[k] for k in keep if k in raw})
    files = raw["expectedResult"].get("expectedFiles")
    if files:
        meta["expectedFiles"] = files
    return meta
