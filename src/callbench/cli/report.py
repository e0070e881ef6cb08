"""``callbench report RUN_DIR [RUN_DIR ...] -o report.html``: the self-contained dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""
    app.command("report")(report_cmd)


def report_cmd(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run directories (several: leaderboard + paired comparisons).")
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="HTML file to write.")] = Path("report.html"),
    title: Annotated[str, typer.Option("--title", help="Page title.")] = "callbench report",
) -> None:
    """Write one HTML file that opens from disk with no network: figures with 95% intervals,
    charts, a filterable case table with round-by-round traces, and comparisons between runs."""
    from callbench.cli.common import require_run_folder
    from callbench.report.html import write_report

    for run_dir in run_dirs:
        require_run_folder(run_dir)
    out = write_report(run_dirs, output, title)
    typer.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(run_dirs)} run(s))")
