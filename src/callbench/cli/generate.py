"""``callbench generate dag SPEC -o FILE``: write generated DAG tasks to JSONL for sharing.

SPEC uses the ``dag`` suite grammar (``n_core=5,10;depth=1,4;n_conn=0,5;seeds=5``...); episode
options (restate, mode, cap, scoring) are not part of a task and are ignored here. The file can be
run later with ``--suite "dag:file=FILE"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from callbench.errors import ConfigError
from callbench.generate.dag import generate
from callbench.suites.dag import grid, parse_spec

generate_app = typer.Typer(help="Generate benchmark tasks (contamination-free, at evaluation time).",
                           no_args_is_help=True)


def generate_dag(
    spec: str = typer.Argument(..., help='Grid spec, e.g. "n_core=5,10;depth=1,4;n_conn=0,5;n_dis=0,5;seeds=5".'),
    output: str = typer.Option(..., "-o", "--output", help="JSONL file to write ('-' for standard output)."),
) -> None:
    """Generate FuncBenchGen-style tasks (one JSON task per line)."""
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


generate_app.command("dag")(generate_dag)


def register(app: typer.Typer) -> None:
    """Add ``generate dag`` to ``app`` (reusing a ``generate`` group another module created)."""
    for info in app.registered_groups:
        if info.name == "generate" and info.typer_instance is not None:
            info.typer_instance.command("dag")(generate_dag)
            return
    app.add_typer(generate_app, name="generate")
