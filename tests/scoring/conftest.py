"""Core test fixtures: the metamorphic tally is printed in the terminal summary.

Under pytest-xdist the tests run in worker processes: each worker hands its tally to the controller
(``workeroutput``), which adds them up and prints the section (``tests/conftest.py``).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

WORKER_KEY = "metamorphic_tally"
"""Key of a worker's tally in ``config.workeroutput`` (read by ``tests/conftest.py``)."""


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    module = sys.modules.get("metamorphic")
    if workeroutput is not None and module is not None:
        workeroutput[WORKER_KEY] = {name: dict(counts) for name, counts in module.TALLY.items()}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from metamorphic import report_lines

    lines = report_lines()
    if lines:
        terminalreporter.section("metamorphic relations (cases applied / held)")
        for line in lines:
            terminalreporter.write_line(line)
