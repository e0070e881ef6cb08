"""One local Ray instance (2 CPUs) for the tests of this folder: starting Ray costs ~10 s, so the
tests share it; the backend reuses a session the process already has and leaves it running.

It is stopped after the folder's last test (its processes would otherwise idle, using CPU, until the
whole session ends). Under pytest-xdist the folder's files run on one worker in a row
(``tests/conftest.py`` hands them out as one unit), so one instance serves them all."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

HERE = Path(__file__).parent
_LOCAL = ExitStack()
"""The local Ray instance while this folder's tests run."""


@pytest.fixture
def ray_local() -> Any:
    """The shared local Ray instance, started by the first test that asks for it."""
    from callbench.harness.backends.ray_session import ray_session

    if not ray.is_initialized():
        _LOCAL.enter_context(ray_session(None, num_cpus=2))
    return ray


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the last test of this folder (the next one is elsewhere, or none), stop Ray."""
    if nextitem is None or not nextitem.path.is_relative_to(HERE):
        _LOCAL.close()
