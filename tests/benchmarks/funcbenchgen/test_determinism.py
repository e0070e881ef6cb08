"""Same parameters, same task: byte-identical in this process and in a fresh one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from callbench.benchmarks.funcbenchgen.generator import generate, make_params
from callbench.benchmarks.funcbenchgen.tasks import DagParams
from callbench.errors import ConfigError

PARAMS = DagParams(n_core=10, depth=4, n_conn=5, n_dis=5, seed=300, noise_inputs=2)

SCRIPT = (
    "from callbench.benchmarks.funcbenchgen.generator import generate;"
    "from callbench.benchmarks.funcbenchgen.tasks import DagParams;"
    "print(generate(DagParams(n_core=10, depth=4, n_conn=5, n_dis=5, seed=300, noise_inputs=2))"
    ".model_dump_json())"
)


def test_same_seed_gives_identical_task_twice() -> None:
    assert generate(PARAMS).model_dump_json() == generate(PARAMS).model_dump_json()


def test_fresh_process_with_other_hash_seed_gives_identical_task() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""}
        | {k: v for k, v in __import__("os").environ.items() if k in ("PYTHONPATH", "HOME")},
    )
    assert out.stdout.strip() == generate(PARAMS).model_dump_json()


def test_seed_and_trial_change_the_task() -> None:
    base = generate(PARAMS)
    other_seed = generate(DagParams(**(PARAMS.model_dump() | {"seed": 400})))
    other_trial = generate(DagParams(**(PARAMS.model_dump() | {"trial": 1})))
    assert other_seed.nodes != base.nodes
    # A new trial redraws values only; the graph and names stay.
    assert other_trial.nodes == base.nodes and other_trial.values != base.values


def test_stable_rng_pairs_distractor_settings_on_one_core_task() -> None:
    flags = ("stable_rng",)
    tasks = [
        generate(DagParams(n_core=8, depth=3, n_conn=c, n_dis=d, seed=7, flags=flags))
        for c, d in [(0, 0), (5, 0), (0, 5), (20, 20)]
    ]
    cores = [[n for n in t.nodes if n.kind == "core"] for t in tasks]
    assert all(c == cores[0] for c in cores)
    assert all(t.target_value == tasks[0].target_value for t in tasks)
    assert all(t.metadata["flags"] == ["stable_rng"] for t in tasks)
    assert not tasks[0].metadata["faithful"]


def test_faithful_is_the_default_and_flags_are_recorded() -> None:
    task = generate(PARAMS)
    assert task.metadata["faithful"] is True and task.metadata["flags"] == []
    flagged = generate(DagParams(**(PARAMS.model_dump() | {"flags": ("target_visible", "distinct_values")})))
    assert flagged.metadata["flags"] == ["distinct_values", "target_visible"]
    assert len(set(flagged.values.values())) == len(flagged.values)
    target = flagged.node(flagged.target_node)
    assert target is not None and f"variable {flagged.target_variable} (" in target.description


def test_official_tool_order_is_the_fixed_shuffle_and_seeded_shuffle_differs() -> None:
    import random

    task = generate(PARAMS)
    order = [n.name for n in task.nodes]
    random.Random(42).shuffle(order)
    assert task.tool_order == order
    seeded = generate(DagParams(**(PARAMS.model_dump() | {"flags": ("seeded_shuffle",)})))
    assert seeded.tool_order != task.tool_order and sorted(seeded.tool_order) == sorted(order)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"n_core": 5, "depth": 5}, "depth=5 needs at least"),
        ({"n_core": 5, "depth": 0}, "depth"),
        ({"n_core": 1, "depth": 1}, "n_core"),
        ({"n_core": 3000, "depth": 1, "n_conn": 3000}, "exceeds the limit"),
        ({"n_core": 900, "depth": 1, "flags": ("distinct_values",)}, "at most 1000 types"),
    ],
)
def test_impossible_parameters_are_clear_errors(values: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_params(**values)
