"""BFCL (Berkeley Function Calling Leaderboard) on callbench: the ``bfcl`` suite from the installed
``bfcl-eval`` data, a faithful and an improved AST checker, the multi-turn executor over BFCL's own
backends, and interchange with BFCL's result and score files (``callbench export bfcl``,
``callbench bfcl score-results``). See ``docs/bfcl.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("bfcl", "callbench.benchmarks.bfcl.suite:load_suite")
    catalog.executors.register("bfcl-multi-turn", "callbench.benchmarks.bfcl.executor:BfclMultiTurnExecutor")
    catalog.executors.register(
        "bfcl-web-search", "callbench.benchmarks.bfcl.web_search_executor:BfclWebSearchExecutor"
    )
    catalog.executors.register("bfcl-memory", "callbench.benchmarks.bfcl.memory_executor:BfclMemoryExecutor")
    catalog.scorers.register("bfcl", "callbench.benchmarks.bfcl.scorer:BfclScorer")
    catalog.commands.register("bfcl", "callbench.benchmarks.bfcl.cli:register_commands")
