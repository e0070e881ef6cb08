"""Command groups that several plugins add commands to (``export``, ``import``, ``generate``, ``data``)."""

from __future__ import annotations

import typer

GROUP_HELP = {
    "export": "Write a stored run in another benchmark tool's format.",
    "import": "Convert other benchmarks' data into callbench suites, or their results into runs.",
    "generate": "Generate benchmark tasks (contamination-free, at evaluation time).",
    "data": "Fetch data sets that suites read with --data.",
}


def group(app: typer.Typer, name: str, help_text: str | None = None) -> typer.Typer:
    """The sub-app ``name`` of ``app``, created on first use (so plugins can share a group)."""
    for info in app.registered_groups:
        if info.name == name and info.typer_instance is not None:
            return info.typer_instance
    sub = typer.Typer(help=help_text or GROUP_HELP.get(name, ""), no_args_is_help=True)
    app.add_typer(sub, name=name)
    return sub
