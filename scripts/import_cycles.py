#!/usr/bin/env python
"""Print every import cycle between modules of ``callbench`` (exit 1 if there is one).

Import-linter holds the layers between packages; this holds the finer rule that no two files import
each other, directly or through others. Imports inside ``if TYPE_CHECKING:`` blocks count too: a
cycle that only type hints close still ties the files together for a reader.

    python scripts/import_cycles.py
"""

from __future__ import annotations

import sys

import grimp


def cycles(package: str = "callbench") -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    graph = grimp.build_graph(package)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, [])
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def main() -> int:
    found = cycles()
    for component in found:
        print("cycle: " + " <-> ".join(component))
    print(f"{len(found)} import cycle(s) between modules of callbench")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
