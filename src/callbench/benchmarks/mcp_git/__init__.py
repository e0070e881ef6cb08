"""``mcp-git``: a real-world suite on the third-party ``mcp-server-git`` MCP server.

Every case gets its own Git repository, built fresh from a known history in the case's work folder;
calls go to a live ``python -m mcp_server_git`` over stdio through callbench's ``mcp`` executor, and
the state check reads the repository's Git state. Needs the ``mcp-git`` extra and a ``git`` binary.

Registers the suite ``mcp-git``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("mcp-git", "callbench.benchmarks.mcp_git.suite:load_suite")
