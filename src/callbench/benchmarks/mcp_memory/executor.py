"""The ``mcp-memory`` executor: the core ``mcp`` executor, one memory server per case, the graph as state.

Cases run under isolation ``case`` (:mod:`callbench.mcp.isolation`): each has a server process of its
own, started ahead by the warm pool in a fresh folder, whose graph file the suite's reset hook seeds
before the case's first call, and which is stopped when the case ends. (One server for several cases
would not do: the server rewrites its whole file per call, so concurrent cases lose each other's
writes, and each would see what the others created.)

The state the ``state-match`` check compares is the graph the server keeps, read from its file in the
case server's folder: before the case's first call (no server leased yet) it is the seed graph the
server will start from. Under ``--replay`` the cassette's recorded states answer instead, and no
server or package is looked for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from callbench.benchmarks.mcp_memory.server import (
    GRAPH_FILE,
    SEED,
    SEED_RESET,
    find_server,
    placeholder_spec,
    server_spec,
)
from callbench.executors.mcp import McpExecutor, McpSession
from callbench.mcp.isolation import IsolationChoice
from callbench.plugin import Case, ConfigError, ExecutorSession, Suite, freeze, tool_server_replayed

ISOLATION_WHY = (
    "the memory server keeps one graph per process and rewrites its whole file per call: every case "
    "needs a server of its own, seeded with the known graph"
)


def graph_state(text: str) -> dict[str, Any]:
    """The snapshot of a graph file (the server's JSON lines): one ``entity:NAME`` key per entity
    (its type and its observations, sorted) and ``relations`` (``FROM -TYPE-> TO``, sorted)."""
    state: dict[str, Any] = {}
    relations: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("type") == "entity":
            observations = sorted(str(o) for o in item.get("observations") or [])
            state[f"entity:{item['name']}"] = {"type": item.get("entityType"), "observations": observations}
        elif item.get("type") == "relation":
            relations.append(f"{item['from']} -{item['relationType']}-> {item['to']}")
    state["relations"] = sorted(relations)
    return state


def seed_state() -> dict[str, Any]:
    """The state every case starts from."""
    return graph_state(SEED.read_text(encoding="utf-8"))


class MemoryMcpExecutor(McpExecutor):
    """Forwards calls to a memory server of the case's own; the package is looked for only when a live
    server is needed (:meth:`preflight`)."""

    name = "mcp-memory"
    declared_isolation = "case"
    declared_isolation_why = ISOLATION_WHY

    def __init__(self) -> None:
        super().__init__(placeholder_spec())
        # What the run decides replaces this (the suite declares the same); used as is when the
        # executor is driven without a run (a fuzz, a test), so a server never serves two cases.
        self.choice = IsolationChoice("case", "executor", ISOLATION_WHY, SEED_RESET)
        self._found = False

    def preflight(self) -> None:
        """Find ``node`` and the pinned package (one line saying how to install what is missing)."""
        if not self._found:
            node, script = find_server()
            self.spec = server_spec(node, script)
            self._found = True

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        if not tool_server_replayed() and not self._found:
            try:  # a run has looked already (before any case); a server that cannot start then fails
                self.preflight()
            except ConfigError:
                pass
        return MemoryMcpSession(self)


class MemoryMcpSession(McpSession):
    """One case's calls, and the graph of its server as the snapshot."""

    def __init__(self, executor: McpExecutor) -> None:
        super().__init__(executor)
        self.forwarded = False
        """Whether a call was sent on (a server leased, or tried)."""

    def map_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.forwarded = True
        return arguments

    def snapshot(self) -> dict[str, Any] | None:
        case_server = self.case_server
        if case_server is None:  # not isolated per case: no graph of this case's own to read
            return None
        server = case_server.server
        if server is None:
            # No call reached a server yet: it will start from the seed. After calls, a server that
            # was lost took its graph with it: not known.
            return None if self.forwarded else freeze(seed_state())
        if server.folder is None:
            return None
        path = server.folder.work / GRAPH_FILE
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return freeze(graph_state(text))
