"""FuncBenchGen-style contamination-free tasks: a generator of hidden function-dependency DAGs, the
``dag`` suite and executor, the ``dag`` scorer and the ``planner`` agent (``callbench generate dag``).
See ``docs/dag-tasks.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("dag", "callbench.benchmarks.funcbenchgen.suite:load_suite")
    catalog.executors.register("dag", "callbench.benchmarks.funcbenchgen.executor:DagExecutor")
    catalog.scorers.register("dag", "callbench.benchmarks.funcbenchgen.scorer:DagScorer")
    catalog.providers.register("planner", "callbench.benchmarks.funcbenchgen.planner:make_provider")
    catalog.commands.register("funcbenchgen", "callbench.benchmarks.funcbenchgen.cli:register_commands")
