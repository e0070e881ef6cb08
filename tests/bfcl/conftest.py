"""Shared fixtures for the BFCL tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # perturb.py and bfcl_reference.py live here


@pytest.fixture(scope="session")
def bfcl_folder():
    """The installed bfcl-eval data folder (skip when bfcl-eval is not installed)."""
    from callbench.suites.bfcl_data import package_root

    root = package_root()
    if root is None:
        message = "bfcl-eval is not installed (pip install --no-deps bfcl-eval; .ci/setup.d/40-bfcl.sh does it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return root / "data"
