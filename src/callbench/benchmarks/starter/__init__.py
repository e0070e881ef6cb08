"""``starter``: a small everyday-assistant suite (weather, units, contacts, e-mail, calendar, notes, files)
that exercises every argument-DSL form and all three tiers with real Python implementations.

Registers the suite ``starter``.
"""

from __future__ import annotations

from typing import Any


def register(catalog: Any) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("starter", "callbench.benchmarks.starter.suite:load_suite")
