"""Resolve ``$ref`` expectations against the results of earlier calls in the same trace."""

from __future__ import annotations

import re
from typing import Any

from callbench.harness.trace import TraceCall
from callbench.scoring.arguments import RefResolver
from callbench.suites.case import REF_PATTERN, Case
from callbench.tools.registry import ToolRegistry

_TOKEN = re.compile(r"[^.\[\]]+|\[\d+\]")


def ref_resolver(case: Case, calls: list[TraceCall], before: int, completion: bool,
                 registry: ToolRegistry) -> RefResolver:
    """A resolver giving the values a ``$ref`` may take: the path in the result of any successfully
    executed call, made before call ``before``, of one of the referenced step's tools."""
    steps = {s.id: s for s in case.expected}

    def resolve(ref: str) -> list[Any]:
        match = REF_PATTERN.match(ref)
        if not match or match.group("step") not in steps:
            return []
        names = set(steps[match.group("step")].tools)
        if completion:
            for name in list(names):
                names |= registry.equivalents(name)
        values = []
        for call in calls[:before]:
            if call.tool in names and call.execution == "ok":
                found, value = follow_path(call.result, match.group("path") or "")
                if found:
                    values.append(value)
        return values

    return resolve


def follow_path(value: Any, path: str) -> tuple[bool, Any]:
    """Follow ``a.b[0].c`` into nested dicts/lists; ``(False, None)`` when a part is absent."""
    for token in _TOKEN.findall(path):
        if token.startswith("["):
            index = int(token[1:-1])
            if not isinstance(value, list) or index >= len(value):
                return False, None
            value = value[index]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value
