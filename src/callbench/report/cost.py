"""Accuracy against cost across runs: one point per run in each strict tier and harness mode, and the
runs no other run beats on both (the Pareto front).

A run's cost on the x axis is its mean cost per case (its whole cost, failed cases and error records
included, over its records), so runs of different sizes compare; accuracy is the tier's strict
accuracy with its 95% interval. Tiers and harness modes are never pooled: each (tier, mode) is a
chart of its own. Runs without a cost (no price for their model, no tokens) are listed beside the
chart with the reason, never drawn at 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from callbench.harness.runfolder import RunFolder
from callbench.harness.usage import usd
from callbench.types.summary import Statistics, Table


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the (cost, accuracy) points no other point dominates, cheapest first.

    A point dominates another when it costs no more and is no less accurate, and is better in one of
    the two. Equal points do not dominate each other: both are on the front.
    """
    front = [
        i
        for i, (cost, acc) in enumerate(points)
        if not any(
            c <= cost and a >= acc and (c < cost or a > acc) for j, (c, a) in enumerate(points) if j != i
        )
    ]
    return sorted(front, key=lambda i: (points[i][0], -points[i][1], i))


def cost_points(
    runs: Sequence[RunFolder],
    stats: Sequence[Statistics],
    usage: Sequence[Mapping[str, Any]],
    strict: Sequence[str],
) -> list[dict[str, Any]]:
    """One group per (strict tier, harness mode) the runs have, in ``strict`` order: ``points`` (per
    run: ``run``, ``label``, ``accuracy`` with ``low``/``high``, ``n``, ``cost_per_case``,
    ``cost_usd``, ``cost_per_pass``, ``pareto``; ``why`` instead of a cost when there is none) and
    ``front`` (the runs on the Pareto front, cheapest first).

    Args:
        usage: The runs' :func:`~callbench.report.overview.cost_rows`, in run order.
        strict: The strict tiers (diagnostic scorers get no chart).
    """
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for index, (run, st) in enumerate(zip(runs, stats, strict=True)):
        row = usage[index]
        for s in st.strata:
            if s.tier not in strict:
                continue
            per_pass = (row.get("cost_per_pass") or {}).get(s.tier)
            cost_per_pass = per_pass["cost_usd"] if per_pass is not None else None
            if per_pass is None and row.get("cost_usd") is not None and s.passed:
                cost_per_pass = row["cost_usd"] / s.passed  # a summary written before it was kept
            groups[(s.tier, s.harness_mode)].append(
                {
                    "run": index,
                    "label": run.label,
                    "accuracy": s.accuracy.estimate,
                    "low": s.accuracy.low,
                    "high": s.accuracy.high,
                    "n": s.n,
                    "passed": s.passed,
                    "cost_per_case": row.get("cost_per_case"),
                    "cost_usd": row.get("cost_usd"),
                    "cost_per_pass": cost_per_pass,
                    "why": None
                    if row.get("cost_per_case") is not None
                    else (row.get("missing") or {}).get("cost"),
                    "pareto": False,
                }
            )
    rank = {tier: i for i, tier in enumerate(strict)}
    out = []
    for (tier, mode), points in sorted(groups.items(), key=lambda g: (rank[g[0][0]], g[0][1])):
        priced = [p for p in points if p["cost_per_case"] is not None]
        front = [priced[i] for i in pareto_front([(p["cost_per_case"], p["accuracy"]) for p in priced])]
        for p in front:
            p["pareto"] = True
        out.append({"tier": tier, "harness_mode": mode, "points": points, "front": [p["run"] for p in front]})
    return out


PARETO_NOTE = (
    "Pareto front: the runs no other run beats on both cost per case (lower) and strict accuracy "
    "(higher) in the same tier and harness mode. Cost per case = the run's whole cost (failed cases "
    "and error records included) / its records; cost per passed case = the whole cost / the tier's "
    "passed cases. Accuracy differences inside the 95% intervals may be noise (see the paired comparisons)."
)


def cost_points_table(groups: Sequence[Mapping[str, Any]]) -> Table:
    """The accuracy-vs-cost points as a display table (``callbench report --format md|csv``)."""
    rows = []
    for g in groups:
        for p in sorted(g["points"], key=lambda p: (p["cost_per_case"] is None, p["cost_per_case"] or 0.0)):
            cost = (
                usd(p["cost_per_case"]) if p["cost_per_case"] is not None else f"– ({p['why'] or 'no cost'})"
            )
            rows.append(
                [
                    g["tier"],
                    g["harness_mode"],
                    p["label"],
                    f"{100 * p['accuracy']:.1f} ({100 * p['low']:.1f}–{100 * p['high']:.1f})",
                    cost,
                    usd(p["cost_per_pass"]) if p["cost_per_pass"] is not None else "–",
                    "yes" if p["pareto"] else "",
                ]
            )
    columns = ["Tier", "Harness mode", "Run", "Strict accuracy % (95% CI)", "Cost per case (USD)"]
    columns += ["Cost per passed case (USD)", "Pareto front"]
    align: list[Any] = ["left", "left", "left", "right", "right", "right", "left"]
    return Table(title="Accuracy vs cost", columns=columns, rows=rows, align=align, notes=[PARETO_NOTE])
