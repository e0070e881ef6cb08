"""callbench: strict, execution-backed, reproducible benchmarks of LLM function calling.

The public API mirrors the CLI: :func:`evaluate` (``callbench run``; :func:`run` is its friendly
alias with flat keywords) with the option groups :class:`Selection`, :class:`EngineLimits`,
:class:`GenerationSettings` and :class:`Output`; :func:`score_run` (``callbench score``),
:func:`load_suite`, and :func:`load_runs`, :func:`load_records`, :func:`load_verdicts` (data frames).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callbench.types.version import __version__

__all__ = [
    "EngineLimits",
    "GenerationSettings",
    "Output",
    "Selection",
    "__version__",
    "evaluate",
    "evaluate_async",
    "load_records",
    "load_runs",
    "load_suite",
    "load_verdicts",
    "run",
    "run_async",
    "score_run",
]

# The API is imported on first use (PEP 562): ``import callbench.scoring...`` stays light, and
# the command line starts without loading the engine, numpy and scipy it may not need.
_LAZY = {
    "evaluate": "callbench.api",
    "evaluate_async": "callbench.api",
    "run": "callbench.api",
    "run_async": "callbench.api",
    "score_run": "callbench.api",
    "load_records": "callbench.api",
    "load_runs": "callbench.api",
    "load_verdicts": "callbench.api",
    "load_suite": "callbench.suites.resolve",
    "Selection": "callbench.harness.config",
    "EngineLimits": "callbench.harness.config",
    "Output": "callbench.harness.config",
    "GenerationSettings": "callbench.types.messages",
}

if TYPE_CHECKING:
    from callbench.api import (
        evaluate,
        evaluate_async,
        load_records,
        load_runs,
        load_verdicts,
        run,
        run_async,
        score_run,
    )
    from callbench.harness.config import EngineLimits, Output, Selection
    from callbench.suites.resolve import load_suite
    from callbench.types.messages import GenerationSettings


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'callbench' has no attribute {name!r}")
