"""Interop commands: ``callbench export inspect|atif|evaleval|parquet RUN`` and
``callbench import inspect LOG -o RUN_DIR`` (docs/interop.md; the work is in callbench.interop)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from callbench.cli.groups import group

RunArg = Annotated[Path, typer.Argument(help="A run folder (run.json, records.jsonl).")]


def register(app: typer.Typer) -> None:
    """Add the interop formats to the shared ``export`` and ``import`` groups."""
    export = group(app, "export")
    export.command(
        "inspect",
        help="Write a run as an inspect_ai .eval log (one sample per case and trial, one scorer per "
        "tier, diagnostics apart), for `inspect view` and inspect's readers.",
    )(export_inspect)
    export.command(
        "atif",
        help="Write a run as ATIF v1.4 agent trajectories, one file per case and trial.",
    )(export_atif)
    export.command(
        "evaleval",
        help="Write a run's results as Every Eval Ever (EvalEval) records, schema v0.2.0, laid out as "
        "data/BENCHMARK/DEVELOPER/MODEL/UUID.json.",
    )(export_evaleval)
    export.command(
        "parquet",
        help="Write a run's runs, records and verdicts tables as parquet files (the `parquet` extra).",
    )(export_parquet)
    group(app, "import").command(
        "inspect",
        help="Read an inspect_ai log of a tool-calling task callbench knows (inspect_evals' bfcl, or a "
        "log `export inspect` wrote) into a new run folder, scored by the suite's scorers.",
    )(import_inspect)


def export_inspect(
    run_dir: RunArg,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="The .eval file (default RUN_DIR/inspect/RUN_ID.eval).")
    ] = None,
) -> None:
    from callbench.interop.inspect_log import export_inspect as run_export

    done = run_export(run_dir, out)
    typer.echo(done.path)
    typer.echo(
        f"{done.samples} sample(s) ({done.errors} error record(s)), scorers: {', '.join(done.scorers)}",
        err=True,
    )


def export_atif(
    run_dir: RunArg,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder (default RUN_DIR/atif).")] = None,
) -> None:
    from callbench.interop.atif import export_atif as run_export

    done = run_export(run_dir, out)
    typer.echo(done.folder)
    typer.echo(f"{len(done.files)} trajectory file(s), {done.errors} of them of error records", err=True)


def export_evaleval(
    run_dir: RunArg,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder (default RUN_DIR/evaleval).")
    ] = None,
    organization: Annotated[
        str, typer.Option("--organization", help="Who ran the evaluation (source_organization_name).")
    ] = "unknown",
    relationship: Annotated[
        str,
        typer.Option(
            "--relationship",
            help="Evaluator's relationship to the model: first_party, third_party, collaborative, other.",
        ),
    ] = "third_party",
) -> None:
    from callbench.interop.evaleval import export_evaleval as run_export

    done = run_export(run_dir, out, organization=organization, relationship=relationship)
    for path in done.files:
        typer.echo(path)


def export_parquet(
    run_dir: RunArg,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder (default RUN_DIR/parquet).")] = None,
) -> None:
    from callbench.interop.frames import export_parquet as run_export

    done = run_export(run_dir, out)
    for name, path in done.files.items():
        typer.echo(f"{path}  ({done.rows[name]} row(s))")


def import_inspect(
    log: Annotated[Path, typer.Argument(help="An inspect log (.eval or .json).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The run folder to write (must not hold a run).")],
) -> None:
    from callbench.interop.inspect_import import import_inspect as run_import

    report = run_import(log, out)
    for reason, n in report.skipped.items():
        typer.echo(f"callbench: warning: {log}: {n} sample(s) skipped: {reason}", err=True)
    typer.echo(
        f"imported {report.records} sample(s) of {report.task} into {out} as {', '.join(report.suites)} "
        f"({report.errors} error record(s))"
    )
    for name, (passed, scored) in report.passed.items():
        typer.echo(f"  {name}: {passed} of {scored} passed")
    if report.agreement is not None:
        agree, compared = report.agreement
        typer.echo(f"  the log's own score agrees with callbench's on {agree} of {compared} sample(s)")
    typer.echo(f"show it with: callbench show {out}")
