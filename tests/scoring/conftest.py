"""Core test fixtures: the metamorphic tally is printed in the terminal summary."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from metamorphic import report_lines

    lines = report_lines()
    if lines:
        terminalreporter.section("metamorphic relations (cases applied / held)")
        for line in lines:
            terminalreporter.write_line(line)
