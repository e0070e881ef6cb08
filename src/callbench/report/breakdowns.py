"""Cross-run breakdowns for the report: per category, per tool, expected-vs-called, reason codes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callbench.harness.runfolder import RunFolder


def breakdowns_payload(runs: Sequence[RunFolder]) -> dict[str, Any]:
    """The breakdown tables' data for the page (JSON-able)."""
    return {}
