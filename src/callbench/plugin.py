"""The plugin surface: what a third-party benchmark package imports from callbench.

A plugin is a package with an entry point in the ``callbench`` group whose function receives the
:class:`~callbench.catalog.Catalog` and registers suites (``catalog.suites.register(name, load)``,
``load(spec, options) -> Suite``), executors, scorers and CLI commands. Everything it needs is here,
under names that stay: ``docs/plugins.md`` walks through a complete plugin
(``examples/plugin-weather/``). Anything imported from deeper modules may move between versions.
"""

from __future__ import annotations

from callbench.catalog import Catalog, Registry
from callbench.errors import ConfigError, SuiteError, ToolError
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.executors.python import PythonExecutor
from callbench.scoring.base import Scorer
from callbench.suites.loader import read_cases
from callbench.suites.suite import DEFAULT_TIERS, Suite, SuiteOptions
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case, ExpectedStep
from callbench.types.contract import ToolContract
from callbench.types.records import CaseRecord
from callbench.types.trace import Trace, TraceCall
from callbench.types.verdict import Reason, Verdict

__all__ = [
    "DEFAULT_TIERS",
    "Case",
    "CaseRecord",
    "Catalog",
    "ConfigError",
    "Executor",
    "ExecutorSession",
    "ExpectedStep",
    "PythonExecutor",
    "Reason",
    "Registry",
    "Scorer",
    "Suite",
    "SuiteError",
    "SuiteOptions",
    "ToolContract",
    "ToolError",
    "ToolOutcome",
    "ToolRegistry",
    "Trace",
    "TraceCall",
    "Verdict",
    "read_cases",
]
