"""BFCL's commands: ``callbench export bfcl RUN_DIR``, ``callbench bfcl score-results RESULT_DIR`` and
``callbench bfcl overall RUN_DIR...``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from callbench.cli.groups import group

bfcl_app = typer.Typer(
    help="BFCL interchange: score BFCL result files with callbench's checker.", no_args_is_help=True
)


def register_commands(app: typer.Typer) -> None:
    """Add ``export bfcl`` to the shared ``export`` group and the ``bfcl`` group."""
    group(app, "export").command(
        "bfcl", help="Write BFCL FC-format result files so `bfcl evaluate` can score the run."
    )(export_bfcl)
    app.add_typer(bfcl_app, name="bfcl")


def export_bfcl(
    run_dir: Annotated[Path, typer.Argument(help="A run folder of the bfcl suite.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Result folder (default RUN_DIR/bfcl/result).")
    ] = None,
    model: Annotated[
        str, typer.Option("--model", help="A model name registered in BFCL (a label only).")
    ] = "gpt-4o-2024-11-20-FC",
    name_convention: Annotated[
        str | None,
        typer.Option(
            "--name-convention",
            help="dotted or underscored function names; only for a --model not registered in "
            "the installed bfcl-eval (a registered model's BFCL config decides).",
        ),
    ] = None,
) -> None:
    from callbench.benchmarks.bfcl.interop import export_bfcl_run

    export_bfcl_run(run_dir, out or run_dir / "bfcl" / "result", model, name_convention)


@bfcl_app.command(
    "score-results",
    help="Score BFCL result files (FC format) with callbench's BFCL checker; "
    "writes BFCL-style score files and a callbench run folder per model.",
)
def score_results(
    result_dir: Annotated[
        Path, typer.Argument(help="BFCL result folder: result/<model>/[<group>/]BFCL_v4_*.json.")
    ],
    data: Annotated[
        Path | None, typer.Option("--data", help="BFCL data folder (default: the installed bfcl-eval).")
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="faithful or improved.")] = "faithful",
    name_convention: Annotated[
        str | None,
        typer.Option(
            "--name-convention",
            help="dotted or underscored function names for models not registered in the installed bfcl-eval.",
        ),
    ] = None,
    score_dir: Annotated[
        Path | None,
        typer.Option(
            "--score-dir",
            help="Where per-entry score files and records go "
            "(default: score-callbench[-improved] beside the result dir).",
        ),
    ] = None,
) -> None:
    from callbench.benchmarks.bfcl.interop import score_bfcl_results

    score_bfcl_results(result_dir, data=data, mode=mode, name_convention=name_convention, score_dir=score_dir)


@bfcl_app.command(
    "overall",
    help="BFCL's overall score (its v4 weighting) per model from the bfcl figures of run folders; "
    "categories are pooled per model, checker mode and harness mode, missing ones named.",
)
def overall(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run folders of the bfcl suite (or of `bfcl score-results`).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    from callbench.benchmarks.bfcl.overall_runs import print_overall

    print_overall(run_dirs, as_json=as_json)
