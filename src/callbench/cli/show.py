"""``callbench show``: print a run's summary (table, or md/csv/json for papers and dashboards)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from callbench.cli.common import console, print_summary, require_run_folder
from callbench.cli.doctor import preflight_json, print_preflight
from callbench.errors import ConfigError

# The run folder's readers (pydantic records) are imported in the command: every `callbench --help`
# imports this module.


def register(app: typer.Typer) -> None:
    app.command("show", help="Show a run's summary, or a sweep folder's matrix.")(show)


def show(
    run_dir: Annotated[Path, typer.Argument(help="A run folder, or a sweep folder (sweep.json).")],
    format: Annotated[str, typer.Option("--format", "-f", help="table, md, csv or json.")] = "table",
    failures: Annotated[
        bool,
        typer.Option(
            "--failures",
            help="The failures grouped by class, tool, tool server and message signature "
            "(error records apart), with counts and example cases.",
        ),
    ] = False,
    tier: Annotated[
        str | None, typer.Option("--tier", help="With --failures: only this scorer's failures.")
    ] = None,
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            help="With --failures: lines per tier (0: all; default 20 for table/md, all for csv/json).",
        ),
    ] = None,
) -> None:
    from callbench.harness.runfolder import read_summary
    from callbench.harness.sweep.index import is_sweep_folder

    require_run_folder(run_dir)
    if not failures and (tier is not None or top is not None):
        raise ConfigError("--tier and --top go with --failures")
    if failures:  # failure fingerprints (callbench.cli.failures)
        if is_sweep_folder(run_dir):
            raise ConfigError("--failures reads a run folder, not a sweep folder (give one of its runs)")
        from callbench.cli.failures import show_failures

        show_failures(run_dir, format, tier, top)
        return
    if is_sweep_folder(run_dir):
        show_sweep(run_dir, format)
        return
    if format == "table":
        print_summary(read_summary(run_dir), run_dir)
        print_tool_sources(run_dir)
        print_tool_isolation(run_dir)
        print_reviews(run_dir)
        print_preflight(run_dir)  # run --preflight: the endpoint's doctor table, in run.json
        return
    if format == "json":
        import json

        payload = read_summary(run_dir).to_json_dict()
        reviews = _reviews_json(run_dir)
        if reviews is not None:
            payload["reviews"] = reviews  # beside the automatic figures, never instead of them
        preflight = preflight_json(run_dir)
        if preflight is not None:
            payload["preflight"] = preflight
        sources = _tool_sources(run_dir)
        if sources:
            payload["tool_sources"] = [source.model_dump(mode="json") for source in sources]
        isolation = _tool_isolation(run_dir)
        if isolation:
            payload["tool_isolation"] = isolation
        console.print_json(json.dumps(payload, default=str))
        return
    if format not in ("md", "csv"):
        raise ConfigError(f"--format must be table, md, csv or json, not {format!r}")
    from callbench.report.tables import render_show

    typer.echo(render_show(run_dir, format))


def _tool_sources(run_dir: Path) -> list[Any]:
    """The run's manifest (``run.json``'s ``tool_sources``; empty for runs made before it was kept)."""
    from callbench.harness.runfolder import RUN_FILE, read_header

    return list(read_header(run_dir).tool_sources) if (run_dir / RUN_FILE).is_file() else []


def print_tool_sources(run_dir: Path) -> None:
    """One line per tool source: server name@version, protocol, package, tool count, listing hash."""
    for source in _tool_sources(run_dir):
        started = f" ({source.source})" if source.kind == "mcp" else ""  # a suite's label names it
        console.print(
            Text(f"  tool source of {', '.join(source.suites) or '–'}: {source.one_line()}{started}")
        )


def _tool_isolation(run_dir: Path) -> list[dict[str, Any]]:
    """Each live MCP tool source's isolation (``run.json``'s ``options.tool_isolation``)."""
    from callbench.harness.runfolder import RUN_FILE, read_header
    from callbench.harness.tool_isolation import isolation_entries

    return isolation_entries(read_header(run_dir).options) if (run_dir / RUN_FILE).is_file() else []


def print_tool_isolation(run_dir: Path) -> None:
    """One line per live MCP tool source: its isolation, and for ``shared`` that verdicts may depend on
    the order of the cases."""
    from callbench.harness.tool_isolation import isolation_line

    for entry in _tool_isolation(run_dir):
        console.print(Text(f"  {isolation_line(entry)}"))


def _reviews_json(run_dir: Path) -> dict[str, Any] | None:
    from callbench.report.tables import reviews_payload
    from callbench.review.suspects import find_suspects
    from callbench.review.tables import reviewed_rows

    rows = reviewed_rows(run_dir)
    return reviews_payload(rows, find_suspects(run_dir)) if rows else None


TERMINAL_REVIEW_COLUMNS = [
    ("tier", "Tier"),
    ("automatic_accuracy", "Auto"),
    ("reviewed_accuracy", "Reviewed"),
    ("n_reviewed", "Settled"),
    ("n_overturned", "Overturned"),
    ("n_disputed", "Disputed"),
]
"""The columns that fit a terminal; ``--format md|csv|json`` carry every figure."""


def print_reviews(run_dir: Path) -> None:
    """Reviewed accuracy beside automatic accuracy per scorer, when the run folder has reviews, then
    the overturns per reason code and the suspects the reviews point at."""
    from rich.table import Table

    from callbench.report.terminal import percent
    from callbench.review.suspects import find_suspects
    from callbench.review.tables import reviewed_rows

    rows = reviewed_rows(run_dir)
    if not rows:
        return
    table = Table(
        title="Reviewed accuracy (beside the automatic figures; reviews/ in the run folder)", pad_edge=False
    )
    for key, title in TERMINAL_REVIEW_COLUMNS:
        table.add_column(title, no_wrap=key == "tier", justify="left" if key == "tier" else "right")
    for row in rows:
        cells = []
        for key, _title in TERMINAL_REVIEW_COLUMNS:
            value = row.get(key)
            if value is None:
                cells.append("–")
            else:
                cells.append(percent(value) if key.endswith("_accuracy") else str(value))
        table.add_row(*cells)
    console.print(table)
    for row in rows:
        if row["overturns_by_reason"]:
            console.print(Text(f"  overturns of {row['tier']}: {row['overturns_by_reason']}"))
    for suspect in find_suspects(run_dir):
        console.print(Text(f"  suspect: {suspect.text}", style="yellow"))


def show_sweep(folder: Path, format: str) -> None:
    """A sweep folder's matrix: a table per tier (terminal or md), or every figure as csv/json rows."""
    from callbench.report import sweep_matrix

    if format == "table":
        print_matrix(folder)
        return
    renderers = {
        "md": sweep_matrix.render_markdown,
        "csv": sweep_matrix.render_csv,
        "json": sweep_matrix.render_json,
    }
    if format not in renderers:
        raise ConfigError(f"--format must be table, md, csv or json, not {format!r}")
    typer.echo(renderers[format](sweep_matrix.sweep_matrix(folder)), nl=format != "md")


def print_matrix(folder: Path) -> None:
    """The sweep's matrix on the terminal: rows = models, columns = suite · mode, one table per tier."""
    from rich.table import Table

    from callbench.report.sweep_matrix import sweep_matrix, tier_grid, tier_title

    matrix = sweep_matrix(folder)
    if not matrix.rows:
        console.print(Text(f"sweep {matrix.name}: no cell has figures yet"))
    for tier in matrix.tiers():
        header, grid = tier_grid(matrix, tier, sep="\n")
        table = Table(title=f"sweep {matrix.name} · {tier_title(matrix, tier)}", pad_edge=False)
        for i, column in enumerate(header):
            table.add_column(Text(column), justify="left" if i == 0 else "right")
        for row in grid:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
    console.print(
        Text("strict accuracy [95% interval] n=completed cases; errors: infrastructure failures, excluded")
    )
