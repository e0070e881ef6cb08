"""``callbench cache stats|clear``: inspect or empty the response cache."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from callbench.providers.cache import ResponseCache

_PATH_HELP = (
    "Cache file (default: $CALLBENCH_CACHE_DIR/responses.sqlite or ~/.cache/callbench/responses.sqlite)."
)
PathOption = Annotated[Path | None, typer.Option("--path", help=_PATH_HELP)]


def register(app: typer.Typer) -> None:
    """Add the ``cache`` command group to ``app``."""
    group = typer.Typer(help="Inspect or clear the response cache.", no_args_is_help=True)
    group.command("stats")(stats_cmd)
    group.command("clear")(clear_cmd)
    app.add_typer(group, name="cache")


@contextmanager
def _opened(path: Path | None, missing: str) -> Iterator[ResponseCache | None]:
    """The cache at ``path`` (default location when ``None``), or ``None`` after saying it is missing."""
    # imported here: the providers package loads pydantic, which `callbench --help` must not pay for
    from callbench.providers.cache import ResponseCache, default_cache_path

    target = path or default_cache_path()
    if not target.exists():
        typer.echo(f"{target}: {missing}")
        yield None
        return
    cache = ResponseCache(target)
    try:
        yield cache
    finally:
        cache.close()


def stats_cmd(path: PathOption = None) -> None:
    """Show the number of cached responses per model and the file size."""
    with _opened(path, "no cache yet (0 entries)") as cache:
        if cache is None:
            return
        info = cache.stats()
    typer.echo(f"{info['path']}: {info['entries']} entries, {info['bytes'] / 1e6:.2f} MB")
    for row in info["by_model"]:
        typer.echo(f"  {row['provider']:<14} {row['model']:<40} {row['entries']:>8}")


def clear_cmd(
    path: PathOption = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Only delete entries of this model name.")
    ] = None,
) -> None:
    """Delete cached responses (all, or those of one model)."""
    with _opened(path, "nothing to clear") as cache:
        if cache is None:
            return
        removed = cache.clear(model)
        typer.echo(f"{cache.path}: deleted {removed} entries")
