"""``callbench import codexomics SUITE.json [SUITE2.json] --registry DIR -o OUT``."""

from __future__ import annotations

from pathlib import Path

import typer

from callbench.cli.groups import group


def register_commands(app: typer.Typer) -> None:
    """Add ``import codexomics`` to the shared ``import`` group."""
    group(app, "import").command("codexomics")(import_codexomics_cmd)


def import_codexomics_cmd(
    suites: list[Path] = typer.Argument(..., help="Suite JSON dumps (automatic_simple.json, ...)."),
    registry: Path = typer.Option(
        ..., "--registry", help="The app's tools_registry folder (YAML contracts)."
    ),
    out: Path = typer.Option(Path("codexomics-suite"), "-o", "--out", help="Output suite folder."),
    name: str = typer.Option("codexomics", "--name", help="Suite name written to suite.yaml."),
    resolve_refs: bool = typer.Option(
        False,
        "--resolve-refs/--faithful-refs",
        help="Check {tool.path} references against real results ($ref) where the result schema has the "
        "path; default: any concrete value, as the original scores.",
    ),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Also print info-level findings."),
) -> None:
    """Import CodeXomics suites and tool contracts as a runnable callbench suite folder."""
    from callbench.benchmarks.codexomics.cases import CaseOptions
    from callbench.benchmarks.codexomics.suite import import_codexomics
    from callbench.benchmarks.codexomics.write import REPORT_NAME, write_suite
    from callbench.plugin import UserError  # here: every CLI start imports this module

    for path in suites:
        if not path.is_file():
            raise UserError(f"{path}: suite JSON file not found")
    result = import_codexomics(suites, registry, options=CaseOptions(resolve_refs=resolve_refs))
    folder = write_suite(result, out, name=name)
    for problem in result.problems:
        if verbose or problem.severity != "info":
            typer.echo(problem.line())
    for suite_id, info in result.suites.items():
        typer.echo(f"{suite_id}: {info['imported']} of {info['found']} cases imported")
    typer.echo(
        f"{len(result.contracts)} contracts; problems: {result.count('error')} errors, "
        f"{result.count('warning')} warnings, {result.count('info')} info (all in {folder / REPORT_NAME})"
    )
    typer.echo(f"run it with: callbench run --suite {folder}")
