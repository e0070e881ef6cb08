"""``callbench bfcl overall RUN_DIR...``: BFCL's overall score per model over several run folders.

A model's categories often come from several runs (single-turn in one, multi-turn in another, the
agentic categories in a third). The ``bfcl`` figures of every run's ``summary.json`` are pooled per
(model, checker mode, harness mode) — faithful and improved figures, and different harness modes,
are never pooled — and BFCL's overall formula (:mod:`callbench.benchmarks.bfcl.overall`) is applied
to each pool. Run folders written by ``callbench bfcl score-results`` qualify too (harness mode
``bfcl-generate``). A category found in two runs of one pool stops the command with one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.overall import SCORING, WEIGHTS, covers_any, overall_score
from callbench.plugin import Align, Table, UserError

SUMMARY = "summary.json"
SHORT = {
    "non_live": "non-live",
    "live": "live",
    "irrelevance": "irrel.",
    "multi_turn": "multi-turn",
    "agentic": "agentic",
}
"""Column labels; the number after each is its weight in BFCL's overall (of 100)."""


@dataclass
class Pool:
    """The per-category figures of one (model, mode, harness mode) and the runs they came from."""

    model: str
    mode: str
    harness_mode: str
    categories: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)
    """category -> the run folder it came from"""


def _bfcl_figures(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    path = run_dir / SUMMARY
    if not path.is_file():
        raise UserError(f"{run_dir}: no {SUMMARY} (not a finished run folder)")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: invalid JSON ({exc.msg})") from exc
    figures = (summary.get("scorer_aggregates") or {}).get("bfcl")
    if not figures or "categories" not in figures:
        raise UserError(f"{run_dir}: no bfcl scorer figures (not a run of the bfcl suite)")
    return summary, figures


def pool_runs(run_dirs: Sequence[Path]) -> list[Pool]:
    """The runs' bfcl category figures pooled per (model, checker mode, harness mode), in first-seen order."""
    pools: dict[tuple[str, str, str], Pool] = {}
    for run_dir in run_dirs:
        summary, figures = _bfcl_figures(Path(run_dir))
        model = str(summary.get("model") or "?")
        mode = str((figures.get("settings") or {}).get("mode") or "faithful")
        harness = str(summary.get("harness_mode") or "?")
        pool = pools.setdefault((model, mode, harness), Pool(model, mode, harness))
        for category, item in figures["categories"].items():
            if category in pool.categories:
                raise UserError(
                    f"bfcl overall: {category} of {model} ({mode}) is in both {pool.runs[category]} and "
                    f"{run_dir}; pass one of them"
                )
            pool.categories[category] = item
            pool.runs[category] = str(run_dir)
    return list(pools.values())


def _percent(value: float) -> str:
    return f"{value * 100:.2f}%"


def overall_rows(pools: Sequence[Pool]) -> tuple[list[dict[str, Any]], Table]:
    """Each pool's overall score and parts (rows for machines) and one table with a row per pool
    (pools holding no category of the overall score are named in the notes only)."""
    rows, cells, notes, skipped = [], [], [], []
    for pool in pools:
        label = f"{pool.model} ({pool.mode})"
        if pool.harness_mode != "production-parity":
            label += f" [{pool.harness_mode}]"
        if not covers_any(pool.categories):
            skipped.append(label)
            continue
        result = overall_score(pool.categories)
        rows.append({"model": pool.model, "mode": pool.mode, "harness_mode": pool.harness_mode, **result})
        covered = sum(category in pool.categories for category in SCORING)
        overall = _percent(result["overall"]) + ("" if result["complete"] else " *")
        cells.append(
            [label, overall]
            + [_percent(result["parts"][name]) for name in WEIGHTS]
            + [f"{covered}/{len(SCORING)}"]
        )
        if result["missing"]:
            notes.append(f"* {label}: incomplete, missing {', '.join(result['missing'])}")
    if notes:
        notes.append("missing categories count as 0, as in BFCL")
    if skipped:
        notes.append(f"no category of the overall score: {', '.join(skipped)}")
    align: list[Align] = ["left"]
    align += ["right"] * (len(WEIGHTS) + 2)
    table = Table(
        title="BFCL v4 overall score",
        columns=["model (checker)", "overall"]
        + [f"{SHORT[name]} {weight}" for name, weight in WEIGHTS.items()]
        + ["categories"],
        rows=cells,
        align=align,
        notes=notes,
    )
    return rows, table


def print_overall(run_dirs: Sequence[Path], as_json: bool = False) -> list[dict[str, Any]]:
    """Print the overall table (or the rows as JSON) for ``run_dirs``; returns the rows."""
    from rich.console import Console
    from rich.table import Table as RichTable

    rows, table = overall_rows(pool_runs(run_dirs))
    console = Console()
    if as_json:
        console.print_json(json.dumps(rows))
        return rows
    shown = RichTable(title=table.title)
    for index, column in enumerate(table.columns):
        shown.add_column(column, justify=table.alignment(index))
    for cells in table.rows:
        shown.add_row(*cells)
    console.print(shown)
    for note in table.notes:
        console.print(note)
    return rows
