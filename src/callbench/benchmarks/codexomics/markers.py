"""CodeXomics parameter markers -> callbench argument DSL.

The original writes expected arguments as literals plus four markers (see the reference notes,
section 2.2): angle placeholders ``'<name>'``, cross-step references ``'{tool.path}'``,
``{benchmarkDefaultValue: v}`` and ``{benchmarkAnyOf: [...], ...siblings}``. This module rewrites
one expected-argument tree into the callbench DSL and records what it did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from callbench.benchmarks.codexomics.examples import PLACEHOLDER_EXAMPLES
from callbench.benchmarks.codexomics.rules import (
    PLACEHOLDER_RE,
    REFERENCE_RE,
    SPECIAL_PLACEHOLDERS,
    ImportProblem,
)

ANY: dict[str, Any] = {"$any": True}


@dataclass
class MarkerContext:
    """What the converter needs to know about the step being converted.

    Attributes:
        where: ``suite:case step N`` for problem messages.
        earlier_tools: Tool names (alternatives flattened) of the earlier steps, in order.
        resolve_refs: Map resolvable references to ``$ref`` instead of the faithful ``$any``.
        ref_resolver: Given (step index, tool, path) return a ``$ref`` target, or ``None`` when
            the earlier result cannot carry that path.
        problems: Collected findings (appended to).
    """

    where: str
    earlier_tools: list[list[str]] = field(default_factory=list)
    resolve_refs: bool = False
    ref_resolver: Callable[[int, str, str], str | None] | None = None
    problems: list[ImportProblem] = field(default_factory=list)

    def note(self, severity: str, message: str) -> None:
        self.problems.append(ImportProblem(self.where, severity, message))  # type: ignore[arg-type]


def convert_value(value: Any, ctx: MarkerContext) -> Any:
    """Convert one expected value (any JSON) into the DSL."""
    if isinstance(value, str):
        return _convert_string(value, ctx)
    if isinstance(value, list):
        return [convert_value(item, ctx) for item in value]
    if isinstance(value, dict):
        return convert_object(value, ctx)
    return value


def convert_object(obj: dict[str, Any], ctx: MarkerContext) -> Any:
    """Convert an expected object; markers may sit at this level or any nested one."""
    if set(obj) == {"benchmarkDefaultValue"}:
        return {"$default": convert_value(obj["benchmarkDefaultValue"], ctx)}
    siblings = {key: convert_value(val, ctx) for key, val in obj.items() if key != "benchmarkAnyOf"}
    if "benchmarkAnyOf" not in obj:
        return siblings
    alternatives = obj["benchmarkAnyOf"]
    if not isinstance(alternatives, list) or not alternatives:
        ctx.note("warning", "benchmarkAnyOf is not a non-empty list; ignored")
        return siblings
    # Upstream: every sibling key must match AND one alternative must match. A $one_of next to
    # the sibling keys says exactly that (and keeps documented alternative keys usable for them).
    options = [convert_value(alt, ctx) for alt in alternatives]
    if not siblings:
        return {"$one_of": options}
    return {**siblings, "$one_of": options}


def _convert_string(text: str, ctx: MarkerContext) -> Any:
    placeholder = PLACEHOLDER_RE.match(text)
    if placeholder:
        name = placeholder.group(1)
        pattern = SPECIAL_PLACEHOLDERS.get(name)
        marker: dict[str, Any] = {"$pattern": pattern} if pattern else dict(ANY)
        if name in PLACEHOLDER_EXAMPLES:
            marker["example"] = PLACEHOLDER_EXAMPLES[name]
        return marker
    reference = REFERENCE_RE.match(text)
    if reference:
        return _convert_reference(reference.group(1), reference.group(2), text, ctx)
    return text


def _convert_reference(tool: str, path: str, raw: str, ctx: MarkerContext) -> Any:
    if not ctx.resolve_refs:
        return dict(ANY)
    step = _latest_step_with(tool, ctx.earlier_tools)
    if step is None:
        ctx.note("warning", f"reference {raw!r} names no earlier step; kept as $any")
        return dict(ANY)
    target = ctx.ref_resolver(step, tool, path) if ctx.ref_resolver else None
    if target is None:
        ctx.note("warning", f"reference {raw!r} cannot be resolved against {tool}'s result; kept as $any")
        return dict(ANY)
    return {"$ref": target}


def _latest_step_with(tool: str, earlier: list[list[str]]) -> int | None:
    for index in range(len(earlier) - 1, -1, -1):
        if tool in earlier[index]:
            return index
    return None


def count_markers(value: Any) -> dict[str, int]:
    """Count DSL markers in a converted tree (used by reports and tests)."""
    counts: dict[str, int] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in node:
                if key.startswith("$"):
                    counts[key] = counts.get(key, 0) + 1
            for val in node.values():
                walk(val)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(value)
    return counts
