"""Command-line options built from the run options' one declaration (:mod:`callbench.types.run_options`).

:func:`option_parameter` turns a declared option into a typer parameter (``Annotated`` type, flag,
short flag, help, default); :func:`with_run_options` gives a command the parameters of several of
them, so that ``callbench run`` and the commands that share its options (``doctor``) show the same
flags, help and defaults without writing them again.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, TypeVar

import typer

from callbench.types.run_options import DEFAULT_REQUEST_TIMEOUT_S, OPTIONS, RunOption

__all__ = ["DEFAULT_REQUEST_TIMEOUT_S", "option_annotation", "option_parameter", "with_run_options"]

# Defaults that command signatures show in their help. They mirror the constants where they are
# defined (named beside each); importing those modules would load the providers package and
# pydantic into every `--help`. tests/cli/test_startup_imports.py checks that they agree.
DEFAULT_CASE_LIMIT_S = 120.0
"""``callbench.harness.doctor.DEFAULT_CASE_LIMIT_S``."""
CONTEXT_PROBE_TOKENS = 2_200_000
"""``callbench.harness.doctor.CONTEXT_PROBE_TOKENS``."""

Command = TypeVar("Command", bound=Callable[..., Any])


def option_annotation(option: RunOption | str, **typer_options: Any) -> Any:
    """``Annotated[type, typer.Option(flag, short, help=...)]`` for a declared option (extra typer
    keywords, such as a ``parser``, are passed on)."""
    option = OPTIONS[option] if isinstance(option, str) else option
    if option.flag is None:
        raise ValueError(f"run option {option.name!r} has no command-line flag")
    flags = (option.flag, option.short) if option.short else (option.flag,)
    return Annotated[option.cli_type, typer.Option(*flags, help=option.help, **typer_options)]


def option_parameter(option: RunOption | str, **typer_options: Any) -> inspect.Parameter:
    """The keyword parameter of a command that takes the declared option (named like its field)."""
    option = OPTIONS[option] if isinstance(option, str) else option
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=option.shown_default,
        annotation=option_annotation(option, **typer_options),
    )


def with_run_options(
    names: Iterable[str], typer_options: Mapping[str, Mapping[str, Any]] | None = None
) -> Callable[[Command], Command]:
    """Give a command ``def command(ctx: typer.Context, **values)`` the parameters of the declared
    options ``names`` (in that order, after its own parameters); ``typer_options`` adds typer keywords
    per option name. The command receives the parsed command-line values by option name."""
    extra = typer_options or {}

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        added = [option_parameter(name, **extra.get(name, {})) for name in names]
        command.__signature__ = signature.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        # typer resolves annotations through typing.get_type_hints: give it the built ones
        command.__annotations__ = {
            **{p.name: p.annotation for p in own},
            **{p.name: p.annotation for p in added},
            "return": signature.return_annotation,
        }
        return command

    return decorate
