"""``SuiteOptions``: what a suite loader receives besides its spec string.

It sits in the data layer so that :mod:`callbench.catalog` can say what a suite loader accepts
(``SuiteLoader``) without importing the suites package above it; ``callbench.suites.suite`` and
``callbench.plugin`` re-export it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SuiteOptions:
    """Options a suite loader receives from the CLI or API."""

    data: Path | None = None
    """``--data``: a local path to the source data set, for loaders that need one."""
    registry: Path | None = None
    """``--registry``: a tool registry folder for suites that do not carry their own."""
    extra: dict[str, Any] = field(default_factory=dict)
