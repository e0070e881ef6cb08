"""``callbench check SUITE`` played once, its runs kept for the other tests of the module that asks.

A pack's self-test (``tests/cli/test_check_command.py``) plays the oracle, ``refuse`` and ``noisy:1``
over the whole suite. For the live MCP packs (``mcp-git``, ``mcp-memory``: a server or two started
per case) those three runs are the costliest part of a test run, and their own modules judged the very
same three runs again. So those modules run the self-test once (a module-scoped fixture) with
``--keep``, check its verdict lines as ``test_check_command.py`` does, and judge the kept runs.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

from callbench.harness.engine import RunResult

INVARIANTS = ("loads", "oracle", "refuse", "noisy", "retrieval")
"""The verdict lines of ``callbench check``, in order (``callbench.cli.check``)."""


@dataclass(frozen=True)
class SelfTest:
    """What ``callbench check SUITE --keep DIR`` said and the runs it kept."""

    code: int
    lines: dict[str, str]
    """Invariant -> its ``PASS``/``FAIL`` line."""
    runs: dict[str, RunResult]
    """Model (``oracle``, ``refuse``, ``noisy:1``) -> its run, read back from the kept folder."""


def verdict_lines(out: str) -> dict[str, str]:
    return {line.split()[1]: line for line in out.splitlines() if line.startswith(("PASS", "FAIL"))}


def self_test(suite: str, keep: Path) -> SelfTest:
    """``callbench check SUITE --keep KEEP`` through the CLI entry point, its stdout captured."""
    from callbench.cli.check import MODELS
    from callbench.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", suite, "--keep", str(keep)])
    runs: dict[str, RunResult] = {}
    for model in MODELS:  # check's folder per model: its name with ':' made '-' (noisy:1 -> noisy-1)
        folder = keep / model.replace(":", "-")
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        runs[model] = RunResult(folder, summary)  # as callbench.run returned it: summary.json is it
    return SelfTest(code, verdict_lines(out.getvalue()), runs)
