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
from typing import Any

from callbench.scoring.answer import answer_problem
from callbench.scoring.arguments import MISSING, MatchContext, Mismatch, match_arguments, match_value
from callbench.scoring.base import Scorer
from callbench.scoring.matching import Instance, best_assignment, expand, sequence_assignment
from callbench.scoring.partial import partial_score
from callbench.scoring.refs import ref_resolver
from callbench.scoring.serving import apply_serving_reasons
from callbench.tools.registry import ToolRegistry
from callbench.types.case import DSL_KEYS, Case
from callbench.types.contract import FollowUp
from callbench.types.dsl import follow_path
from callbench.types.trace import AGENT_FAILURES, Trace, TraceCall
from callbench.types.verdict import TIERS as TIERS
from callbench.types.verdict import Reason, Tier, Verdict, one_line


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


class TierScorer(Scorer):
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
    # Serving faults and run limits explain a failure; they never turn a pass into one (then: warnings).
    reasons, serving_warnings = apply_serving_reasons(_reasons(tier, case, trace, ev), trace, bool(ev.calls))
    passed = not reasons
    partial = partial_score(tier, ev.instances, ev.calls, ev.assignment, ev.mismatches, passed)
    warnings = list(ev.notes) + serving_warnings
    if tier == "native-function-contract":
        warnings.append("contract tier evaluates native call structure only; tool execution was not assessed")
    return Verdict(
        scorer=tier,
        passed=passed,
        partial=partial,
        reasons=reasons,
        rationale=one_line(reasons),
        warnings=warnings,
        details=_details(ev),
    )


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

    # A $ref names an earlier step, so it must resolve against the call paired with that step, and
    # the pairing depends on which arguments match. References only point backwards, so pairing
    # again with the references bound to the previous pass's pairs settles in a few passes; the
    # first pass binds them to any earlier call of the step's tools.
    binding: dict[str, list[int]] | None = None
    assignment: dict[int, int] = {}
    exact: dict[int, int] | None = None
    # Without a $ref the binding changes nothing: one pass is the answer.
    passes = len(instances) + 1 if case.has_refs else 1
    for _ in range(passes):
        matcher = _Matcher(case, calls, registry, completion, lenient, binding)
        exact = None if completion else sequence_assignment(instances, calls, compatible, matcher.args_ok)
        assignment = (
            exact
            if exact is not None
            else best_assignment(instances, calls, compatible, matcher.args_ok, _succeeded)
        )
        paired = _binding(instances, assignment)
        if paired == binding:
            break
        binding = paired
    final = _binding(instances, assignment)
    if passes > 1 and matcher.binding != final:  # the verdict checks references against the final pairs
        matcher = _Matcher(case, calls, registry, completion, lenient, final)
    found = {i: matcher.mismatches(instances[i], calls[c]) for i, c in assignment.items()}
    extras = sorted(set(range(len(calls))) - set(assignment.values()))
    if completion:
        untolerated = [
            c for c in extras if not _tolerated(calls[c], instances, assignment, calls, registry, tools_of)
        ]
        exact_sequence = len(assignment) == len(instances) and not untolerated
    else:
        untolerated, exact_sequence = extras, exact is not None
    return Evaluation(
        instances, calls, assignment, exact_sequence, found, sorted(set(matcher.notes)), extras, untolerated
    )


def _succeeded(inst: Instance, call: TraceCall) -> bool:
    """Pairing prefers a call that did its job: a failed call followed by a successful identical
    retry pairs the retry (the failed attempt is then an extra instance of the capability)."""
    return inst.step.execution_as_expected(call.execution)


def _binding(instances: list[Instance], assignment: dict[int, int]) -> dict[str, list[int]]:
    """Step id -> the calls paired with that step's instances (what its ``$ref`` values come from)."""
    out: dict[str, list[int]] = {}
    for i, c in sorted(assignment.items()):
        out.setdefault(instances[i].step.id, []).append(c)
    return out


class _Matcher:
    """Argument matching of (expected instance, observed call) pairs for one pairing pass."""

    def __init__(
        self,
        case: Case,
        calls: list[TraceCall],
        registry: ToolRegistry,
        completion: bool,
        lenient: bool,
        binding: dict[str, list[int]] | None,
    ) -> None:
        self.case, self.calls, self.registry = case, calls, registry
        self.completion, self.lenient, self.binding = completion, lenient, binding
        self.cache: dict[tuple[int, int], list[Mismatch]] = {}
        self.notes: list[str] = []

    def args_ok(self, inst: Instance, call: TraceCall) -> bool:
        return not self.mismatches(inst, call)

    def mismatches(self, inst: Instance, call: TraceCall) -> list[Mismatch]:
        key = (inst.index, call.index)
        if key not in self.cache:
            resolver = ref_resolver(
                self.case, self.calls, call.index, self.completion, self.registry, self.binding
            )
            ctx = MatchContext(resolver, self.lenient)
            if self.completion:
                expected = completion_expectation(
                    inst.step.arguments, inst.step.tools, call.tool, self.registry
                )
                alternatives = _alternative_keys(self.registry, call.tool)
            else:
                expected, alternatives = inst.step.arguments, None
            self.cache[key] = match_arguments(expected, call.arguments, ctx, alternatives)
            self.notes.extend(f"call {call.index + 1} {n}" for n in ctx.notes)
        return self.cache[key]


def completion_expectation(
    expected: dict[str, Any], step_tools: list[str], called: str, registry: ToolRegistry
) -> dict[str, Any]:
    """The expected arguments as the task-completion tier reads them for a call of ``called``.

    * A declared equivalent tool may name its arguments differently: the keys are mapped through the
      equivalence (``translate_dna.dna`` is ``translate_sequence.sequence``).
    * A literal equal to the schema default of its parameter may be omitted, as ``$default`` may
      ("omitted schema defaults remain valid").
    """
    out = dict(expected)
    if called not in step_tools:
        source = next((t for t in step_tools if called in registry.equivalents(t)), None)
        if source is not None:
            out = rename_keys(out, registry.key_map(source, called))
    contract = registry.find(called)
    props = contract.parameters.get("properties", {}) if contract else {}
    for key, value in out.items():
        schema = props.get(key)
        if (
            isinstance(schema, dict)
            and "default" in schema
            and not _is_marker(value)
            and not match_value(value, schema["default"], MatchContext())
        ):
            out[key] = {"$default": value}
    return out


def rename_keys(expected: dict[str, Any], key_map: dict[str, str]) -> dict[str, Any]:
    """Top-level expected keys (and those of top-level ``$one_of`` objects) renamed by ``key_map``."""
    if not key_map:
        return expected
    out = {key_map.get(k, k): v for k, v in expected.items() if k != "$one_of"}
    if "$one_of" in expected:
        out["$one_of"] = [
            rename_keys(o, key_map) if isinstance(o, dict) and not _is_marker(o) else o
            for o in expected["$one_of"]
        ]
    return out


def _is_marker(value: Any) -> bool:
    return isinstance(value, dict) and any(k in value for k in DSL_KEYS)


def _alternative_keys(registry: ToolRegistry, tool: str) -> dict[str, list[list[str]]]:
    contract = registry.find(tool)
    return contract.alternative_keys if contract else {}


def _tolerated(
    call: TraceCall,
    instances: list[Instance],
    assignment: dict[int, int],
    calls: list[TraceCall],
    registry: ToolRegistry,
    tools_of: Any,
) -> bool:
    """An extra call is tolerated when read-only, another instance of a required capability, or a
    documented follow-up whose condition holds. A case that expects no call tolerates none."""
    contract = registry.find(call.tool)
    if contract is None or not call.known_tool or not instances:
        return False
    if contract.read_only:
        return True
    if any(call.tool in tools_of(inst) for inst in instances):
        return True
    followed = [calls[c] for c in sorted(assignment.values())]
    return any(_follows(call, rule, prior, registry) for rule in contract.follow_ups() for prior in followed)


def _follows(call: TraceCall, rule: FollowUp, prior: TraceCall, registry: ToolRegistry) -> bool:
    """``call`` is the documented follow-up ``rule`` of the matched expected call ``prior``."""
    if prior.index >= call.index or (
        prior.tool != rule.tool and prior.tool not in registry.equivalents(rule.tool)
    ):
        return False
    prior_args, args = prior.arguments or {}, call.arguments or {}
    for key, value in rule.requires.items():
        if match_value(value, prior_args.get(key, MISSING), MatchContext()):
            return False
    for key, source in rule.same_values.items():
        part, _, path = source.partition(".")
        found, value = follow_path(prior_args if part == "arguments" else prior.result, path)
        if not found or key not in args or match_value(value, args[key], MatchContext()):
            return False
    return True


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
    if trace.stop_reason in AGENT_FAILURES:  # an agent under test crashed, hung or never answered
        message = trace.agent.message if trace.agent and trace.agent.message else trace.stop_reason
        out.append(Reason(code=trace.stop_reason, message=message))
    return out


def _coverage_reasons(tier: Tier, ev: Evaluation) -> list[Reason]:
    out = []
    for inst in ev.instances:
        if inst.index not in ev.assignment and ev.calls:
            out.append(
                Reason(
                    code="tool_missing",
                    step=inst.step.id,
                    message=f"expected call {inst.index + 1} {_tool_label(inst)} was not made",
                )
            )
    unexpected_code = "unexpected_state_change" if tier == "task-completion-execution" else "unexpected_call"
    for c in ev.untolerated:
        call = ev.calls[c]
        out.append(
            Reason(
                code=unexpected_code, call_index=c, message=f"unexpected observed call {c + 1} '{call.tool}'"
            )
        )
    complete = len(ev.assignment) == len(ev.instances) and not ev.untolerated
    if tier != "task-completion-execution" and complete and not ev.exact_sequence:
        out.append(
            Reason(
                code="wrong_order", message="every expected tool was called, but not in the expected order"
            )
        )
    return out


def _argument_reasons(ev: Evaluation) -> list[Reason]:
    out = []
    for i, problems in sorted(ev.mismatches.items()):
        inst, c = ev.instances[i], ev.assignment[i]
        for m in problems:
            out.append(
                Reason(
                    code=m.code,
                    step=inst.step.id,
                    call_index=c,
                    message=f"expected call {i + 1} '{ev.calls[c].tool}' (observed call {c + 1}): "
                    + m.describe(),
                )
            )
    return out


def _schema_reasons(calls: list[TraceCall]) -> list[Reason]:
    out = []
    for call in calls:
        if call.schema_valid:
            continue
        code = (
            "unknown_tool"
            if not call.known_tool
            else ("malformed_arguments" if call.arguments is None else "schema_invalid")
        )
        detail = "; ".join(call.schema_errors) or "invalid"
        out.append(
            Reason(
                code=code,
                call_index=call.index,
                message=f"schema invalid for observed call {call.index + 1} '{call.tool}': {detail}",
            )
        )
    return out


def _execution_reasons(ev: Evaluation) -> list[Reason]:
    out = []
    for i, c in sorted(ev.assignment.items()):
        inst, call = ev.instances[i], ev.calls[c]
        if inst.step.call_only or inst.step.execution_as_expected(call.execution):
            continue
        if inst.step.expect_error and call.executed_ok:
            code, message = "unexpected_success", "succeeded where the gold path's call fails"
        else:
            code = "execution_failed" if call.execution == "error" else "not_executed"
            message = f"did not execute successfully: {call.error or call.execution}"
        out.append(
            Reason(
                code=code,
                step=inst.step.id,
                call_index=c,
                message=f"expected call {i + 1} '{call.tool}' {message}",
            )
        )
    return out


def _tool_label(inst: Instance) -> str:
    tools = inst.step.tools
    return f"'{tools[0]}'" if len(tools) == 1 else "one of " + "/".join(tools)


def _details(ev: Evaluation) -> dict[str, Any]:
    return {
        "expected_tools": [inst.step.tools for inst in ev.instances],
        "actual_tools": [c.tool for c in ev.calls],
        "matches": [
            {
                "expected_index": i,
                "step": ev.instances[i].step.id,
                "call_index": c,
                "arguments_match": not ev.mismatches.get(i),
            }
            for i, c in sorted(ev.assignment.items())
        ],
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
