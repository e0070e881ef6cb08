"""``fresh_cli``: the ``callbench`` console script from a virtual environment this test run creates.

Built once per test session from the working tree as it is then (``tests/helpers/fresh_cli.py``). Tests
import ``FreshCli`` and ``assert_clean_error`` from ``fresh_cli`` (a module name no other folder has;
``conftest`` is ambiguous when several test folders are collected together).
"""

from __future__ import annotations

import pytest
from fresh_cli import FreshCli, install_fresh


@pytest.fixture(scope="session")
def fresh_cli(tmp_path_factory: pytest.TempPathFactory) -> FreshCli:
    return install_fresh(tmp_path_factory.mktemp("fresh-venv"), tmp_path_factory.mktemp("cli-cwd"))
