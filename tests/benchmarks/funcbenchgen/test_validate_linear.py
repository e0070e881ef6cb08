"""Item 25: task validation does work linear in the task size (counted, not timed)."""

from __future__ import annotations

from callbench.benchmarks.funcbenchgen.generator import generate
from callbench.benchmarks.funcbenchgen.tasks import DagParams, DagTask
from callbench.benchmarks.funcbenchgen.validate import TypeGraph, validate_task


class CountingType(str):
    """A type string that counts equality tests (hash-based lookups test equality once per hit)."""

    compares = 0

    def __eq__(self, other: object) -> bool:
        CountingType.compares += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _counted(task: DagTask) -> DagTask:
    """The same task with every type occurrence a fresh ``CountingType`` (as if read from JSON)."""
    for node in task.nodes:
        node.input_types = [CountingType(t) for t in node.input_types]
        node.output_type = CountingType(node.output_type)
    return task


def _compares(n_core: int) -> int:
    task = _counted(
        generate(DagParams(n_core=n_core, depth=10, n_conn=n_core // 10, n_dis=n_core // 10, seed=0))
    )
    CountingType.compares = 0
    assert validate_task(task) == []
    return CountingType.compares


def test_validation_compares_types_a_linear_number_of_times() -> None:
    small, large = _compares(200), _compares(1600)
    # Eight times the functions: a linear check does about eight times the comparisons; the
    # quadratic one (a list membership test per input) did about sixty times as many.
    assert large <= 12 * small, (small, large)
    assert large <= 20 * 1600 * 2, large


def test_external_types_keep_their_first_seen_order() -> None:
    task = generate(DagParams(n_core=20, depth=4, n_dis=4, seed=100))
    graph = TypeGraph.of(task.nodes)
    seen = [t for n in task.nodes for t in n.input_types if t not in {m.output_type for m in task.nodes}]
    assert list(graph.external) == list(dict.fromkeys(seen))
    assert all(t in graph.external for t in seen)
