"""The genomics domain pack: a genome-workbench workspace, 162 tools with real implementations and the
``genomics``, ``genomics-simple``, ``genomics-complex`` and ``genomics-manual`` (open-ended analyses scored by
reviewers against a rubric) suites. ``genomics`` is callbench's embedded
default suite (what ``callbench run`` runs without ``--suite``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog

DEFAULT_SUITE = "genomics"


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("genomics", "callbench.benchmarks.genomics.suite:load_all")
    catalog.suites.register("genomics-simple", "callbench.benchmarks.genomics.suite:load_simple")
    catalog.suites.register("genomics-complex", "callbench.benchmarks.genomics.suite:load_complex")
    catalog.suites.register("genomics-manual", "callbench.benchmarks.genomics.suite:load_manual")
    catalog.set_default_suite(DEFAULT_SUITE)
