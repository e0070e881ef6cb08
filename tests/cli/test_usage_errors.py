"""A hurried newcomer's mistakes get click's one-line usage error and exit 2, never a traceback.

Run through the installed console script, as a user runs it (typer 0.29 bundles its own click, which
once turned every usage error into a traceback)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

COMMAND = (
    [shutil.which("callbench")] if shutil.which("callbench") else [sys.executable, "-m", "callbench.cli.main"]
)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "genomics"], "Got unexpected extra argument(s) (genomics)"),
        (["run", "--suit", "starter"], "No such option: --suit"),
        (["rn"], "No such command 'rn'. Did you mean 'run'?"),
        (["run", "--concurrency", "many"], "Invalid value for '--concurrency'"),
        (["run", "--suite"], "Option '--suite' requires an argument"),
    ],
)
def test_usage_errors_are_one_clear_line(argv: list[str], says: str) -> None:
    done = subprocess.run([*COMMAND, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert says in done.stderr
