"""Pairing expected call instances with observed calls.

Expected steps expand into *instances* (``times`` copies). Steps are grouped into *blocks*: an
``order_free`` group is one block, every other step its own block. The strict sequence holds when
the calls split into consecutive segments, one per block in order, each a permutation of its block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from callbench.scoring.assignment import max_gain_assignment
from callbench.types.case import Case, ExpectedStep
from callbench.types.trace import TraceCall


@dataclass(frozen=True)
class Instance:
    """One expected call."""

    index: int
    step: ExpectedStep
    block: int


def expand(case: Case) -> list[Instance]:
    """Expected call instances in listed order, with their block numbers."""
    group_of = {step_id: n for n, group in enumerate(case.order_free) for step_id in group}
    block_ids: dict[object, int] = {}
    out: list[Instance] = []
    for step in case.expected:
        token: object = ("group", group_of[step.id]) if step.id in group_of else ("step", step.id)
        block = block_ids.setdefault(token, len(block_ids))
        for _ in range(step.times):
            out.append(Instance(len(out), step, block))
    return out


Compatible = Callable[[Instance, TraceCall], bool]
ArgsOk = Callable[[Instance, TraceCall], bool]


def best_assignment(
    instances: list[Instance],
    calls: list[TraceCall],
    compatible: Compatible,
    args_ok: ArgsOk,
    succeeded: ArgsOk | None = None,
) -> dict[int, int]:
    """Order-free maximum matching (instance index -> call index), preferring argument matches,
    then (with ``succeeded``) calls that executed successfully, and, among equals, listed order."""
    if not instances or not calls:
        return {}

    gain = [[0.0] * len(calls) for _ in instances]
    for i, inst in enumerate(instances):
        for c, call in enumerate(calls):
            if compatible(inst, call):
                # Tool match dominates, argument match next, then success, then a tiny bonus for order.
                gain[i][c] = 100.0 + (10.0 if args_ok(inst, call) else 0.0) - abs(i - c) * 1e-4
                if succeeded is not None and succeeded(inst, call):
                    gain[i][c] += 1.0
    return {r: c for r, c in max_gain_assignment(gain) if gain[r][c] > 0}


def sequence_assignment(
    instances: list[Instance], calls: list[TraceCall], compatible: Compatible, args_ok: ArgsOk
) -> dict[int, int] | None:
    """The block-ordered exact assignment, or ``None`` when the calls do not follow the sequence."""
    if len(instances) != len(calls):
        return None
    out: dict[int, int] = {}
    start = 0
    for block in sorted({inst.block for inst in instances}):
        members = [inst for inst in instances if inst.block == block]
        segment = calls[start : start + len(members)]
        local = best_assignment(members, segment, compatible, args_ok)
        if len(local) != len(members):
            return None
        for i, c in local.items():
            out[members[i].index] = start + c
        start += len(members)
    return out
