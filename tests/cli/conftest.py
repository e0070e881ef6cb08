"""``fresh_cli``: the ``callbench`` console script from a virtual environment this test run creates.

Built once per test run from the working tree as it is then (``tests/helpers/fresh_cli.py``); under
pytest-xdist the workers share one venv (built by the first worker that needs it, under a file lock in
the run's base temporary folder) and each has its own scratch folder. Tests import ``FreshCli`` and
``assert_clean_error`` from ``fresh_cli`` (a module name no other folder has; ``conftest`` is ambiguous
when several test folders are collected together).
"""

from __future__ import annotations

import os

import pytest
from fresh_cli import FreshCli, install_fresh, shared_fresh


@pytest.fixture(scope="session")
def fresh_cli(tmp_path_factory: pytest.TempPathFactory) -> FreshCli:
    scratch = tmp_path_factory.mktemp("cli-cwd")
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # not distributed: this session's own temp folder
        return install_fresh(tmp_path_factory.mktemp("fresh-venv"), scratch)
    # A worker's base temp is <run>/popen-gwN: its parent is this run's, shared by its workers only.
    return shared_fresh(tmp_path_factory.getbasetemp().parent, scratch)
