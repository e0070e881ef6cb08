"""``callbench generate dag SPEC -o FILE``: write generated DAG tasks to JSONL for sharing.

SPEC uses the ``dag`` suite grammar (``n_core=5,10;depth=1,4;n_conn=0,5;seeds=5``...); episode
options (restate, mode, cap, scoring) are not part of a task and are ignored here. The file can be
run later with ``--suite "dag:file=FILE"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from callbench.cli.groups import group


def generate_dag(
    spec: str = typer.Argument(
        ..., help='Grid spec, e.g. "n_core=5,10;depth=1,4;n_conn=0,5;n_dis=0,5;seeds=5".'
    ),
    output: str = typer.Option(..., "-o", "--output", help="JSONL file to write ('-' for standard output)."),
) -> None:
    """Generate FuncBenchGen-style tasks (one JSON task per line)."""
    from callbench.benchmarks.funcbenchgen.generator import generate
    from callbench.benchmarks.funcbenchgen.suite import grid, parse_spec
    from callbench.plugin import ConfigError  # here: every CLI start imports this module

    parsed = parse_spec(spec)
    if parsed.file:
        raise ConfigError("generate dag: 'file=' reads tasks; give grid parameters instead")
    tasks = [generate(params) for params in grid(parsed)]
    text = "".join(task.model_dump_json() + "\n" for task in tasks)
    if output == "-":
        sys.stdout.write(text)
        return
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {len(tasks)} tasks to {path}", err=True)


def register_commands(app: typer.Typer) -> None:
    """Add ``generate dag`` to the shared ``generate`` group."""
    group(app, "generate").command("dag")(generate_dag)
