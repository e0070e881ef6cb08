"""``callbench contracts from-python FILE``: strict YAML contracts from a Python file's functions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

contracts_app = typer.Typer(help="Write tool contracts.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(contracts_app, name="contracts")


@contracts_app.command("from-python")
def from_python(
    source: Annotated[Path, typer.Argument(help="A Python file (tools.py) or an importable module name.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for the contracts (one YAML per tool).")
    ] = Path("tools"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite contracts that exist.")] = False,
) -> None:
    """One strict contract per public function (type hints, defaults, docstrings); every parameter that
    could not be typed is reported. The file's functions can then be a suite's ``bindings``."""
    import yaml  # on use: `callbench --help` stays light (tests/cli/test_startup_imports.py)

    from callbench.errors import UserError
    from callbench.suites.bindings import import_location
    from callbench.tools.from_python import contracts_from_module

    location = str(source)
    base = source.parent if location.endswith(".py") else Path.cwd()
    module = import_location(
        source.name if location.endswith(".py") else location, base, location, "contracts"
    )
    contracts, notes = contracts_from_module(module)
    if not contracts:
        raise UserError(f"{source}: defines no public function to describe")
    out.mkdir(parents=True, exist_ok=True)
    existing = [c["name"] for c in contracts if (out / f"{c['name']}.yaml").exists()]
    if existing and not force:
        raise UserError(f"{out}: contracts exist for {', '.join(existing)}; pass --force to overwrite them")
    for contract in contracts:
        text = yaml.safe_dump(contract, sort_keys=False, allow_unicode=True)
        (out / f"{contract['name']}.yaml").write_text(text, encoding="utf-8")
    typer.echo(f"wrote {len(contracts)} contract(s) to {out}: {', '.join(c['name'] for c in contracts)}")
    for note in notes:
        typer.echo(f"note: {note}")
