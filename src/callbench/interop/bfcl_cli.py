"""Command-line glue for BFCL interchange (``score --from-bfcl-results``, ``export bfcl``)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from callbench.errors import UserError
from callbench.scoring.bfcl_options import BfclOptions


def _pct(value: float) -> str:
    return f"{100 * value:.2f}%"


def score_bfcl_results(folder: Path, data: Path | None = None, mode: str = "faithful") -> dict:
    """Score BFCL result files and print per-model, per-category accuracy (BFCL's method)."""
    from callbench.interop.bfcl_results import score_results

    if mode not in ("faithful", "improved"):
        raise UserError(f"--bfcl-mode must be faithful or improved, not {mode!r}")
    report = score_results(folder, data=data, options=BfclOptions(mode=mode))  # type: ignore[arg-type]
    console = Console()
    for result in report["files"]:
        if result.total and result.text_results > result.total / 2 and "relevance" not in result.category:
            console.print(f"warning: {result.path}: {result.text_results} of {result.total} results are plain text; "
                          "only FC-format files ([{name: \"<JSON>\"}]) can be scored, not prompt-mode output")
    for model, figures in report["models"].items():
        table = Table(title=f"BFCL ({mode}) - {model}")
        for column in ("category", "accuracy", "correct", "total"):
            table.add_column(column, justify="left" if column == "category" else "right")
        for category, row in figures["categories"].items():
            table.add_row(category, _pct(row["accuracy"]), str(row["correct_count"]), str(row["total_count"]))
        for name, value in figures["summary"].items():
            if name != "missing":
                table.add_row(f"[bold]{name}[/bold]", _pct(value), "", "")
        console.print(table)
        if "faithful_vs_improved" in figures:
            changed = figures["faithful_vs_improved"]
            console.print(f"{len(changed)} entries differ from the faithful verdict"
                          + (": " + ", ".join(item["id"] for item in changed[:20]) if changed else ""))
        if figures["summary"]["missing"]:
            console.print(f"missing categories (count as 0 in summaries): {', '.join(figures['summary']['missing'])}")
    return report


def export_bfcl_run(run_dir: Path, out: Path, model: str, underscore_to_dot: bool) -> list[Path]:
    """Write a run's BFCL records as BFCL result files and print where they went."""
    from callbench.interop.bfcl_export import export_run

    written = export_run(run_dir, out, model, underscore_to_dot)
    for path in written:
        print(path)
    print(f"score them with: BFCL_PROJECT_ROOT={out.parent} bfcl evaluate --model {model} "
          f"--test-category <categories> --partial-eval")
    return written
