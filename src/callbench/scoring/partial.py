"""Diagnostic partial scores (never deciding the pass flag)."""

from __future__ import annotations

from callbench.scoring.arguments import Mismatch
from callbench.scoring.matching import Instance
from callbench.types.trace import TraceCall

CONTRACT_WEIGHTS = {"coverage": 0.45, "arguments": 0.35, "schema": 0.20}
EXECUTION_WEIGHTS = {"coverage": 0.35, "arguments": 0.25, "schema": 0.15, "observed": 0.10, "success": 0.15}
FAIL_CAP = 0.99


def partial_score(
    tier: str,
    instances: list[Instance],
    calls: list[TraceCall],
    assignment: dict[int, int],
    mismatches: dict[int, list[Mismatch]],
    passed: bool,
) -> float:
    """Weighted coverage/arguments/schema(/execution) ratio; 1.0 exactly when passed, else at most 0.99.

    Unexpected calls only ever lower the schema ratio: they never add to a score.
    """
    if passed:
        return 1.0
    denominator = max(len(instances), 1)
    ratios = {
        "coverage": len(assignment) / denominator,
        "arguments": sum(1 for i in assignment if not mismatches.get(i)) / denominator,
        "schema": (sum(c.schema_valid for c in calls) / len(calls)) if calls else 0.0,
    }
    weights = CONTRACT_WEIGHTS
    if tier != "native-function-contract":
        weights = EXECUTION_WEIGHTS
        matched = [(instances[i], calls[c]) for i, c in assignment.items()]
        ratios["observed"] = (
            sum(1 for inst, c in matched if c.execution_observed or inst.step.call_only) / denominator
        )
        ratios["success"] = (
            sum(
                1
                for inst, c in matched
                if inst.step.call_only or inst.step.execution_as_expected(c.execution)
            )
            / denominator
        )
    score = sum(weight * ratios[name] for name, weight in weights.items())
    return round(min(score, FAIL_CAP), 4)
