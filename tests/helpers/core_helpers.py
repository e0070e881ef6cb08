"""Builders for foundation tests: tiny registries, cases and traces."""

from __future__ import annotations

from typing import Any

from callbench.harness.validate import revalidate
from callbench.scoring.tiers import score_tier
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.trace import Trace, trace_from_calls


def obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or []}


def registry() -> ToolRegistry:
    return ToolRegistry(
        [
            ToolContract(
                name="navigate",
                parameters=obj(
                    {
                        "position": {"type": "integer"},
                        "start": {"type": "integer"},
                        "chromosome": {"type": "string"},
                    }
                ),
                alternative_keys={"position": [["start"]]},
            ),
            ToolContract(name="get_state", read_only=True, parameters=obj({})),
            ToolContract(
                name="create_item",
                parameters=obj(
                    {"name": {"type": "string"}, "size": {"type": "integer", "default": 1}}, ["name"]
                ),
            ),
            ToolContract(
                name="make_item",
                equivalent_to=["create_item"],
                parameters=obj({"name": {"type": "string"}}, ["name"]),
            ),
            ToolContract(name="delete_item", parameters=obj({"id": {"type": "string"}}, ["id"])),
            ToolContract(name="commit", follow_up_of=["create_item"], parameters=obj({})),
            ToolContract(name="reset_all", parameters=obj({})),
        ]
    )


def case(expected: list[dict[str, Any]], **extra: Any) -> Case:
    return Case.model_validate(
        {"id": "c1", "suite": "t", "instruction": "do it", "expected": expected, **extra}
    )


def trace(*calls: dict[str, Any], final_text: str = "", reg: ToolRegistry | None = None) -> Trace:
    specs = [
        {"tool": c[0], "arguments": c[1], **(c[2] if len(c) > 2 else {})} if isinstance(c, tuple) else c
        for c in calls
    ]
    return revalidate(trace_from_calls(specs, final_text=final_text), reg or registry())


def verdicts(case_: Case, trace_: Trace, reg: ToolRegistry | None = None) -> dict[str, Any]:
    reg = reg or registry()
    return {
        tier: score_tier(tier, case_, trace_, reg)
        for tier in ("native-function-contract", "real-tool-execution", "task-completion-execution")
    }


def passes(case_: Case, trace_: Trace) -> tuple[bool, bool, bool]:
    v = verdicts(case_, trace_)
    return (
        v["native-function-contract"].passed,
        v["real-tool-execution"].passed,
        v["task-completion-execution"].passed,
    )
