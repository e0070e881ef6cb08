"""Shared fixtures for the BFCL tests.

bfcl-eval (data) and the BFCL reference venv are installed by .ci/setup.d/60-bfcl.sh and
.ci/background.d/20-bfcl-venv.sh. When either is missing, tests that need it fail in CI (``CI=true``)
and are skipped locally with the reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # perturb.py and bfcl_reference.py live here

BFCL_VERSION = "2026.3.23"
from bfcl_model import MODEL  # noqa: E402, F401 - re-exported for fixtures, after the path set-up


def unavailable(message: str) -> None:
    """Fail in CI, skip locally."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def venv_python() -> Path | None:
    """Python of the BFCL reference venv, if it exists."""
    default = Path.home() / ".cache" / f"callbench-bfcl-venv-{BFCL_VERSION}"
    python = Path(os.environ.get("CALLBENCH_BFCL_VENV", default)) / "bin" / "python"
    return python if python.is_file() else None


@pytest.fixture(scope="session")
def bfcl_folder():
    """The installed bfcl-eval data folder."""
    from callbench.benchmarks.bfcl.data import package_root

    root = package_root()
    if root is None:
        unavailable(
            "bfcl-eval is not installed (pip install --no-deps bfcl-eval; .ci/setup.d/60-bfcl.sh does it)"
        )
    return root / "data"


@pytest.fixture(scope="session")
def reference_python():
    """Python of the BFCL reference venv (BFCL's own checker runs there)."""
    python = venv_python()
    if python is None:
        unavailable("BFCL reference venv missing; run .ci/background.d/20-bfcl-venv.sh")
    return python
