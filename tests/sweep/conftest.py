"""Fixtures of the sweep tests: the installed console script (``fresh_cli``, as in tests/cli) and a
small sweep file over the built-in agents (no network)."""

from __future__ import annotations

import pytest
from fresh_cli import FreshCli, install_fresh


@pytest.fixture(scope="session")
def fresh_cli(tmp_path_factory: pytest.TempPathFactory) -> FreshCli:
    return install_fresh(tmp_path_factory.mktemp("fresh-venv"), tmp_path_factory.mktemp("cli-cwd"))
