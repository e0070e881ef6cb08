"""Structure of generated graphs over many seeds, against the official construction's measurements."""

from __future__ import annotations

import statistics
from collections import Counter

import pytest

from callbench.benchmarks.funcbenchgen.generator import generate
from callbench.benchmarks.funcbenchgen.tasks import DagParams
from callbench.benchmarks.funcbenchgen.validate import TypeGraph, validate_task

GRID = [(5, 1), (5, 4), (10, 2), (10, 5), (10, 9), (20, 5), (20, 19), (40, 10), (40, 39)]


@pytest.mark.parametrize(("n_core", "depth"), GRID)
def test_invariants_hold_for_many_seeds(n_core: int, depth: int) -> None:
    for seed in range(0, 3000, 100):
        task = generate(DagParams(n_core=n_core, depth=depth, n_conn=7, n_dis=6, seed=seed))
        assert validate_task(task) == []
        graph = TypeGraph.of(task.nodes)
        core = [n for n in task.nodes if n.kind == "core"]
        # Every core node is an ancestor of the target: minimum calls = n_core.
        assert graph.ancestors(task.target_node) | {task.target_node} == {n.name for n in core}
        assert graph.longest_into(task.target_node, graph.topological()) == depth
        # One fresh external input for the first chain node and for each side node.
        external = [t for n in core for t in n.input_types if t in graph.external]
        assert len(external) == n_core - depth
        assert all(len(n.inputs) == 1 for n in task.nodes if n.kind != "core")


def _edges(task) -> int:
    return sum(len(p) for p in TypeGraph.of(task.nodes).producers.values())


@pytest.mark.parametrize(
    ("n_core", "depth", "edges", "max_indegree"),
    # Means over 50 seeds measured on the official generator (reference notes, section 2.6).
    [(5, 4, 6.1, 2.4), (10, 2, 13.0, 5.4), (10, 5, 15.8, 4.0), (20, 10, 37.8, 5.0), (40, 20, 81.9, 6.0)],
)
def test_edge_and_indegree_means_match_official_measurements(n_core, depth, edges, max_indegree) -> None:
    tasks = [generate(DagParams(n_core=n_core, depth=depth, seed=s)) for s in range(200)]
    core_edges = statistics.mean(_edges(t) for t in tasks)
    indeg = statistics.mean(max(len(n.inputs) for n in t.nodes) for t in tasks)
    assert core_edges == pytest.approx(edges, rel=0.06)
    assert indeg == pytest.approx(max_indegree, rel=0.1)


def test_star_and_path_shapes() -> None:
    star = generate(DagParams(n_core=10, depth=1, seed=3))
    target = star.node(star.target_node)
    assert target is not None and len(target.inputs) == 9 and _edges(star) == 9
    path = generate(DagParams(n_core=10, depth=9, seed=3))
    graph = TypeGraph.of(path.nodes)
    layers = Counter(graph.longest_into(n, graph.topological()) for n in graph.producers)
    assert max(layers.values()) == 1  # one node per layer


def test_cins_hang_below_core_and_dins_stay_apart() -> None:
    direct = 0
    total = 0
    for seed in range(40):
        task = generate(DagParams(n_core=10, depth=3, n_conn=10, n_dis=10, seed=seed))
        graph = TypeGraph.of(task.nodes)
        kinds = {n.name: n.kind for n in task.nodes}
        for node in task.nodes:
            feeders = [kinds[p] for p in graph.producers[node.name]]
            if node.kind == "conn":
                total += 1
                direct += feeders == ["core"]
            if node.kind == "dis":
                assert feeders in ([], ["dis"])
            if node.kind == "core":
                assert set(feeders) <= {"core"}
    # The k-th CIN draws its producer from n_core + k - 1 candidates, n_core of them core.
    expected = sum(10 / (10 + k) for k in range(10)) / 10
    assert direct / total == pytest.approx(expected, abs=0.06)


def test_types_and_names() -> None:
    task = generate(DagParams(n_core=10, depth=4, n_conn=5, n_dis=5, seed=100))
    supers = {t.split(" with ")[0] for t in task.values}
    assert len(supers) <= 5 and all(t.startswith("type_") for t in supers)
    names = [v for n in task.nodes for v in [*n.inputs, n.output]]
    assert len(set(names)) == len(names)  # a fresh name per occurrence
    assert all(3 <= len(v) <= 6 and v.isalpha() and v.islower() for v in names)
    assert all(n.name.startswith("func_") and len(n.name) == 8 for n in task.nodes)
    plain = generate(DagParams(n_core=5, depth=2, supertypes=0, seed=1))
    assert all(" with " not in t for t in plain.values)


def test_descriptions_and_prompt_follow_the_official_wording() -> None:
    task = generate(DagParams(n_core=5, depth=2, seed=100))
    for node in task.nodes:
        types = ", ".join(f"({t})" for t in node.input_types)
        assert node.description == f"Processes inputs of types {types} to produce ({node.output_type})"
        assert task.target_variable not in node.description
    lines = task.prompt.splitlines()
    assert lines[0] == (
        "Using the tools at your disposal, use function(s) to compute and give me the correct value of "
        f"variable {task.target_variable}."
    )
    assert lines[-1] == "You have all the information you need to get the correct result."
    assert lines[1:-1] == [f"Variable {k} = {v}" for k, v in sorted(task.prompt_variables.items())]
    named = generate(DagParams(n_core=5, depth=2, seed=100, style="named"))
    single = next(n for n in named.nodes if len(n.inputs) == 1)
    assert single.description == (
        f"Processes variable {single.inputs[0]} ({single.input_types[0]}) to produce variable "
        f"{single.output} ({single.output_type})"
    )


def test_noise_inputs_reveal_din_roots_only() -> None:
    task = generate(DagParams(n_core=5, depth=2, n_dis=6, noise_inputs=3, seed=0))
    plain = generate(DagParams(n_core=5, depth=2, n_dis=6, seed=0))
    extra = set(task.prompt_variables) - set(plain.prompt_variables)
    din_inputs = {v for n in task.nodes if n.kind == "dis" for v in n.inputs}
    assert len(extra) == 3 and extra <= din_inputs


def test_large_graph_is_valid() -> None:
    task = generate(DagParams(n_core=400, depth=30, n_conn=300, n_dis=300, seed=1))
    assert validate_task(task) == []
    assert len(task.tool_order) == 1000
