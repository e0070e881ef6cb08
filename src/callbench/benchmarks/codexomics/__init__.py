"""The importer of the original CodeXomics benchmark: its suites (143 simple + 29 complex cases) and
YAML tool contracts become a callbench suite (``callbench import codexomics``, or ``--suite codexomics
--data DIR`` on the fly). See ``docs/codexomics-import.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callbench.plugin import Catalog


def register(catalog: Catalog) -> None:
    """Entry point of the ``callbench`` plugin group."""
    catalog.suites.register("codexomics", "callbench.benchmarks.codexomics.suite:load_suite")
    catalog.commands.register("codexomics", "callbench.benchmarks.codexomics.cli:register_commands")
