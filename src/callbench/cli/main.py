"""Entry point of the ``callbench`` command; discovers every subcommand module in this package."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from typing import TextIO

import typer

from callbench.errors import CallbenchError, FatalProviderError, UserError
from callbench.types.version import __version__

app = typer.Typer(
    name="callbench",
    help="Strict, execution-backed, reproducible benchmarks of LLM function calling.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # Sub-commands and groups inherit the help option names from this top-level context.
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"callbench {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", is_eager=True, callback=_print_version, help="Print the version and exit."
    ),
) -> None:
    """Strict, execution-backed, reproducible benchmarks of LLM function calling."""


def _discover() -> None:
    """Import every ``callbench.cli.<module>`` that defines ``register(app)`` and let it add commands."""
    import callbench.cli as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name in ("main", "common", "groups") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"callbench.cli.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(app)
    # Plugins (the built-in benchmarks included) add their commands through the catalog.
    from callbench.catalog import catalog

    found = catalog()
    for name in found.commands.names():
        try:
            found.commands.get(name)(app)
        except Exception as exc:  # noqa: BLE001 - a plugin's broken command set costs only its commands
            owner = found.commands.provided_by.get(name)
            label = owner.label if owner is not None else f"command set {name!r}"
            found.warnings.append(f"{label}: its commands were skipped: {type(exc).__name__}: {exc}")
    for line in found.warnings:
        print(f"callbench: warning: {line}", file=sys.stderr)


_python_showwarning = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """callbench's own warnings (a class with ``one_line``, e.g. a skipped torn record) as one
    ``callbench: warning:`` line on stderr; any other warning as Python shows it."""
    if getattr(category, "one_line", False):
        print(f"callbench: warning: {message}", file=sys.stderr)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


INTERRUPTED = 130
"""The exit status of a command stopped with Ctrl-C (128 + SIGINT, as shells report it)."""


def interrupted_line() -> str:
    """What Ctrl-C leaves: the run folder, how many records it holds, and the command that resumes it."""
    from callbench.cli.run import STARTED_RUN

    if not STARTED_RUN:
        return "callbench: interrupted"
    folder = STARTED_RUN[0]
    records = folder / "records.jsonl"
    kept = sum(1 for _ in records.open("rb")) if records.exists() else 0
    return (
        f"callbench: interrupted; {kept} records are kept in {folder} (summary.json covers them); "
        f"finish the run with: callbench run --resume {folder}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the CLI. User errors print one line (no traceback) and exit 2."""
    warnings.showwarning = _show_warning
    _tolerate_unprintable_text()
    try:
        _discover()  # inside the error boundary: a plugin problem is one line, never a traceback
        # Outside standalone mode typer returns an exit code instead of exiting: Ctrl-C comes back as
        # 130 (typer turns KeyboardInterrupt into Exit(130)), after the run has written its summary.
        code = app(args=argv, standalone_mode=False)
        if isinstance(code, int) and code:
            if code == INTERRUPTED:
                print(interrupted_line(), file=sys.stderr)
            return code
    except (UserError, FatalProviderError) as exc:
        print(f"callbench: error: {exc}", file=sys.stderr)
        return 2
    except CallbenchError as exc:
        print(f"callbench: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(interrupted_line(), file=sys.stderr)
        return INTERRUPTED
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        return 1
    except Exception as exc:
        # Usage errors (unknown option, missing argument, bad value) are click's ClickException. Newer
        # typer releases bundle their own copy of click, so the class is recognised by name, not imported.
        if _is_usage_error(exc):
            exc.show()  # type: ignore[attr-defined]
            return int(exc.exit_code)  # type: ignore[attr-defined]
        raise
    return 0


def _tolerate_unprintable_text() -> None:
    """A model's, agent's or tool's text may hold what the terminal cannot encode (a lone surrogate,
    or anything outside an ASCII locale): printed as escapes, never a crash mid-run."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # absent on replaced streams (tests)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _is_usage_error(exc: BaseException) -> bool:
    return any(cls.__name__ == "ClickException" for cls in type(exc).__mro__)


if __name__ == "__main__":
    sys.exit(main())
