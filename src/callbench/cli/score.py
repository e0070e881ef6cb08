"""``callbench score``: re-score a stored run offline (no model call)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from callbench.cli.common import print_summary


def register(app: typer.Typer) -> None:
    app.command("score", help="Re-score a stored run's traces under any tier; no model is called.")(score)


def score(
    run_dir: Annotated[Optional[Path], typer.Argument(help="A run folder (holding run.json and records.jsonl).")] = None,
    tier: Annotated[Optional[list[str]], typer.Option("--tier", "-t", help="Scorer/tier name (repeatable) or 'all'.")] = None,
    data: Annotated[Optional[Path], typer.Option("--data", help="Data path, if it moved since the run.")] = None,
    from_bfcl_results: Annotated[Optional[Path], typer.Option(
        "--from-bfcl-results", help="Score BFCL result files (FC format) with callbench's BFCL checker instead.")] = None,
    bfcl_mode: Annotated[str, typer.Option("--bfcl-mode", help="With --from-bfcl-results: faithful or improved.")] = "faithful",
    name_convention: Annotated[Optional[str], typer.Option(
        "--name-convention", help="With --from-bfcl-results: dotted or underscored function names for models "
        "not registered in the installed bfcl-eval.")] = None,
    score_dir: Annotated[Optional[Path], typer.Option(
        "--score-dir", help="With --from-bfcl-results: where per-entry score files and records go "
        "(default: score-callbench[-improved] beside the result dir).")] = None,
) -> None:
    if from_bfcl_results is not None:
        from callbench.interop.bfcl_cli import score_bfcl_results

        score_bfcl_results(from_bfcl_results, data=data, mode=bfcl_mode, name_convention=name_convention,
                           score_dir=score_dir)
        return
    if run_dir is None:
        raise typer.BadParameter("give RUN_DIR (or --from-bfcl-results DIR)")
    from callbench.harness.rescore import rescore

    summary = rescore(run_dir, tuple(tier or ()), data=data)
    print_summary(summary, run_dir)
