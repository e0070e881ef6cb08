"""Structural checks of a generated task, read back from its types alone (as an agent would).

Used by the generator on every task, and by tests over many seeds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from callbench.benchmarks.funcbenchgen.tasks import DagNode, DagTask


@dataclass(frozen=True)
class TypeGraph:
    """The dependency graph implied by exact type matches."""

    producers: dict[str, list[str]]
    """Function -> functions feeding it (by input order, external inputs skipped)."""
    external: list[str]
    """Types consumed but produced by no function, in first-seen order."""
    external_set: frozenset[str] = frozenset()
    """The same types as a set: membership tests must stay O(1) (tasks reach 5,000 functions)."""

    @classmethod
    def of(cls, nodes: list[DagNode]) -> TypeGraph:
        made = {n.output_type: n.name for n in nodes}
        producers = {n.name: [made[t] for t in n.input_types if t in made] for n in nodes}
        external = list(dict.fromkeys(t for n in nodes for t in n.input_types if t not in made))
        return cls(producers, external, frozenset(external))

    def is_external(self, kind: str | None) -> bool:
        """Whether ``kind`` is an external input type (None, an unknown variable's type, is not)."""
        return kind in self.external_set

    def ancestors(self, node: str) -> set[str]:
        """Every function with a path into ``node``."""
        seen: set[str] = set()
        stack = list(self.producers[node])
        while stack:
            cur = stack.pop()
            if cur not in seen:
                seen.add(cur)
                stack.extend(self.producers[cur])
        return seen

    def topological(self) -> list[str] | None:
        """Functions in a topological order, or None when there is a cycle."""
        indeg = {n: len(set(p)) for n, p in self.producers.items()}
        consumers: dict[str, list[str]] = {n: [] for n in self.producers}
        for node, prods in self.producers.items():
            for prod in set(prods):
                consumers[prod].append(node)
        ready = [n for n, d in indeg.items() if d == 0]
        order: list[str] = []
        while ready:
            node = ready.pop()
            order.append(node)
            for nxt in consumers[node]:
                indeg[nxt] -= 1
                if indeg[nxt] == 0:
                    ready.append(nxt)
        return order if len(order) == len(indeg) else None

    def longest_into(self, target: str, order: list[str]) -> int:
        """Edges on the longest path ending at ``target``."""
        longest: dict[str, int] = {}
        for node in order:
            longest[node] = max((longest[p] + 1 for p in self.producers[node]), default=0)
        return longest[target]


def validate_task(task: DagTask) -> list[str]:
    """Every violated invariant of ``task`` as a message (empty when valid)."""
    params = task.params
    problems: list[str] = []
    names = [n.name for n in task.nodes]
    outputs = [n.output_type for n in task.nodes]
    if len(set(names)) != len(names) or sorted(task.tool_order) != sorted(names):
        problems.append("function names are not unique or tool_order is not a permutation of them")
    if len(set(outputs)) != len(outputs):
        problems.append("two functions produce the same type")
    counts = Counter(n.kind for n in task.nodes)
    if (counts["core"], counts["conn"], counts["dis"]) != (params.n_core, params.n_conn, params.n_dis):
        problems.append(f"node counts {dict(counts)} do not match the parameters")
    graph = TypeGraph.of(task.nodes)
    order = graph.topological()
    if order is None:
        return [*problems, "the type graph has a cycle"]
    core = {n.name for n in task.nodes if n.kind == "core"}
    if graph.ancestors(task.target_node) | {task.target_node} != core:
        problems.append("the target's ancestors are not exactly the core functions")
    longest = graph.longest_into(task.target_node, order)
    if longest != params.depth:
        problems.append(f"longest path into the target is {longest}, expected depth {params.depth}")
    problems.extend(_distractor_problems(task, graph))
    problems.extend(_value_problems(task, graph))
    return problems


def _distractor_problems(task: DagTask, graph: TypeGraph) -> list[str]:
    kinds = {n.name: n.kind for n in task.nodes}
    problems = []
    for node in task.nodes:
        if node.kind == "core":
            continue
        if len(node.inputs) != 1:
            problems.append(f"{node.kind} function {node.name} has {len(node.inputs)} inputs, expected 1")
        feeders = {kinds[p] for p in graph.producers[node.name]}
        if node.kind == "dis" and feeders - {"dis"}:
            problems.append(f"disconnected function {node.name} is fed by {sorted(feeders)}")
        if node.kind == "conn" and (not feeders or feeders - {"core", "conn"}):
            problems.append(f"connected function {node.name} is not fed by a core or connected function")
    return problems


def _value_problems(task: DagTask, graph: TypeGraph) -> list[str]:
    problems = []
    types = {t for n in task.nodes for t in [*n.input_types, n.output_type]}
    if set(task.values) != types or any(not 0 <= v <= 999 for v in task.values.values()):
        problems.append("values must cover every type with an integer in 0..999")
    if task.params.has("distinct_values") and len(set(task.values.values())) != len(task.values):
        problems.append("distinct_values is on but two types share a value")
    if sorted(task.initial_known_types) != sorted(graph.external):
        problems.append("initial known types are not exactly the external input types")
    var_types = task.variable_types()
    core_external = {
        name
        for n in task.nodes
        if n.kind == "core"
        for name, kind in zip(n.inputs, n.input_types, strict=True)
        if graph.is_external(kind)
    }
    shown = set(task.prompt_variables)
    if not core_external <= shown:
        problems.append("the prompt does not reveal every core external input")
    for name, value in task.prompt_variables.items():
        if not graph.is_external(var_types.get(name)) or task.values[var_types[name]] != value:
            problems.append(f"prompt variable {name} is not an external input with its true value")
    if list(task.prompt_variables) != sorted(task.prompt_variables):
        problems.append("prompt variables are not sorted by name")
    return problems
