"""``mcp-memory``: a real-world suite on the reference memory MCP server (npm).

Every case gets a server of its own (isolation ``case``), its graph seeded with a known knowledge
graph; calls go to a live ``@modelcontextprotocol/server-memory`` (a pinned release, run with
``node``) over stdio through callbench's ``mcp`` executor, and the state check reads the graph the
server keeps. Loading and ``--replay`` need no Node.js; a live run needs Node.js and the package.

Registers the suite ``mcp-memory``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("mcp-memory", "callbench.benchmarks.mcp_memory.suite:load_suite")
