"""``callbench plugins``: every installed plugin, its version, and what it registers."""

from __future__ import annotations

import typer
from rich.table import Table

from callbench.catalog import catalog
from callbench.cli.common import console


def register(app: typer.Typer) -> None:
    app.command(
        "plugins", help="List installed plugins (entry points), their versions and what they register."
    )(plugins)


def plugins() -> None:
    """One row per ``callbench`` entry point: its distribution and version, what it registered
    (suites, providers, executors, scorers, command sets), or why it was skipped."""
    table = Table(title="callbench plugins")
    for column in ("distribution", "version", "entry point", "registers"):
        table.add_column(column)
    for plugin in catalog().plugins:
        if plugin.error is not None:
            what = f"[red]skipped: {plugin.error}[/red]"
        else:
            what = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in plugin.provides.items()) or "-"
        table.add_row(plugin.distribution or "?", plugin.version or "-", plugin.entry_point, what)
    console.print(table)
