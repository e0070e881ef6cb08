"""callbench: strict, execution-backed, reproducible benchmarks of LLM function calling.

The public API mirrors the CLI: :func:`run` (``callbench run``), :func:`score_run`
(``callbench score``), :func:`load_suite` and :func:`load_records`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from callbench.api import load_records, run, run_async, score_run  # noqa: E402
from callbench.suites.resolve import load_suite  # noqa: E402

__all__ = ["__version__", "load_records", "load_suite", "run", "run_async", "score_run"]
