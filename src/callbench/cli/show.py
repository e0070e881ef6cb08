"""``callbench show``: print a run's summary (table, or md/csv/json for papers and dashboards)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from callbench.cli.common import console, print_summary, require_run_folder
from callbench.errors import ConfigError
from callbench.harness.runfolder import read_summary


def register(app: typer.Typer) -> None:
    app.command("show", help="Show a run's summary.")(show)


def show(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    format: Annotated[str, typer.Option("--format", "-f", help="table, md, csv or json.")] = "table",
) -> None:
    require_run_folder(run_dir)
    if format == "table":
        print_summary(read_summary(run_dir), run_dir)
        return
    if format == "json":
        import json

        console.print_json(json.dumps(read_summary(run_dir).to_json_dict()))
        return
    if format not in ("md", "csv"):
        raise ConfigError(f"--format must be table, md, csv or json, not {format!r}")
    from callbench.report.tables import render_show

    typer.echo(render_show(run_dir, format))
