"""``fresh_cli``: the ``callbench`` console script from a virtual environment this test run creates.

Built once per test run from the working tree as it is then (``tests/helpers/fresh_cli.py``); under
pytest-xdist the workers share one venv (built by the first worker that needs it, under a file lock in
the run's base temporary folder) and each has its own scratch folder. Tests import ``FreshCli`` and
``assert_clean_error`` from ``fresh_cli`` (a module name no other folder has; ``conftest`` is ambiguous
when several test folders are collected together).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from fresh_cli import FreshCli, install_fresh, shared_fresh, start_prefetch

_PREFETCH: list[subprocess.Popen[bytes]] = []
"""The background build this worker started, if it was the first (see ``start_prefetch``)."""


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A worker's base temp is <run>/popen-gwN: its parent is this run's, shared by its workers only."""
    return tmp_path_factory.getbasetemp().parent


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under xdist, start building the venv as soon as the run is known to need it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if any("fresh_cli" in getattr(item, "fixturenames", ()) for item in session.items):
        started = start_prefetch(_shared_root(session.config._tmp_path_factory))
        if started is not None:
            _PREFETCH.append(started)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist, the files that use the venv come last (``scripts/test.sh`` passes
    ``--no-loadscope-reorder``, so files are handed out in this order): by the time a worker reaches
    them the background build is done, instead of every worker starting by waiting a minute for it.
    (``tests/conftest.py`` orders the whole run, keeping this: only the Ray tests come after them.)"""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    late = {item.nodeid.split("::")[0] for item in items if "fresh_cli" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: item.nodeid.split("::")[0] in late)  # stable: otherwise as collected


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Never leave the background build behind (it is bounded by pip's own timeouts)."""
    for process in _PREFETCH:
        try:
            process.wait(timeout=1500)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def fresh_cli(tmp_path_factory: pytest.TempPathFactory) -> FreshCli:
    scratch = tmp_path_factory.mktemp("cli-cwd")
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # not distributed: this session's own temp folder
        return install_fresh(tmp_path_factory.mktemp("fresh-venv"), scratch)
    return shared_fresh(_shared_root(tmp_path_factory), scratch)
