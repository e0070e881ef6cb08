"""Metamorphic verdict tests over every built-in case with expected steps.

For every case of ``starter``, ``genomics`` and the CodeXomics import, the gold path is executed for
real and then varied in ways whose verdict the rules fix in advance (docs/scoring.md):

* gold: passes every tier, and state-match agrees;
* + an extra read-only call: passes completion, fails contract; state-match agrees (passes);
* + an extra state-changing call that is no documented follow-up: fails every tier; state-match
  agrees (fails) wherever that call changed the state;
* one literal argument changed to another schema-valid value: fails every tier;
* a failing call inserted before a successful identical retry: passes completion;
* a ``$ref`` argument fed by an extra call of the referenced tool: fails every tier;
* the steps of an ``order_free`` group permuted: passes every tier;
* a declared equivalent substituted, its keys mapped: passes completion;
* a ``$default`` argument omitted: passes every tier; a literal equal to the schema default
  omitted: passes completion.

The tally of how many cases each relation applied to and how many held is printed at the end of the
session (``-s`` or the terminal summary) and every relation must hold on every case it applies to.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metamorphic import (
    COMPLETION,
    CONTRACT,
    EXECUTION,
    STATE,
    Call,
    Judge,
    count,
    extra_tool,
    gold_plan,
    literal_keys,
    other_values,
    references,
    with_args,
)

from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import REF_PATTERN, Case
from callbench.types.dsl import follow_path, placeholder_value

REPO = Path(__file__).resolve().parents[2]
SUITES = ["starter", "genomics", "codexomics"]
_JUDGES: dict[str, Judge] = {}
_GOLD: dict[str, dict[str, Any]] = {}


def _codexomics_data() -> Path | None:
    env = os.environ.get("CALLBENCH_CODEXOMICS_DATA")
    folder = Path(env) if env else REPO.parent / "shared" / "data" / "codexomics"
    return folder if (folder / "automatic_simple.json").is_file() else None


def judge(name: str) -> Judge:
    if name not in _JUDGES:
        import callbench

        if name == "codexomics":
            data = _codexomics_data()
            if data is None:
                if os.environ.get("CI"):
                    pytest.fail(
                        "CodeXomics data missing in CI: expected ../shared/data/codexomics beside the clone"
                    )
                pytest.skip("CodeXomics data not found (../shared/data/codexomics)")
            suite = callbench.load_suite("codexomics", data=data)
        else:
            suite = callbench.load_suite(name)
        _JUDGES[name] = Judge(suite)
    return _JUDGES[name]


def cases(j: Judge) -> list[Case]:
    return [c for c in j.suite.cases if c.expected]


def gold(j: Judge, case: Case) -> dict[str, Any]:
    key = case.key
    if key not in _GOLD:
        _GOLD[key] = j.verdicts(case, gold_plan(case))
    return _GOLD[key]


def passed(verdicts: dict[str, Any]) -> tuple[bool, ...]:
    return tuple(verdicts[t].passed for t in (CONTRACT, EXECUTION, COMPLETION))


def state_agrees(verdicts: dict[str, Any], expected: bool) -> bool | None:
    """None when state-match does not apply (stateless executor)."""
    state = verdicts[STATE]
    return None if not state.applicable else state.passed == expected


def check(failures: list[str], relation: str, case: Case, held: bool, verdicts: dict[str, Any]) -> None:
    count(relation, held)
    if not held:
        reasons = "; ".join(f"{t}: {v.rationale}" for t, v in verdicts.items())
        failures.append(f"{case.key}: {reasons}"[:600])


# -- relations ------------------------------------------------------------------------------------
@pytest.mark.parametrize("suite_name", SUITES)
def test_gold_passes_every_tier_and_state_match_agrees(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        v = gold(j, case)
        agrees = state_agrees(v, True)
        check(failures, "gold passes every tier", case, passed(v) == (True, True, True), v)
        if agrees is not None:
            check(failures, "state-match agrees on gold", case, agrees, v)
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("suite_name", SUITES)
def test_extra_read_only_call_passes_completion_only(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        found = extra_tool(j.suite, case, read_only=True)
        if found is None:
            continue
        tool, args = found
        v = j.verdicts(case, [*gold_plan(case), Call(tool.name, args)])
        check(failures, "+ read-only call: completion only", case, passed(v) == (False, False, True), v)
        agrees = state_agrees(v, True)
        if agrees is not None:
            check(failures, "state-match agrees on + read-only call", case, agrees, v)
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("suite_name", SUITES)
def test_extra_state_change_fails_every_tier(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        found = extra_tool(j.suite, case, read_only=False)
        if found is None:
            continue
        tool, args = found
        plan = [*gold_plan(case), Call(tool.name, args)]
        trace = j.play(case, plan)
        v = j.verdicts(case, plan)
        check(failures, "+ state change: fails every tier", case, passed(v) == (False, False, False), v)
        changed = trace.calls[-1].executed_ok and trace.final_state != j.state.gold_state(case)
        agrees = state_agrees(v, False)
        if agrees is not None and changed:
            check(failures, "state-match agrees on + state change", case, agrees, v)
    assert not failures, "\n".join(failures[:10])


def _changed_literal(j: Judge, case: Case, pick: int = 0) -> tuple[list[Call], str] | None:
    """The gold plan with one literal argument changed (the ``pick``-th candidate, wrapping)."""
    registry = j.suite.registry_for(case)
    plan = gold_plan(case)
    options = [
        (i, key, value)
        for i, call in enumerate(plan)
        for key in literal_keys(call, registry.find(call.tool))
        for value in other_values(call.args[key], registry.get(call.tool).parameters["properties"][key])
    ]
    if not options:
        return None
    i, key, value = options[pick % len(options)]
    plan[i] = with_args(plan[i], **{key: value})
    return plan, f"{plan[i].tool}.{key}={value!r}"


@pytest.mark.parametrize("suite_name", SUITES)
def test_changed_literal_fails_every_tier(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        mutated = _changed_literal(j, case)
        if mutated is None:
            continue
        v = j.verdicts(case, mutated[0])
        check(failures, "changed literal: fails every tier", case, passed(v) == (False, False, False), v)
    assert not failures, "\n".join(failures[:10])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_changed_literal_fails_every_tier(data: st.DataObject) -> None:
    # hypothesis picks the case, the argument and the new value (and shrinks a counterexample).
    j = judge("genomics")
    case = data.draw(st.sampled_from(cases(j)), label="case")
    mutated = _changed_literal(j, case, data.draw(st.integers(0, 50), label="which literal and value"))
    if mutated is None:
        return
    v = j.verdicts(case, mutated[0])
    assert passed(v) == (False, False, False), f"{case.key} {mutated[1]}: " + v[COMPLETION].rationale


@pytest.mark.parametrize("suite_name", SUITES)
def test_failed_call_then_successful_retry_passes_completion(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        plan = gold_plan(case)
        index = next((i for i, c in enumerate(plan) if not _call_only(case, c)), None)
        if index is None:
            continue
        plan.insert(index, replace(plan[index], fail=True, step=None))
        v = j.verdicts(case, plan)
        check(failures, "failed call + retry: completion passes", case, passed(v) == (False, False, True), v)
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("suite_name", SUITES)
def test_reference_fed_by_an_extra_call_fails(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    registry_of = j.suite.registry_for
    for case in cases(j):
        variant = _reference_variant(j, case, registry_of(case))
        if variant is None:
            continue
        trace = j.play(case, variant)
        extra = next(c for c in trace.calls if c.call_id == _extra_call_id(variant))
        referenced = _referenced_call(trace, variant)
        ref = _the_ref(variant)
        path = REF_PATTERN.match(ref).group("path") or ""
        if not (extra.executed_ok and referenced is not None and referenced.executed_ok):
            continue
        if follow_path(extra.result, path) == follow_path(referenced.result, path):
            continue  # the extra call returned the same value: nothing to tell apart
        v = j.verdicts(case, variant)
        check(failures, "$ref fed by an extra call: fails", case, passed(v) == (False, False, False), v)
    assert not failures, "\n".join(failures[:10])


def _reference_variant(j: Judge, case: Case, registry: ToolRegistry) -> list[Call] | None:
    plan = gold_plan(case)
    for i, call in enumerate(plan):
        for key, ref in references(call.args):
            step_id = REF_PATTERN.match(ref).group("step")
            source = next((k for k, c in enumerate(plan[:i]) if c.step == step_id), None)
            if source is None:
                continue
            mutated = _changed_literal_of(plan[source], registry)
            if mutated is None:
                continue
            extra = replace(mutated, step="__extra__")
            path = ref[len(step_id) :]
            out = [*plan[: source + 1], extra, *plan[source + 1 :]]
            out[i + 1] = with_args(plan[i], **{key: {"$ref": "__extra__" + path}})
            return out
    return None


def _changed_literal_of(call: Call, registry: ToolRegistry) -> Call | None:
    tool = registry.find(call.tool)
    for key in literal_keys(call, tool):
        return with_args(call, **{key: other_values(call.args[key], tool.parameters["properties"][key])[0]})
    return None


def _extra_call_id(plan: list[Call]) -> str:
    return f"call_{next(i for i, c in enumerate(plan) if c.step == '__extra__') + 1}"


def _the_ref(plan: list[Call]) -> str:
    for call in plan:
        for _key, ref in references(call.args):
            if ref.startswith("__extra__"):
                return ref
    raise AssertionError("no rewired reference")


def _referenced_call(trace: Any, plan: list[Call]) -> Any:
    extra_index = next(i for i, c in enumerate(plan) if c.step == "__extra__")
    return trace.calls[extra_index - 1] if extra_index >= 1 else None


@pytest.mark.parametrize("suite_name", SUITES)
def test_order_free_permutation_passes_every_tier(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        plan = gold_plan(case)
        for group in case.order_free:
            members = [i for i, c in enumerate(plan) if c.step in group]
            if len({plan[i].step for i in members}) < 2 or _refer_to_each_other(plan, members):
                continue
            order = members[::-1]
            permuted = list(plan)
            for target, source in zip(members, order, strict=False):
                permuted[target] = plan[source]
            v = j.verdicts(case, permuted)
            check(failures, "order_free permuted: passes", case, passed(v) == (True, True, True), v)
            break
    assert not failures, "\n".join(failures[:10])


def _sent_keys(args: dict[str, Any]) -> set[str]:
    """The keys a call realised from ``args`` carries (a top-level ``$one_of`` sends its first option)."""
    keys = set(args) - {"$one_of"}
    first = (args.get("$one_of") or [None])[0]
    return keys | (set(first) if isinstance(first, dict) else set())


def _refer_to_each_other(plan: list[Call], members: list[int]) -> bool:
    steps = {plan[i].step for i in members}
    return any(
        REF_PATTERN.match(ref).group("step") in steps for i in members for _k, ref in references(plan[i].args)
    )


@pytest.mark.parametrize("suite_name", SUITES)
def test_equivalent_with_mapped_keys_passes_completion(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        registry = j.suite.registry_for(case)
        plan = gold_plan(case)
        for i, call in enumerate(plan):
            other = next(iter(sorted(registry.equivalents(call.tool))), None)
            if other is None:
                continue
            from callbench.scoring.tiers import rename_keys

            mapped = rename_keys(call.args, registry.key_map(call.tool, other))
            contract = registry.get(other)
            target = contract.parameters.get("properties", {})
            if not _sent_keys(mapped) <= set(target):
                continue  # the equivalent has no parameter for one of the expected keys
            # What the expected step leaves open but the equivalent requires, a model fills in.
            filled = {
                k: placeholder_value(target.get(k))
                for k in contract.parameters.get("required", [])
                if k not in mapped
            }
            plan[i] = replace(call, tool=other, args={**filled, **mapped})
            v = j.verdicts(case, plan)
            check(failures, "equivalent substituted: completion passes", case, v[COMPLETION].passed, v)
            break
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("suite_name", SUITES)
def test_omitted_default_passes(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        plan = gold_plan(case)
        registry = j.suite.registry_for(case)
        # Only where the schema lets the key be omitted: a $default on a required key cannot be.
        spot = next(
            (
                (i, k)
                for i, c in enumerate(plan)
                for k, v in c.args.items()
                if isinstance(v, dict) and "$default" in v and not _required(registry, c.tool, k)
            ),
            None,
        )
        if spot is None:
            continue
        i, key = spot
        plan[i] = replace(plan[i], args={k: v for k, v in plan[i].args.items() if k != key})
        v = j.verdicts(case, plan)
        check(failures, "$default omitted: passes", case, passed(v) == (True, True, True), v)
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("suite_name", SUITES)
def test_omitted_literal_equal_to_the_schema_default_passes_completion(suite_name: str) -> None:
    j, failures = judge(suite_name), []
    for case in cases(j):
        registry = j.suite.registry_for(case)
        plan = gold_plan(case)
        spot = next(
            (
                (i, k)
                for i, c in enumerate(plan)
                for k, v in c.args.items()
                if _equals_schema_default(v, registry, c.tool, k)
            ),
            None,
        )
        if spot is None:
            continue
        i, key = spot
        plan[i] = replace(plan[i], args={k: v for k, v in plan[i].args.items() if k != key})
        v = j.verdicts(case, plan)
        check(failures, "default literal omitted: completion passes", case, v[COMPLETION].passed, v)
    assert not failures, "\n".join(failures[:10])


def _required(registry: ToolRegistry, tool: str, key: str) -> bool:
    contract = registry.find(tool)
    return contract is not None and key in contract.parameters.get("required", [])


def _equals_schema_default(value: Any, registry: ToolRegistry, tool: str, key: str) -> bool:
    from callbench.scoring.arguments import MatchContext, match_value

    contract = registry.find(tool)
    schema = (contract.parameters.get("properties", {}) if contract else {}).get(key)
    if not isinstance(schema, dict) or "default" not in schema or isinstance(value, dict):
        return False
    return not match_value(value, schema["default"], MatchContext())


def _call_only(case: Case, call: Call) -> bool:
    return any(s.id == call.step and s.call_only for s in case.expected)


def test_every_built_in_suite_was_covered() -> None:
    # Keeps the module honest: a relation that silently applies to nothing is a broken instrument.
    for name in ("starter", "genomics"):
        assert cases(judge(name))
    suite: Suite = judge("genomics").suite
    assert len(cases(judge("genomics"))) == len(suite.cases)
