"""Executor semantics: failure classes in order, silent wrong values, poisoning, restatement."""

from __future__ import annotations

import json

import pytest

from callbench.benchmarks.funcbenchgen.generator import generate
from callbench.benchmarks.funcbenchgen.runtime import REMINDER_HEAD, DagRuntime, RuntimeConfig
from callbench.benchmarks.funcbenchgen.tasks import DagNode, DagParams, DagTask


def chain_task() -> tuple[DagTask, list[DagNode]]:
    """A 3-node path a -> b -> t (plus one DIN), with nodes in chain order."""
    for seed in range(100):
        task = generate(DagParams(n_core=3, depth=2, n_dis=1, seed=seed))
        core = [n for n in task.nodes if n.kind == "core"]
        if all(len(n.inputs) == 1 for n in core):
            return task, core
    raise AssertionError("no pure chain found")


def true_args(task: DagTask, node: DagNode) -> dict[str, int]:
    return {p: task.values[t] for p, t in zip(node.inputs, node.input_types, strict=True)}


def test_correct_path_returns_true_values_as_quoted_text() -> None:
    task, (a, b, t) = chain_task()
    rt = DagRuntime(task)
    for node in (a, b, t):
        res = rt.call(node.name, true_args(task, node))
        assert res.ok and res.kind == "core" and res.value == task.values[node.output_type]
        assert res.content == json.dumps(f"Variable {node.output} = {res.value}.")
    assert (
        rt.call(t.name, true_args(task, t)).text == f"Variable {task.target_variable} = {task.target_value}."
    )


@pytest.mark.parametrize(
    ("name", "args", "failure"),
    [
        ("func_nope", {"x": 1}, "unknown_function"),
        ("func_nope", "not json", "unknown_function"),  # the name is checked first
        (None, None, "invalid_arguments"),
        (None, {}, "wrong_arg_count"),
        (None, "extra", "wrong_arg_count"),
    ],
)
def test_structural_failures_and_their_order(name, args, failure) -> None:
    task, (a, b, _) = chain_task()
    rt = DagRuntime(task)
    if args == "extra":
        args = true_args(task, a) | {"bogus": 1}
    res = rt.call(name or b.name, args)  # b's input is not yet known, but structure is checked first
    assert res.failure == failure and res.value is None
    assert res.content == json.dumps("Error occurred.")
    assert rt.known == set(task.initial_known_types)


def test_premature_call_is_not_yet_known_and_returns_a_wrong_value() -> None:
    task, (_a, b, t) = chain_task()
    rt = DagRuntime(task)
    res = rt.call(b.name, true_args(task, b))  # right value, but a was never called
    assert res.failure == "not_yet_known" and res.cause == "premature"
    assert res.value is not None and res.value != task.values[b.output_type]
    assert b.output_type not in rt.known
    # Using b's (wrong) output poisons t: classed "not yet known", cause "poisoned".
    poisoned = rt.call(t.name, {t.inputs[0]: res.value})
    assert poisoned.failure == "not_yet_known" and poisoned.cause == "poisoned"


def test_incorrect_value_poisons_everything_downstream() -> None:
    task, (a, b, t) = chain_task()
    rt = DagRuntime(task)
    wrong = (task.values[a.input_types[0]] + 1) % 1000
    first = rt.call(a.name, {a.inputs[0]: wrong})
    assert first.failure == "incorrect_value" and first.argument == a.inputs[0]
    second = rt.call(b.name, {b.inputs[0]: first.value})
    third = rt.call(t.name, {t.inputs[0]: second.value})
    assert [second.failure, third.failure] == ["not_yet_known", "not_yet_known"]
    assert [second.cause, third.cause] == ["poisoned", "poisoned"]
    assert task.values[task.node(task.target_node).output_type] != third.value


def test_value_checks_follow_the_argument_order_the_model_gave() -> None:
    task = generate(DagParams(n_core=5, depth=1, seed=0))
    target = task.node(task.target_node)
    feeders = [n for n in task.nodes if n.kind == "core" and n.name != target.name]
    rt = DagRuntime(task)
    rt.call(feeders[0].name, true_args(task, feeders[0]))
    known_param = next(p for p, ty in zip(target.inputs, target.input_types, strict=True) if ty in rt.known)
    unknown = [p for p in target.inputs if p != known_param]
    bad_known = {known_param: (task.values[target.input_types[target.inputs.index(known_param)]] + 1) % 1000}
    args = bad_known | dict.fromkeys(unknown, 1)
    assert rt.call(target.name, args).failure == "incorrect_value"
    args = dict.fromkeys(unknown, 1) | bad_known
    assert rt.call(target.name, args).failure == "not_yet_known"


def test_din_root_guess_is_incorrect_value_as_in_the_official_code() -> None:
    task, _ = chain_task()
    din = next(n for n in task.nodes if n.kind == "dis")
    res = DagRuntime(task).call(din.name, {din.inputs[0]: (task.values[din.input_types[0]] + 1) % 1000})
    assert res.failure == "incorrect_value" and res.kind == "dis"


def test_explicit_mode_returns_errors_and_no_value() -> None:
    task, (_a, b, _) = chain_task()
    rt = DagRuntime(task, RuntimeConfig(mode="explicit"))
    res = rt.call(b.name, true_args(task, b))
    assert res.failure == "not_yet_known" and res.value is None and res.text == "Error occurred."
    detailed = DagRuntime(task, RuntimeConfig(mode="explicit", detailed_errors=True)).call(
        b.name, true_args(task, b)
    )
    assert detailed.text == f"Error: The value of variable {b.inputs[0]} is not yet known."


def test_wrong_values_are_seeded_per_task() -> None:
    task, (_a, b, _) = chain_task()
    runs = [
        [DagRuntime(task, seed=s).call(b.name, true_args(task, b)).value for _ in range(1)] for s in (0, 0)
    ]
    assert runs[0] == runs[1]
    many = {DagRuntime(task, seed=s).call(b.name, true_args(task, b)).value for s in range(20)}
    assert len(many) > 1


def test_restatement_suffix_lists_what_was_shown_before_this_result() -> None:
    task, (a, b, _) = chain_task()
    types = task.variable_types()
    rt = DagRuntime(task, RuntimeConfig(restate=True))
    first = rt.call(a.name, true_args(task, a))
    prompt_lines = "".join(f"\nVariable {v} ({types[v]}) = {x}" for v, x in task.prompt_variables.items())
    assert first.text == f"Variable {a.output} = {first.value}." + REMINDER_HEAD + prompt_lines
    assert REMINDER_HEAD == "\nAs a reminder, here are the variable values that are currently known."
    fake = rt.call(b.name, {b.inputs[0]: 5 if first.value != 5 else 6})
    assert fake.text.endswith(f"\nVariable {a.output} ({types[a.output]}) = {first.value}")
    after = rt.call("func_zzz", {})
    assert after.text == "Error occurred."  # structural errors carry no reminder
    last = rt.call(a.name, true_args(task, a))
    # Fake values are restated too (official behaviour), in first-seen order.
    assert last.text.endswith(f"\nVariable {b.output} ({types[b.output]}) = {fake.value}")
    assert json.loads(last.content) == last.text
