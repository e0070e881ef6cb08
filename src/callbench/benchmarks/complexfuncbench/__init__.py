"""ComplexFuncBench on callbench: the ``complexfuncbench`` suite (a local copy of the data set, or the
synthetic ``:fixture``), the replay executor with golden-path updating, and the ComplexEval scorer
(matching cascade, live LLM judge, metrics). ``callbench data fetch complexfuncbench`` downloads the
data where the hub is reachable. See ``docs/complexfuncbench.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("complexfuncbench", "callbench.benchmarks.complexfuncbench.suite:load_suite")
    catalog.executors.register("replay", "callbench.benchmarks.complexfuncbench.executor:ReplayExecutor")
    catalog.scorers.register("complexeval", "callbench.benchmarks.complexfuncbench.scorer:ComplexEvalScorer")
    catalog.commands.register(
        "complexfuncbench", "callbench.benchmarks.complexfuncbench.cli:register_commands"
    )
