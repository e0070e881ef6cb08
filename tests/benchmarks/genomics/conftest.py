"""Shared fixtures of the genomics tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from callbench.benchmarks.genomics.suite import load_all, load_complex, load_simple
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.suites.suite import Suite


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A fresh workspace in the test's temporary folder."""
    return Workspace(tmp_path / "case")


@pytest.fixture(scope="session")
def suite_all() -> Suite:
    return load_all()


@pytest.fixture(scope="session")
def suite_simple() -> Suite:
    return load_simple()


@pytest.fixture(scope="session")
def suite_complex() -> Suite:
    return load_complex()
