"""τ²'s commands: ``callbench export tau2 RUN`` and ``callbench import tau2 RESULTS -o RUN_DIR``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from callbench.cli.groups import group


def register_commands(app: typer.Typer) -> None:
    """Add ``export tau2`` and ``import tau2`` to the shared ``export`` and ``import`` groups."""
    group(app, "export").command(
        "tau2",
        help="Write a stored run's tau2 conversations as τ² results files, which `tau2 view` and τ²'s "
        "evaluator read: one file per domain (a run holding several tau2 suites gets one "
        "DOMAIN.json each). Error records are left out; their count is printed on stderr.",
    )(export_tau2)
    group(app, "import").command(
        "tau2",
        help="Read τ² results (a results.json, or a results folder with simulations/) into a new "
        "run folder of the tau2:DOMAIN suite, scored by its scorers (tau2-reward and the strict tiers).",
    )(import_tau2)


def export_tau2(
    run_dir: Annotated[Path, typer.Argument(help="A run folder holding one or more tau2 suites.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="A .json file (a run of one tau2 suite), or a folder receiving DOMAIN.json per domain "
            "(default RUN_DIR/tau2/).",
        ),
    ] = None,
) -> None:
    from callbench.benchmarks.tau2.runs import export_run

    exported = export_run(run_dir, out)
    for path in exported.files.values():
        typer.echo(path)
    typer.echo(
        f"callbench: {exported.left_out} error record(s) left out (τ² results hold finished "
        "conversations only)",
        err=True,
    )


def import_tau2(
    results: Annotated[
        Path,
        typer.Argument(help="A τ² results.json, or a τ² results folder (results.json and simulations/)."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The run folder to write (must not hold a run).")],
) -> None:
    from callbench.benchmarks.tau2.runs import import_results, unknown_line

    report = import_results(results, out)
    if report.unknown:
        domain = report.suite.removeprefix("tau2:")
        typer.echo(f"callbench: warning: {unknown_line(results, report.unknown, domain)}", err=True)
    typer.echo(
        f"imported {report.records} simulation(s) of {report.suite} into {out} "
        f"({report.errors} error record(s))"
    )
    for name, (passed, scored) in report.passed.items():
        typer.echo(f"  {name}: {passed} of {scored} passed")
    agree, compared = report.agreement
    if compared:
        typer.echo(
            f"  tau2-reward equals the reward the file recorded on {agree} of {compared} simulation(s)"
        )
    typer.echo(f"show it with: callbench show {out}")
