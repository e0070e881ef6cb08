"""Cross-run breakdowns for the report: per category, per tool, expected-vs-called, reason codes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callbench.harness.runfolder import RunFolder
from callbench.types.summary import Statistics, Table


def breakdowns_payload(runs: Sequence[RunFolder]) -> dict[str, Any]:
    """The breakdown tables' data for the page (JSON-able)."""
    return {}


def breakdown_tables(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> list[Table]:
    """The breakdowns as display tables (for ``callbench report --format md|csv``): accuracy by
    category, one row per (run, tier, harness mode, category)."""
    rows = [
        [run.label, s.tier, s.harness_mode, name, str(g.n), f"{100 * g.accuracy.estimate:.1f}"]
        for run, st in zip(runs, stats, strict=True)
        for s in st.strata
        for name, g in s.by_category.items()
    ]
    columns = ["Run", "Tier", "Harness mode", "Category", "n", "Strict accuracy (%)"]
    return [Table(title="Accuracy by category", columns=columns, rows=rows)]
