"""``callbench export``: write a run in another tool's format (``export bfcl RUN_DIR``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

export_app = typer.Typer(help="Write a stored run in another benchmark tool's format.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")


@export_app.command("bfcl", help="Write BFCL FC-format result files so `bfcl evaluate` can score the run.")
def export_bfcl(
    run_dir: Annotated[Path, typer.Argument(help="A run folder of the bfcl suite.")],
    out: Annotated[Path | None, typer.Option("--out", help="Result folder (default RUN_DIR/bfcl/result).")] = None,
    model: Annotated[str, typer.Option("--model", help="A model name registered in BFCL (a label only).")] =
        "gpt-4o-2024-11-20-FC",
    name_convention: Annotated[str | None, typer.Option(
        "--name-convention", help="dotted or underscored function names; only for a --model not registered in "
        "the installed bfcl-eval (a registered model's BFCL config decides).")] = None,
) -> None:
    from callbench.interop.bfcl_cli import export_bfcl_run

    export_bfcl_run(run_dir, out or run_dir / "bfcl" / "result", model, name_convention)
