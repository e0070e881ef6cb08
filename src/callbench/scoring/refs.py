"""Resolve ``$ref`` expectations against the results of earlier calls in the same trace."""

from __future__ import annotations

from typing import Any

from callbench.scoring.arguments import RefResolver
from callbench.tools.registry import ToolRegistry
from callbench.types.case import REF_PATTERN, Case
from callbench.types.dsl import follow_path
from callbench.types.trace import TraceCall


def ref_resolver(
    case: Case,
    calls: list[TraceCall],
    before: int,
    completion: bool,
    registry: ToolRegistry,
    binding: dict[str, list[int]] | None = None,
) -> RefResolver:
    """A resolver giving the values a ``$ref`` may take for a call at position ``before``.

    With a ``binding`` (step id -> the calls paired with that step), a reference resolves only
    against the result of a call paired with the step it names: ``search lacZ → search recA →
    open the recA entry`` does not satisfy ``open $ref(search.id)`` for a lacZ search. Without one
    (the first pairing pass), any successfully executed earlier call of the step's tools (and, in
    the completion tier, their equivalents) is a candidate. Only calls made before ``before`` count.
    """
    steps = {s.id: s for s in case.expected}

    def candidates(step_id: str) -> list[TraceCall]:
        if binding is not None:
            return [calls[c] for c in binding.get(step_id, ())]
        names = set(steps[step_id].tools)
        if completion:
            for name in list(names):
                names |= registry.equivalents(name)
        return [call for call in calls if call.tool in names]

    def resolve(ref: str) -> list[Any]:
        match = REF_PATTERN.match(ref)
        if not match or match.group("step") not in steps:
            return []
        values = []
        for call in candidates(match.group("step")):
            if call.index < before and call.execution == "ok":
                found, value = follow_path(call.result, match.group("path") or "")
                if found:
                    values.append(value)
        return values

    return resolve
