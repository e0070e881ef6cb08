"""The ``bfcl`` scorer's run-level additions: BFCL's overall score and the format-sensitivity spread,
as figures beside the per-category ones and as display tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from callbench.benchmarks.bfcl.format_sensitivity import CATEGORY as FORMAT_SENSITIVITY
from callbench.benchmarks.bfcl.format_sensitivity import format_figures, format_table, split_id
from callbench.benchmarks.bfcl.overall import LABELS, PARTS, SCORING, WEIGHTS, covers_any, overall_score
from callbench.plugin import Aggregate, Table


def bfcl_aggregate(
    figures: dict[str, Any], ids: Sequence[str], rows: Sequence[tuple[str, bool]], mode: str
) -> Aggregate:
    """``figures`` (per-category counts and summaries) with the overall score when any category it
    reads was run, and the format-sensitivity figures when that category was; ``ids`` are the
    records' case ids, aligned with the (category, passed) ``rows``."""
    tables: list[Table] = []
    per = figures["categories"]
    if covers_any(per):
        figures["overall"] = overall_score(per)
        tables.append(overall_table(figures["overall"], per, mode))
    variant_rows = []
    for case_id, (category, passed) in zip(ids, rows, strict=True):
        if category == FORMAT_SENSITIVITY:
            variant, source = split_id(case_id)
            variant_rows.append((variant.name, source, passed))
    spread = format_figures(variant_rows)
    if spread is not None:
        figures["format_sensitivity"] = spread
        tables.append(format_table(spread, mode))
    return Aggregate(figures, tables or None)


def _percent(value: float) -> str:
    return f"{value * 100:.2f}%"


def overall_table(result: Mapping[str, Any], per: Mapping[str, Any], mode: str, title: str = "") -> Table:
    """BFCL's overall score and its five parts; missing categories named in the notes."""
    rows = []
    weight_sum = sum(WEIGHTS.values())
    for name, weight in WEIGHTS.items():
        present = sum(category in per for category in PARTS[name])
        rows.append(
            [
                LABELS[name],
                f"{weight / weight_sum:.0%}",
                _percent(result["parts"][name]),
                f"{present}/{len(PARTS[name])}",
            ]
        )
    covered = sum(category in per for category in SCORING)
    label = "Overall" if result["complete"] else "Overall (incomplete)"
    rows.append([label, "100%", _percent(result["overall"]), f"{covered}/{len(SCORING)}"])
    notes = [f"checker: {mode}; weights and means as bfcl-eval computes its overall accuracy"]
    if result["missing"]:
        notes.append(f"incomplete: missing {', '.join(result['missing'])} (each counted as 0, as BFCL does)")
    notes.append("outside the overall, as in BFCL: live_relevance, format_sensitivity")
    return Table(
        title=title or "bfcl overall score (BFCL v4 weighting)",
        columns=["part", "weight", "accuracy", "categories"],
        rows=rows,
        align=["left", "right", "right", "right"],
        notes=notes,
    )
