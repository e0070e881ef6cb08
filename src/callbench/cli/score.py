"""``callbench score``: re-score a stored run offline (no model call)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from callbench.cli.common import print_summary, require_run_folder


def register(app: typer.Typer) -> None:
    app.command("score", help="Re-score a stored run's traces under any tier; no model is called.")(score)


def score(
    run_dir: Annotated[
        Path | None, typer.Argument(help="A run folder (holding run.json and records.jsonl).")
    ] = None,
    tier: Annotated[
        list[str] | None, typer.Option("--tier", "-t", help="Scorer/tier name (repeatable) or 'all'.")
    ] = None,
    data: Annotated[Path | None, typer.Option("--data", help="Data path, if it moved since the run.")] = None,
) -> None:
    if run_dir is None:
        raise typer.BadParameter("give RUN_DIR, a run folder")
    require_run_folder(run_dir)
    from callbench.harness.rescore import rescore

    summary = rescore(run_dir, tuple(tier or ()), data=data)
    print_summary(summary, run_dir, only=tier or ())  # only the asked tiers
