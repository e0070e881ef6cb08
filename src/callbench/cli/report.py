"""``callbench report RUN_DIR [RUN_DIR ...] [-o FILE] [--format html|md|csv]``: the self-contained
dashboard, or its tables as Markdown or CSV for papers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""
    app.command("report")(report_cmd)


FORMAT_HELP = (
    "html (default): the dashboard page. md: every overview and breakdown table as Markdown. "
    "csv: each table as a CSV block headed by '# <title>'; when -o names a folder (an existing "
    "one, or a path ending in '/'), one <title>.csv file per table instead."
)


def report_cmd(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories (several: leaderboard + paired comparisons) or sweep folders (their cells)."
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option(
            "-o", "--output", help="File to write (html: report.html; md/csv: stdout when not given)."
        ),
    ] = None,  # noqa: UP045 (typer needs Optional)
    title: Annotated[str, typer.Option("--title", help="Page title.")] = "callbench report",
    fmt: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)] = "html",
) -> None:
    """Write one HTML file that opens from disk with no network: figures with 95% intervals,
    charts, a filterable case table with round-by-round traces, and comparisons between runs.
    With --format md or csv, write the report's tables instead (for papers)."""
    from callbench.cli.common import require_run_folder
    from callbench.report.table_export import check_format

    check_format(fmt)  # a wrong format fails before any folder is read
    for run_dir in run_dirs:
        require_run_folder(run_dir)
    run_dirs = expand_sweeps(run_dirs)
    if fmt == "html":
        from callbench.report.html import write_report

        out = write_report(run_dirs, Path(output or "report.html"), title)
        typer.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(run_dirs)} run(s))")
        return
    _write_tables(run_dirs, fmt, output)


def _write_tables(run_dirs: list[Path], fmt: str, output: str | None) -> None:
    from callbench.report.table_export import load_runs, render_tables, report_tables, write_csv_folder

    # The raw text decides "a folder": Path() would drop the trailing slash.
    if fmt == "csv" and output is not None and (Path(output).is_dir() or output.endswith(("/", "\\"))):
        files = write_csv_folder(report_tables(load_runs(run_dirs)), Path(output))
        typer.echo(f"wrote {len(files)} CSV file(s) to {output}")
        return
    text = render_tables(run_dirs, fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {path}")


def expand_sweeps(paths: list[Path]) -> list[Path]:
    """Run folders as given; a sweep folder (``sweep.json``) stands for its cells' run folders. The
    leaderboard ranks within each tier and harness mode, so cells of different modes are never pooled."""
    from callbench.errors import UserError
    from callbench.harness.sweep.index import cell_folders, is_sweep_folder

    out: list[Path] = []
    for path in paths:
        if not is_sweep_folder(path):
            out.append(path)
            continue
        cells = cell_folders(path)
        if not cells:
            raise UserError(f"{path}: no cell of this sweep has run yet (callbench sweep --resume {path})")
        out += cells
    return out
