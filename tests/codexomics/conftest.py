"""Fixtures for the CodeXomics importer tests.

The conformance data (the original app's suites and contracts) is not part of the package. The
tests look for it in ``$CALLBENCH_CODEXOMICS_DATA`` or next to the repository at
``../shared/data/codexomics`` and skip the conformance tests with a clear reason when absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def data_dir() -> Path | None:
    """The CodeXomics data folder, or None when it is not available."""
    env = os.environ.get("CALLBENCH_CODEXOMICS_DATA")
    candidate = Path(env) if env else REPO.parent / "shared" / "data" / "codexomics"
    return candidate if (candidate / "automatic_simple.json").is_file() else None


@pytest.fixture(scope="session")
def cx_data() -> Path:
    found = data_dir()
    if found is None:
        pytest.skip("CodeXomics data not found: set CALLBENCH_CODEXOMICS_DATA or place it at ../shared/data/codexomics")
    return found


@pytest.fixture(scope="session")
def imported(cx_data: Path):
    from callbench.suites.codexomics import import_codexomics

    return import_codexomics([cx_data / "automatic_simple.json", cx_data / "automatic_complex.json"],
                             cx_data / "tools_registry")


@pytest.fixture(scope="session")
def suite_dir(imported, tmp_path_factory) -> Path:
    from callbench.suites.codexomics_write import write_suite

    return write_suite(imported, tmp_path_factory.mktemp("codexomics") / "suite")


@pytest.fixture(scope="session")
def suite(suite_dir: Path):
    from callbench.suites.loader import load_suite_path

    return load_suite_path(suite_dir)
