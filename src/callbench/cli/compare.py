"""``callbench compare RUN_DIR...``: leaderboard and paired comparisons as Markdown or CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the ``compare`` command to ``app``."""
    app.command("compare")(compare_cmd)


def compare_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to rank and compare.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="md or csv.")] = "md",
    pairs: Annotated[
        bool, typer.Option("--pairs/--no-pairs", help="Add paired comparisons (bootstrap CI, McNemar p).")
    ] = True,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to a file instead of stdout.")
    ] = None,  # noqa: UP045 (typer needs Optional)
) -> None:
    """Rank runs by strict accuracy per tier and harness mode (never pooled), with 95% intervals;
    pairs of runs are compared on the cases both completed. A pair whose tool sources differ (server
    version, package, a tool's schema) is warned about on stderr (callbench manifest diff)."""
    from callbench.cli.common import require_run_folder
    from callbench.report.tables import render_compare

    for run_dir in run_dirs:
        require_run_folder(run_dir)
    text = render_compare(run_dirs, fmt, pairs=pairs)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")
    from callbench.cli.manifest import manifest_warnings

    for line in manifest_warnings(run_dirs):
        typer.echo(f"callbench: warning: {line}", err=True)
