"""``starter``: a small everyday-assistant suite (weather, units, contacts, e-mail, calendar, notes, files)
that exercises every argument-DSL form and all three tiers with real Python implementations.

Registers the suite ``starter``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("starter", "callbench.benchmarks.starter.suite:load_suite")
