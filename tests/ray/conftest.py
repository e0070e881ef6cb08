"""One local Ray instance (2 CPUs) for every test of this folder: starting Ray costs ~10 s, so the
tests share it; the backend reuses a session the process already has and leaves it running."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session")
def ray_local() -> Iterator[Any]:
    from callbench.harness.backends.ray_session import ray_session

    with ray_session(None, num_cpus=2) as session:
        yield session
