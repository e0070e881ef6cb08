"""The three strict scoring tiers of the CodeXomics methods.

* ``native-function-contract``: exact tool sequence (``order_free`` groups aside), exact arguments,
  every call schema-valid, no unexpected calls; execution not needed.
* ``real-tool-execution``: the contract tier plus every expected call executed successfully.
* ``task-completion-execution``: every expected capability covered by a matching or declared
  equivalent tool in any order; arguments match or use documented alternative keys; defaults may be
  omitted; every call schema-valid; every expected call executed successfully unless call-only;
  extra calls tolerated only when read-only, another instance of a required capability, or a
  documented follow-up — any other state-changing extra call fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from callbench.harness.trace import Trace, TraceCall
from callbench.scoring.answer import answer_problem
from callbench.scoring.arguments import MatchContext, Mismatch, match_arguments
from callbench.scoring.base import Reason, Verdict, one_line
from callbench.scoring.matching import Instance, best_assignment, expand, sequence_assignment
from callbench.scoring.partial import partial_score
from callbench.scoring.refs import ref_resolver
from callbench.suites.case import Case
from callbench.tools.registry import ToolRegistry

Tier = Literal["native-function-contract", "real-tool-execution", "task-completion-execution"]
TIERS: tuple[Tier, ...] = ("native-function-contract", "real-tool-execution", "task-completion-execution")


@dataclass
class Evaluation:
    """Intermediate facts shared by the pass rule, the partial score and the details."""

    instances: list[Instance]
    calls: list[TraceCall]
    assignment: dict[int, int]
    exact_sequence: bool
    mismatches: dict[int, list[Mismatch]]
    notes: list[str]
    extras: list[int]
    untolerated: list[int]


class TierScorer:
    """Scores one of the three strict tiers. Built by the catalog as ``TierScorer(suite, tier)``."""

    def __init__(self, suite: Any, tier: Tier) -> None:
        self.suite = suite
        self.tier = tier
        self.name = tier

    def score(self, case: Case, trace: Trace) -> Verdict:
        registry = self.suite.registry_for(case) if self.suite is not None else ToolRegistry()
        return score_tier(self.tier, case, trace, registry)


def score_tier(tier: Tier, case: Case, trace: Trace, registry: ToolRegistry) -> Verdict:
    """Score ``trace`` for ``case`` under ``tier``; pure and deterministic."""
    completion = tier == "task-completion-execution"
    ev = _evaluate(case, trace, registry, completion)
    reasons = _reasons(tier, case, trace, ev)
    passed = not reasons
    partial = partial_score(tier, ev.instances, ev.calls, ev.assignment, ev.mismatches, passed)
    warnings = list(ev.notes)
    if tier == "native-function-contract":
        warnings.append("contract tier evaluates native call structure only; tool execution was not assessed")
    return Verdict(scorer=tier, passed=passed, partial=partial, reasons=reasons, rationale=one_line(reasons),
                   warnings=warnings, details=_details(ev))


def _evaluate(case: Case, trace: Trace, registry: ToolRegistry, completion: bool) -> Evaluation:
    instances, calls = expand(case), trace.calls
    accepted: dict[int, set[str]] = {}

    def tools_of(inst: Instance) -> set[str]:
        # Computed once per instance: pairing asks this for every (instance, call) pair.
        if inst.index not in accepted:
            names = set(inst.step.tools)
            if completion:
                for name in list(names):
                    names |= registry.equivalents(name)
            accepted[inst.index] = names
        return accepted[inst.index]

    def compatible(inst: Instance, call: TraceCall) -> bool:
        return call.tool in tools_of(inst)

    # Without execution evidence anywhere, a $ref cannot be checked; the contract tier then accepts
    # any concrete value (and says so) instead of failing the call for want of a result.
    lenient = not any(c.execution == "ok" for c in calls)
    cache: dict[tuple[int, int], list[Mismatch]] = {}
    notes: list[str] = []

    def mismatches(inst: Instance, call: TraceCall) -> list[Mismatch]:
        key = (inst.index, call.index)
        if key not in cache:
            ctx = MatchContext(ref_resolver(case, calls, call.index, completion, registry), lenient)
            alt = _alternative_keys(registry, call.tool) if completion else None
            cache[key] = match_arguments(inst.step.arguments, call.arguments, ctx, alt)
            notes.extend(f"call {call.index + 1} {n}" for n in ctx.notes)
        return cache[key]

    def args_ok(inst: Instance, call: TraceCall) -> bool:
        return not mismatches(inst, call)

    exact = None if completion else sequence_assignment(instances, calls, compatible, args_ok)
    assignment = exact if exact is not None else best_assignment(instances, calls, compatible, args_ok)
    found = {i: mismatches(instances[i], calls[c]) for i, c in assignment.items()}
    extras = sorted(set(range(len(calls))) - set(assignment.values()))
    untolerated = [c for c in extras if not _tolerated(calls[c], instances, assignment, calls, registry,
                                                        tools_of)] if completion else extras
    exact_sequence = (len(assignment) == len(instances) and not untolerated) if completion else exact is not None
    return Evaluation(instances, calls, assignment, exact_sequence, found, sorted(set(notes)), extras, untolerated)


def _alternative_keys(registry: ToolRegistry, tool: str) -> dict[str, list[list[str]]]:
    contract = registry.find(tool)
    return contract.alternative_keys if contract else {}


def _tolerated(call: TraceCall, instances: list[Instance], assignment: dict[int, int], calls: list[TraceCall],
               registry: ToolRegistry, tools_of: Any) -> bool:
    contract = registry.find(call.tool)
    if contract is None or not call.known_tool:
        return False
    if contract.read_only:
        return True
    if any(call.tool in tools_of(inst) for inst in instances):
        return True
    matched_tools = {calls[c].tool for c in assignment.values()}
    return bool(set(contract.follow_up_of) & matched_tools)


def _reasons(tier: Tier, case: Case, trace: Trace, ev: Evaluation) -> list[Reason]:
    out: list[Reason] = []
    if not ev.calls and ev.instances:
        out.append(Reason(code="no_structured_call", message="no structured tool call was made"))
    out += _coverage_reasons(tier, ev)
    out += _argument_reasons(ev)
    out += _schema_reasons(ev.calls)
    if tier != "native-function-contract":
        out += _execution_reasons(ev)
    problem = answer_problem(case, trace.final_text)
    if problem:
        out.append(Reason(code="answer_mismatch", message=problem))
    return out


def _coverage_reasons(tier: Tier, ev: Evaluation) -> list[Reason]:
    out = []
    for inst in ev.instances:
        if inst.index not in ev.assignment and ev.calls:
            out.append(Reason(code="tool_missing", step=inst.step.id,
                              message=f"expected call {inst.index + 1} {_tool_label(inst)} was not made"))
    unexpected_code = "unexpected_state_change" if tier == "task-completion-execution" else "unexpected_call"
    for c in ev.untolerated:
        call = ev.calls[c]
        out.append(Reason(code=unexpected_code, call_index=c,
                          message=f"unexpected observed call {c + 1} '{call.tool}'"))
    complete = len(ev.assignment) == len(ev.instances) and not ev.untolerated
    if tier != "task-completion-execution" and complete and not ev.exact_sequence:
        out.append(Reason(code="wrong_order", message="every expected tool was called, but not in the expected order"))
    return out


def _argument_reasons(ev: Evaluation) -> list[Reason]:
    out = []
    for i, problems in sorted(ev.mismatches.items()):
        inst, c = ev.instances[i], ev.assignment[i]
        for m in problems:
            out.append(Reason(code=m.code, step=inst.step.id, call_index=c,
                              message=f"expected call {i + 1} '{ev.calls[c].tool}' (observed call {c + 1}): "
                                      + m.describe()))
    return out


def _schema_reasons(calls: list[TraceCall]) -> list[Reason]:
    out = []
    for call in calls:
        if call.schema_valid:
            continue
        code = "unknown_tool" if not call.known_tool else (
            "malformed_arguments" if call.arguments is None else "schema_invalid")
        detail = "; ".join(call.schema_errors) or "invalid"
        out.append(Reason(code=code, call_index=call.index,
                          message=f"schema invalid for observed call {call.index + 1} '{call.tool}': {detail}"))
    return out


def _execution_reasons(ev: Evaluation) -> list[Reason]:
    out = []
    for i, c in sorted(ev.assignment.items()):
        inst, call = ev.instances[i], ev.calls[c]
        if inst.step.call_only or call.executed_ok:
            continue
        code = "execution_failed" if call.execution == "error" else "not_executed"
        why = call.error or call.execution
        out.append(Reason(code=code, step=inst.step.id, call_index=c,
                          message=f"expected call {i + 1} '{call.tool}' did not execute successfully: {why}"))
    return out


def _tool_label(inst: Instance) -> str:
    tools = inst.step.tools
    return f"'{tools[0]}'" if len(tools) == 1 else "one of " + "/".join(tools)


def _details(ev: Evaluation) -> dict[str, Any]:
    return {
        "expected_tools": [inst.step.tools for inst in ev.instances],
        "actual_tools": [c.tool for c in ev.calls],
        "matches": [{"expected_index": i, "step": ev.instances[i].step.id, "call_index": c,
                     "arguments_match": not ev.mismatches.get(i)} for i, c in sorted(ev.assignment.items())],
        "unexpected_calls": ev.untolerated,
        "tolerated_extra_calls": [c for c in ev.extras if c not in ev.untolerated],
        "matched_count": len(ev.assignment),
        "exact_sequence": ev.exact_sequence,
        "schema_valid_count": sum(c.schema_valid for c in ev.calls),
        "notes": ev.notes,
    }


def contract_tier(suite: Any) -> TierScorer:
    """Catalog factory of the ``native-function-contract`` scorer."""
    return TierScorer(suite, "native-function-contract")


def execution_tier(suite: Any) -> TierScorer:
    """Catalog factory of the ``real-tool-execution`` scorer."""
    return TierScorer(suite, "real-tool-execution")


def completion_tier(suite: Any) -> TierScorer:
    """Catalog factory of the ``task-completion-execution`` scorer."""
    return TierScorer(suite, "task-completion-execution")
