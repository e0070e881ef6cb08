"""Tool name -> implementation for the genomics pack (the python executor's binding table)."""

from __future__ import annotations

# Imported for their @tool registrations into TOOLS.
from callbench.benchmarks.genomics.tools import (  # noqa: F401
    annotation,
    blast,
    editing,
    export,
    loading,
    marks,
    navigation,
    primers,
    protein,
    remote,
    restriction,
    search,
    sequence,
    system,
    tracks,
)
from callbench.benchmarks.genomics.tools._spec import TOOLS, ToolFunc, ToolSpec

BINDINGS: dict[str, ToolFunc] = {name: spec.func for name, spec in sorted(TOOLS.items())}
SPECS: dict[str, ToolSpec] = dict(sorted(TOOLS.items()))
