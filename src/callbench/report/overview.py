"""The page's first screen across runs: the leaderboard and the paired comparisons.

Figures are never pooled across scoring tiers or harness modes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callbench.errors import PoolingError
from callbench.harness.runfolder import RunFolder
from callbench.stats import compare_runs, record_view, strata
from callbench.types.summary import Statistics, Table


def leaderboard(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> list[dict[str, Any]]:
    """Rows ranked by strict accuracy within each (tier, harness mode); never across them."""
    rows: list[dict[str, Any]] = []
    for run, st in zip(runs, stats, strict=True):
        for s in st.strata:
            rows.append(
                {
                    "label": run.label,
                    "tier": s.tier,
                    "harness_mode": s.harness_mode,
                    "accuracy": s.accuracy.estimate,
                    "low": s.accuracy.low,
                    "high": s.accuracy.high,
                    "n": s.n,
                    "errors": s.errors,
                    "partial": s.partial_mean_diagnostic,
                }
            )
    rows.sort(key=lambda r: (r["tier"], r["harness_mode"], -r["accuracy"]))
    rank, prev = 0, None
    for row in rows:
        group = (row["tier"], row["harness_mode"])
        rank = 1 if group != prev else rank + 1
        row["rank"], prev = rank, group
    return rows


def comparisons(runs: Sequence[RunFolder], notes: list[str] | None = None) -> list[dict[str, Any]]:
    """Paired comparisons for every pair of runs, per tier and harness mode they share.

    Pairs with no (tier, harness mode) in common are not compared; a line saying so is appended
    to ``notes`` when given.
    """
    out = []
    views = [[record_view(r) for r in run.records] for run in runs]
    for i, a in enumerate(runs):
        for j in range(i + 1, len(runs)):
            b = runs[j]
            groups_a, groups_b = strata(views[i]), strata(views[j])
            if notes is not None and groups_a and groups_b and not set(groups_a) & set(groups_b):
                notes.append(
                    f"{a.label} and {b.label} share no tier and harness mode; not compared (never pooled)"
                )
            for key in sorted(set(groups_a) & set(groups_b)):
                try:
                    cmp = compare_runs(groups_a[key], groups_b[key], key[0])
                except PoolingError:
                    continue
                if cmp["n"]:
                    out.append(cmp | {"a": a.label, "b": b.label})
    return out


def overview_payload(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> dict[str, Any]:
    """The overview's page data: top-level keys of the page's DATA (leaderboard, comparisons, notes)."""
    notes: list[str] = []
    pairs = comparisons(runs, notes) if len(runs) > 1 else []
    return {
        "leaderboard": leaderboard(runs, stats) if len(runs) > 1 else [],
        "comparisons": pairs,
        "notes": notes,
    }


def overview_tables(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> list[Table]:
    """The overview as display tables (for ``callbench report --format md|csv``)."""
    rows = [
        [
            str(r["rank"]),
            r["label"],
            r["tier"],
            r["harness_mode"],
            str(r["n"]),
            f"{100 * r['accuracy']:.1f}",
            f"{100 * r['low']:.1f}–{100 * r['high']:.1f}",
            str(r["errors"]),
        ]
        for r in leaderboard(runs, stats)
    ]
    columns = ["#", "Run", "Tier", "Harness mode", "n", "Strict accuracy (%)", "95% CI (%)", "Errors"]
    return [Table(title="Leaderboard", columns=columns, rows=rows)]
