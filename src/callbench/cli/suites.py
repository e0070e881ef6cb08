"""``callbench suites``: list the suites this installation can load."""

from __future__ import annotations

import typer
from rich.table import Table

from callbench.catalog import catalog
from callbench.cli.common import console, shorten
from callbench.errors import UserError

NEEDS = {
    "dag": "generated on the fly: dag:n_core=5,10;depth=2;seeds=3",
    "bfcl": "bfcl:<category>; data from the installed bfcl-eval package or --data DIR",
    "complexfuncbench": "needs --data ComplexFuncBench.jsonl (or complexfuncbench:fixture)",
    "codexomics": (
        "codexomics[:simple|complex]; needs --data DIR with the app's suite dumps and tools_registry/"
    ),
}


def register(app: typer.Typer) -> None:
    app.command("suites", help="List available suites.")(suites)


def suites() -> None:
    from callbench.suites.resolve import load_suite

    table = Table(title="callbench suites")
    for column in ("suite", "cases", "tools", "notes"):
        table.add_column(column)
    for name in catalog().suites.names():
        if name in NEEDS:
            table.add_row(name, "-", "-", NEEDS[name])
            continue
        try:
            suite = load_suite(name)
        except UserError as exc:
            table.add_row(name, "-", "-", f"unavailable: {exc}")
            continue
        table.add_row(name, str(len(suite.cases)), str(len(suite.registry)), shorten(suite.description, 70))
    console.print(table)
