"""Graph structure of a DAG task, before names, types and values.

Follows the official FuncBenchGen construction (section 2 of the reference notes): a guaranteed
chain of ``depth + 1`` core nodes, side nodes attached to the first legal consumer, ``2 * n_core``
extra-edge attempts, then disconnected nodes (DINs) and connected distractors (CINs).

Nodes are integers in creation order. Variable ``i >= 0`` is the output of node ``i``; variable
``-(k + 1)`` is the k-th fresh external input. Legality of a core edge is checked incrementally:
``up[n]`` is the longest path into ``n`` and ``down[n]`` the longest path from ``n`` to the target,
so an edge ``p -> c`` keeps every path into the target within ``depth`` iff
``up[p] + 1 + down[c] <= depth``. This makes a 1,000-node graph take milliseconds instead of the
official per-edge recomputation over the whole ancestor graph.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from callbench.benchmarks.funcbenchgen.tasks import NodeKind


@dataclass
class RawGraph:
    """Structure only: per node its kind and ordered input variables."""

    kinds: list[NodeKind] = field(default_factory=list)
    inputs: list[list[int]] = field(default_factory=list)
    target: int = -1
    n_external: int = 0

    def add_node(self, kind: NodeKind, inputs: list[int]) -> int:
        """Append a node and return its id."""
        self.kinds.append(kind)
        self.inputs.append(inputs)
        return len(self.kinds) - 1

    def fresh_input(self) -> int:
        """A new external input variable."""
        self.n_external += 1
        return -self.n_external

    def producers(self, node: int) -> list[int]:
        """Nodes whose output feeds ``node`` (in input order)."""
        return [v for v in self.inputs[node] if v >= 0]


class _CoreBuilder:
    """Builds the core subgraph with incremental longest-path bookkeeping."""

    def __init__(self, graph: RawGraph, rng: random.Random, depth: int) -> None:
        self.g = graph
        self.rng = rng
        self.depth = depth
        self.core: list[int] = []
        self.succ: dict[int, set[int]] = {}
        self.up: dict[int, int] = {}
        self.down: dict[int, int] = {}
        self.open: list[int] = []
        """Core nodes that may still accept a side node (lazily pruned)."""

    def build(self, n_core: int) -> list[int]:
        self._chain()
        for _ in range(n_core - len(self.core)):
            self._side_node()
        for _ in range(2 * n_core):
            producer = self.rng.choice(self.core)
            consumer = self.rng.choice(self.core)
            if self._legal(producer, consumer):
                self._link(producer, consumer)
        return self.core

    def _new(self, inputs: list[int]) -> int:
        node = self.g.add_node("core", inputs)
        self.succ[node] = set()
        self.up[node] = 0
        self.core.append(node)
        return node

    def _chain(self) -> None:
        prev = self._new([self.g.fresh_input()])
        for _ in range(self.depth):
            node = self._new([prev])
            self.succ[prev].add(node)
            self.up[node] = self.up[prev] + 1
            prev = node
        self.g.target = prev
        for node in self.core:
            self.down[node] = self.depth - self.up[node]
        self.open = [n for n in self.core if self.down[n] + 1 <= self.depth]

    def _side_node(self) -> None:
        # The official code shuffles all core nodes and takes the first legal consumer, which is a
        # uniform draw among the legal ones. A side node has no producers (up = 0), so consumer c
        # is legal iff down[c] <= depth - 1; the target (down = 0) always is, so this never fails
        # when depth >= 1. ``down`` only grows, so an illegal node stays illegal: rejection
        # sampling from ``self.open`` with lazy removal gives the same uniform draw in O(1)
        # amortised instead of O(n_core) random numbers per side node.
        node = self._new([self.g.fresh_input()])
        while True:
            index = self.rng.randrange(len(self.open))
            consumer = self.open[index]
            if self.down[consumer] + 1 <= self.depth:
                break
            self.open[index] = self.open[-1]
            self.open.pop()
        self.down[node] = self.down[consumer] + 1
        self._link(node, consumer)
        if self.down[node] + 1 <= self.depth:
            self.open.append(node)

    def _legal(self, producer: int, consumer: int) -> bool:
        if producer == consumer or consumer in self.succ[producer]:
            return False
        if self._reaches(consumer, producer):
            return False
        return self.up[producer] + 1 + self.down[consumer] <= self.depth

    def _reaches(self, start: int, goal: int) -> bool:
        # Every node reaching ``goal`` has a larger ``down``: prune everything else.
        floor = self.down[goal]
        if self.down[start] <= floor:
            return False
        stack, seen = [start], {start}
        while stack:
            node = stack.pop()
            for nxt in self.succ[node]:
                if nxt == goal:
                    return True
                if nxt not in seen and self.down[nxt] > floor:
                    seen.add(nxt)
                    stack.append(nxt)
        return False

    def _link(self, producer: int, consumer: int) -> None:
        self.succ[producer].add(consumer)
        self.g.inputs[consumer].append(producer)
        self._raise(self.up, self.succ.__getitem__, consumer, self.up[producer] + 1)
        self._raise(self.down, self.g.producers, producer, self.down[consumer] + 1)

    @staticmethod
    def _raise(table: dict[int, int], step: Callable[[int], Iterable[int]], node: int, value: int) -> None:
        """Raise ``table[node]`` to ``value`` and propagate ``+1`` along ``step`` while it grows."""
        stack = [(node, value)]
        while stack:
            cur, val = stack.pop()
            if val <= table[cur]:
                continue
            table[cur] = val
            stack.extend((nxt, val + 1) for nxt in step(cur))


def build_core(graph: RawGraph, rng: random.Random, n_core: int, depth: int) -> list[int]:
    """Add the core subgraph to ``graph``; return the core nodes in creation order."""
    return _CoreBuilder(graph, rng, depth).build(n_core)


def add_disconnected(graph: RawGraph, rng: random.Random, n_dis: int) -> list[int]:
    """Add ``n_dis`` DINs, then ``n_dis // 2`` attempts to chain one DIN below another.

    A successful attempt replaces the child's single input by the parent's output, so DINs form
    single-input trees that share no type with the core.
    """
    nodes = [graph.add_node("dis", [graph.fresh_input()]) for _ in range(n_dis)]
    for _ in range(n_dis // 2):
        parent = rng.choice(nodes)
        child = rng.choice(nodes)
        if parent == child or graph.inputs[child] == [parent] or _din_ancestor(graph, parent, child):
            continue
        graph.inputs[child] = [parent]
    return nodes


def _din_ancestor(graph: RawGraph, node: int, candidate: int) -> bool:
    """True when ``candidate`` is ``node`` or an ancestor of it (DINs have one input each)."""
    cur = node
    while cur >= 0:
        if cur == candidate:
            return True
        cur = graph.inputs[cur][0]
    return False


def add_connected(graph: RawGraph, rng: random.Random, core: list[int], n_conn: int) -> list[int]:
    """Add ``n_conn`` CINs, each fed by a random member of a pool that starts as the core nodes.

    Each CIN joins the pool, so CINs form a single-input forest below the core. They never feed
    a core node, so they cannot change the depth.
    """
    pool = list(core)
    nodes: list[int] = []
    for _ in range(n_conn):
        producer = rng.choice(pool)
        node = graph.add_node("conn", [producer])
        pool.append(node)
        nodes.append(node)
    return nodes
