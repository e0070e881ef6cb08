"""A sweep's matrix: rows = the sweep's models, columns = suite × harness mode, one table per tier.

Each cell is that model's strict accuracy on that suite in that mode, with its n and 95% interval,
read from the cell run's ``summary.json`` (the stratum's ``by_suite`` figures; never recomputed),
and the suite's error records counted apart. Diagnostic scorers get their own tables, labelled so.
Modes are columns of their own: a figure never pools two modes (or two tiers).
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbench.harness.runfolder import RUN_FILE, SUMMARY_FILE, read_header, read_summary
from callbench.harness.sweep.index import latest_states, read_index
from callbench.report.terminal import percent, tenths
from callbench.types.verdict import TIERS

ROW_FIELDS = [
    "cell",
    "label",
    "model",
    "harness_mode",
    "suite",
    "tier",
    "diagnostic",
    "status",
    "n",
    "passed",
    "accuracy",
    "ci_low",
    "ci_high",
    "errors",
]


@dataclass
class Matrix:
    """A sweep's figures as long rows (one per cell, suite and tier), with its layout."""

    name: str
    labels: list[str]
    columns: list[tuple[str, str]]
    """(suite, harness mode) pairs, in the sweep's order."""
    rows: list[dict[str, Any]]
    status: dict[tuple[str, str], str]
    """(label, mode) -> the cell's status, for cells without figures."""

    def tiers(self) -> list[str]:
        """Strict tiers (strictest first, then other pass-criterion scorers), then the diagnostic ones."""
        found = {row["tier"]: row["diagnostic"] for row in self.rows}
        strict = [t for t in TIERS if t in found and not found[t]]
        strict += sorted(t for t in found if not found[t] and t not in TIERS)
        return strict + sorted(t for t in found if found[t])


def sweep_matrix(folder: Path) -> Matrix:
    """Read every cell's figures; cells that have not run (or failed) only carry their status."""
    index = read_index(folder)
    labels = list(dict.fromkeys(entry["label"] for entry in index["cells"]))
    columns: list[tuple[str, str]] = []
    rows: list[dict[str, Any]] = []
    status: dict[tuple[str, str], str] = {}
    for entry in index["cells"]:
        run_dir = folder / str(entry.get("folder") or "")
        status[(entry["label"], entry["mode"])] = str(entry.get("status"))
        suites = _suite_names(run_dir, entry)
        for suite in suites:
            if (suite, entry["mode"]) not in columns:
                columns.append((suite, entry["mode"]))
        if (run_dir / SUMMARY_FILE).is_file():
            rows += _cell_rows(run_dir, entry, suites)
    return Matrix(str(index.get("name") or folder.name), labels, columns, rows, status)


def _suite_names(run_dir: Path, entry: dict[str, Any]) -> list[str]:
    """The run's suite names (``run.json``), or the specs the sweep gave when it has not started."""
    if (run_dir / RUN_FILE).is_file():
        return [suite.name for suite in read_header(run_dir).suites]
    return list(entry.get("suites") or [])


def _cell_rows(run_dir: Path, entry: dict[str, Any], suites: list[str]) -> list[dict[str, Any]]:
    summary = read_summary(run_dir)
    diagnostic = {name for name, figures in summary.tiers.items() if figures.diagnostic}
    errors = _errors_by_suite(run_dir)
    rows = []
    for stratum in summary.statistics.strata if summary.statistics else []:
        for suite in suites:
            group = stratum.by_suite.get(suite)
            rows.append(
                {
                    "cell": entry["id"],
                    "label": entry["label"],
                    "model": summary.model,
                    "harness_mode": stratum.harness_mode,
                    "suite": suite,
                    "tier": stratum.tier,
                    "diagnostic": stratum.tier in diagnostic,
                    "status": entry.get("status"),
                    "n": group.n if group else 0,
                    "passed": group.passed if group else 0,
                    "accuracy": group.accuracy.estimate if group and group.n else None,
                    "ci_low": group.accuracy.low if group and group.n else None,
                    "ci_high": group.accuracy.high if group and group.n else None,
                    "errors": errors.get(suite, 0),
                }
            )
    return rows


def _errors_by_suite(run_dir: Path) -> dict[str, int]:
    """Error records per suite among the latest record of each (case, trial)."""
    counts: dict[str, int] = defaultdict(int)
    for suite, state in latest_states(run_dir).values():
        if state == "error":
            counts[suite] += 1
    return dict(counts)


def cell_text(row: dict[str, Any] | None, status: str | None, sep: str = " ") -> str:
    """``83.3% n=12 [60.1–94.2]`` (with ``· 2 errors`` when some records errored); ``n/a`` when no
    case of the suite applies to the tier; the cell's status when it has no figures (``–``: no cell)."""
    if row is None:
        return status if status and status != "done" else "–"
    if not row["n"]:
        text = "n/a"
    else:
        interval = f"[{tenths(100 * row['ci_low'])}–{percent(row['ci_high'])}]"
        text = f"{percent(row['accuracy'])} n={row['n']}{sep}{interval}"
    if row["errors"]:
        text += f"{sep}· {row['errors']} error{'s' if row['errors'] != 1 else ''}"
    return text


def tier_grid(matrix: Matrix, tier: str, sep: str = " ") -> tuple[list[str], list[list[str]]]:
    """One tier's grid: the header (``model``, then ``suite · mode`` per column) and a row per model;
    ``sep`` joins the parts of a cell (a newline on the terminal)."""
    found = {(r["label"], r["suite"], r["harness_mode"]): r for r in matrix.rows if r["tier"] == tier}
    join = " · " if sep == " " else sep
    header = ["model", *(f"{suite}{join}{mode}" for suite, mode in matrix.columns)]
    grid = []
    for label in matrix.labels:
        cells = [
            cell_text(found.get((label, suite, mode)), matrix.status.get((label, mode)), sep)
            for suite, mode in matrix.columns
        ]
        grid.append([label, *cells])
    return header, grid


def tier_title(matrix: Matrix, tier: str) -> str:
    diagnostic = any(r["diagnostic"] for r in matrix.rows if r["tier"] == tier)
    return f"{tier} (diagnostic: shown, never a pass criterion)" if diagnostic else tier


def render_markdown(matrix: Matrix) -> str:
    """One Markdown table per tier."""
    parts = [f"## Sweep {matrix.name}\n"]
    if not matrix.rows:
        parts.append("No cell has figures yet.\n")
    for tier in matrix.tiers():
        header, grid = tier_grid(matrix, tier)
        lines = [f"### {tier_title(matrix, tier)}", "", "| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in grid]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def render_csv(matrix: Matrix) -> str:
    """Every figure as a long row (cell, suite, tier)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ROW_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in matrix.rows:
        writer.writerow(row)
    return out.getvalue()


def render_json(matrix: Matrix) -> str:
    payload = {
        "sweep": matrix.name,
        "columns": [{"suite": s, "harness_mode": m} for s, m in matrix.columns],
        "cells": [
            {"label": label, "harness_mode": mode, "status": st}
            for (label, mode), st in matrix.status.items()
        ],
        "rows": matrix.rows,
    }
    return json.dumps(payload, indent=2)
