"""``callbench sweep SWEEP.yaml``: run a matrix of models × harness modes over suites (docs/sweeps.md).

Every cell is an ordinary run in ``<sweep>/cells/<cell-id>/``; ``sweep.json`` indexes them.
``--resume DIR`` finishes what is missing. ``callbench show DIR`` prints the matrix and
``callbench report DIR`` ranks the cells.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from callbench.errors import ConfigError, UserError

if TYPE_CHECKING:
    from callbench.harness.config import ProgressMode
    from callbench.harness.sweep.spec import Cell

# The sweep runner (the engine, pydantic) is imported in the command: every `callbench --help`
# imports this module.

DEFAULT_ROOT = Path("runs") / "sweeps"


def register(app: typer.Typer) -> None:
    app.command(
        "sweep", help="Run a sweep file: models × harness modes over suites, one run folder per cell."
    )(sweep)


def sweep(
    sweep_file: Annotated[
        Path | None, typer.Argument(help="The sweep file (YAML; docs/sweeps.md).", show_default=False)
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Sweep folder (default: the file's 'out', else runs/sweeps/NAME)."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume", help="Finish the sweep in this folder (skips finished cells, re-runs errors)."
        ),
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help="Where cases run: local or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="--backend ray: the cluster to join.")
    ] = None,
    ray_workers: Annotated[
        int | None, typer.Option("--ray-workers", help="--backend ray: workers per cell's run.")
    ] = None,
    progress: Annotated[str, typer.Option("--progress", help="auto, rich, plain or quiet.")] = "auto",
) -> None:
    from callbench.harness import eventloop
    from callbench.harness.config import EngineLimits, OptionError
    from callbench.harness.sweep.runner import SweepIncompleteError, SweepOptions, failures, run_sweep

    folder, spec = _resolve(sweep_file, out, resume)
    try:
        # checked here, before the sweep file's cells: one line naming the option
        EngineLimits(backend=backend, ray_address=ray_address, ray_workers=ray_workers)  # type: ignore[arg-type]
    except OptionError as exc:
        raise ConfigError(exc.cli_message()) from None
    if progress == "auto":
        progress = "rich" if sys.stdout.isatty() else "plain"
    if progress not in ("rich", "plain", "quiet"):
        raise ConfigError(f"--progress must be one of auto, rich, plain, quiet (got {progress!r})")
    options = SweepOptions(backend, ray_address, ray_workers, cast("ProgressMode", progress))
    total = len(spec.cells)
    order = {cell.id: n for n, cell in enumerate(spec.cells, 1)}

    def announce(cell: Cell, entry: dict[str, Any]) -> None:
        if entry["status"] == "running":
            what = cell.agent or cell.model
            typer.echo(
                f"cell {order[cell.id]}/{total} {cell.id}: {what} · {cell.mode} · {', '.join(cell.suites)}"
            )
        else:
            typer.echo(f"  {cell.id}: {_outcome(entry)}")

    index = eventloop.run(
        run_sweep(
            spec,
            folder,
            resume=resume is not None,
            options=options,
            observers_for=_observers,
            announce=announce,
        )
    )
    _print_matrix(folder)
    typer.echo(f"sweep folder: {folder}  (sweep.json; callbench show {folder}; callbench report {folder})")
    lines = failures(index)
    for line in lines:
        typer.echo(f"callbench: {line}", err=True)
    if lines:  # exit 1, as `callbench run` does when no case could be scored
        raise SweepIncompleteError(
            f"{len(lines)} of {len(index['cells'])} cell(s) did not finish cleanly; "
            f"callbench sweep --resume {folder} runs what is missing"
        )


def _resolve(sweep_file: Path | None, out: Path | None, resume: Path | None) -> tuple[Path, Any]:
    """The sweep folder and the parsed sweep file, from the arguments given."""
    from callbench.harness.sweep.index import SOURCE_FILE, is_sweep_folder
    from callbench.harness.sweep.spec import read_sweep, slug

    if resume is not None:
        if out is not None and out.resolve() != resume.resolve():
            raise ConfigError(f"--out {out} and --resume {resume} name different sweep folders; give one")
        if not is_sweep_folder(resume):
            raise UserError(
                f"{resume}: not a sweep folder (no sweep.json); start one with callbench sweep FILE"
            )
        return resume, read_sweep(sweep_file or resume / SOURCE_FILE)
    if sweep_file is None:
        raise ConfigError("give a sweep file (callbench sweep SWEEP.yaml) or --resume SWEEP_DIR")
    spec = read_sweep(sweep_file)
    return out or spec.out or DEFAULT_ROOT / slug(spec.name), spec


def _outcome(entry: dict[str, Any]) -> str:
    if entry["status"] == "failed":
        return f"failed: {entry['error']}"
    errors = f", {entry['n_error']} error record(s)" if entry["n_error"] else ""
    return f"{entry['status']}: {entry['n_records']} record(s){errors}"


def _observers(config: Any) -> list[Any]:
    from callbench.cli.run import make_observers

    return make_observers(config)


def _print_matrix(folder: Path) -> None:
    from callbench.cli.show import print_matrix

    print_matrix(folder)
