"""Load-time findings about a suite that are not errors but change how a verdict reads.

Today one kind: an expected literal equal to its parameter's schema default. The seed's
task-completion rule says an omitted schema default stays valid, so that tier treats such a literal
as ``$default`` (it may be omitted); the two stricter tiers still require it. Case authors see the
list in ``run.json`` (``suites[].notes``) and after ``callbench run``, and can write ``$default`` to
say what they mean.
"""

from __future__ import annotations

from typing import Any

from callbench.scoring.arguments import MatchContext, match_value
from callbench.suites.suite import Suite
from callbench.types.case import DSL_KEYS

COMPLETION_TIER = "task-completion-execution"


def suite_notes(suite: Suite, scorers: list[str] | tuple[str, ...]) -> list[str]:
    """Notes for ``run.json``; only when the completion tier scores the suite."""
    if COMPLETION_TIER not in scorers:
        return []
    return default_literal_notes(suite)


def default_literal_notes(suite: Suite) -> list[str]:
    """One note per expected top-level literal that equals its parameter's schema default."""
    notes = []
    for case in suite.cases:
        registry = suite.registry_for(case)
        for step in case.expected:
            for tool in step.tools:
                contract = registry.find(tool)
                props = contract.parameters.get("properties", {}) if contract else {}
                for key, value in step.arguments.items():
                    if _equals_default(value, props.get(key)):
                        notes.append(
                            f"case {case.id!r} step {step.id!r}: {tool}.{key} = {value!r} is the schema "
                            "default; the completion tier accepts omitting it (write $default to say so)"
                        )
    return notes


def _equals_default(value: Any, schema: Any) -> bool:
    if not isinstance(schema, dict) or "default" not in schema:
        return False
    if isinstance(value, dict) and any(k in value for k in DSL_KEYS):
        return False
    return not match_value(value, schema["default"], MatchContext())
