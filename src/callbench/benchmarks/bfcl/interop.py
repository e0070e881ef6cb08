"""Command-line glue for BFCL interchange (``bfcl score-results``, ``export bfcl``)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from callbench.benchmarks.bfcl.options import BfclOptions
from callbench.benchmarks.bfcl.overall import covers_any, overall_score
from callbench.plugin import UserError


def _pct(value: float) -> str:
    return f"{100 * value:.2f}%"


def default_score_dir(folder: Path, mode: str) -> Path:
    """Beside the result dir, as ``bfcl evaluate`` puts ``score/`` beside ``result/`` (never into it)."""
    from callbench.benchmarks.bfcl.results import GROUP_FOLDERS, is_model_folder

    if folder.name in GROUP_FOLDERS and is_model_folder(folder.parent):
        folder = folder.parent
    result_dir = folder.parent if folder.is_dir() and is_model_folder(folder) else folder
    return result_dir.parent / ("score-callbench" + ("-improved" if mode == "improved" else ""))


def score_bfcl_results(
    folder: Path,
    data: Path | None = None,
    mode: str = "faithful",
    name_convention: str | None = None,
    score_dir: Path | None = None,
) -> dict:
    """Score BFCL result files, print per-model, per-category accuracy (BFCL's method) and write
    per-entry score files and records under ``score_dir``."""
    from callbench.benchmarks.bfcl.outputs import write_runs, write_score_files
    from callbench.benchmarks.bfcl.results import score_results

    if mode not in ("faithful", "improved"):
        raise UserError(f"--mode must be faithful or improved, not {mode!r}")
    report = score_results(
        folder,
        data=data,
        options=BfclOptions(mode=mode),  # type: ignore[arg-type]
        name_convention=name_convention,
    )
    console = Console()
    for result in report["files"]:
        if result.total and result.text_results > result.total / 2 and "relevance" not in result.category:
            console.print(
                f"warning: {result.path}: {result.text_results} of {result.total} results are plain text; "
                'only FC-format files ([{name: "<JSON>"}]) can be scored, not prompt-mode output'
            )
    for model, figures in report["models"].items():
        _print_model(console, model, figures, mode)
    out = score_dir or default_score_dir(folder, mode)
    write_score_files(report["files"], out)
    write_runs(report, out, folder, data)
    console.print(f"per-entry score files and records: {out}/<model>/")
    return report


def _print_model(console: Console, model: str, figures: dict, mode: str) -> None:
    convention = figures["name_convention"]
    names = {True: "underscored", False: "dotted", None: "n/a"}[convention["underscore_to_dot"]]
    table = Table(title=f"BFCL ({mode}) - {model} (function names: {names}, from {convention['source']})")
    for column in ("category", "accuracy", "correct", "total"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for category, row in figures["categories"].items():
        table.add_row(category, _pct(row["accuracy"]), str(row["correct_count"]), str(row["total_count"]))
    for name, value in figures["summary"].items():
        if name != "missing":
            table.add_row(f"[bold]{name}[/bold]", _pct(value), "", "")
    if covers_any(figures["categories"]):
        result = overall_score(figures["categories"])
        missing = len(result["missing"])
        label = f"overall (BFCL v4; {missing} missing)" if missing else "overall (BFCL v4)"
        table.add_row(f"[bold]{label}[/bold]", _pct(result["overall"]), "", "")
    console.print(table)
    if "faithful_vs_improved" in figures:
        changed = figures["faithful_vs_improved"]
        console.print(
            f"{len(changed)} entries differ from the faithful verdict"
            + (": " + ", ".join(item["id"] for item in changed[:20]) if changed else "")
        )
    if figures["summary"]["missing"]:
        console.print(
            f"missing categories (count as 0 in summaries): {', '.join(figures['summary']['missing'])}"
        )


def export_bfcl_run(run_dir: Path, out: Path, model: str, name_convention: str | None) -> list[Path]:
    """Write a run's BFCL records as BFCL result files and print where they went.

    The name convention is the model's BFCL config when ``model`` is registered in the installed
    bfcl-eval (a conflicting ``name_convention`` is refused), else ``name_convention``.
    """
    from callbench.benchmarks.bfcl.export import export_run
    from callbench.benchmarks.bfcl.models import check_convention, convention_for, model_for_folder

    explicit = check_convention(name_convention)
    convention = convention_for(model, explicit)
    if (
        model_for_folder(model) is not None
        and explicit is not None
        and (explicit == "underscored") != convention.underscore_to_dot
    ):
        expected = "underscored" if convention.underscore_to_dot else "dotted"
        raise UserError(
            f"--name-convention {explicit} contradicts {model}'s BFCL config ({expected} names); "
            "drop the option or choose another --model"
        )
    written = export_run(run_dir, out, model, convention.underscore_to_dot)
    for path in written:
        print(path)
    registered = model_for_folder(model)
    if any(path.parent.name == "format_sensitivity" for path in written) and (
        registered is None or registered.is_fc_model
    ):
        print(
            "note: format_sensitivity results are prompt-mode answer texts; bfcl evaluate scores them only "
            "under a registered prompt-mode model (e.g. --model gpt-4o-2024-11-20)"
        )
    print(
        f"score them with: BFCL_PROJECT_ROOT={out.parent} bfcl evaluate --model {model} "
        f"--test-category <categories> --partial-eval"
    )
    return written
