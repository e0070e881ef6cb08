"""``callbench run``: run suites against a model and score every case."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from callbench.cli.common import print_summary, run_folder_path
from callbench.cli.options import with_run_options
from callbench.errors import ConfigError
from callbench.types.run_options import GENERATION_TIMEOUT, OPTIONS, RUN_OPTIONS, names

if TYPE_CHECKING:
    from callbench.harness.config import RunConfig

# The engine, its config models (pydantic) and the event loop are imported in the command's body:
# this module is imported by every `callbench` invocation, `--help` included.

DEFAULT_MODEL = "baseline"


def register(app: typer.Typer) -> None:
    app.command("run", help="Run suites against a model (default: built-in suite, built-in baseline agent).")(
        run
    )


RUN_PARAMETERS = tuple(option.name for option in RUN_OPTIONS if option.flag)
"""Every declared run option with a flag is a parameter of ``callbench run`` (named like its field)."""


@with_run_options(RUN_PARAMETERS, {"out_dir": {"parser": run_folder_path}})  # refuses the old '-o KEY=VALUE'
def run(ctx: typer.Context, **values: Any) -> None:
    from callbench.harness import eventloop
    from callbench.harness.config import OptionError
    from callbench.harness.prepare import resume_config

    if values["progress"] == "auto":
        values["progress"] = "rich" if sys.stdout.isatty() else "plain"
    try:
        resume: Path | None = values.pop("resume")
        if resume is not None:
            given = {name for name in ctx.params if _given(ctx, name)}
            out = values["out_dir"]
            if "out_dir" in given and out is not None and out.resolve() != resume.resolve():
                raise ConfigError(f"--out {out} and --resume {resume} name different run folders; give one")
            overrides, generation = _resume_overrides(given, values)
            config = resume_config(resume, generation=generation, **overrides)
        else:
            config = _fresh_config(values)
    except OptionError as exc:  # the command line's own option name, not the API field's
        raise ConfigError(exc.cli_message()) from None
    result = eventloop.run(_run(config))
    # --progress quiet silences the progress display only; the final table is the run's result.
    print_summary(result.summary, result.run_dir)
    print_suite_notes(result.run_dir)
    _fail_if_all_errored(result.summary, result.run_dir)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option was typed on the command line (or set in the environment), not defaulted."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _config_values(values: dict[str, Any], options: Iterable[str]) -> dict[str, Any]:
    """The command-line values of ``options`` as the config holds them (``--no-cache`` -> ``cache``)."""
    return {name: OPTIONS[name].config_value(values[name]) for name in options}


def _resume_overrides(given: set[str], values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``RunConfig`` fields and generation settings a ``--resume`` command line sets: the options
    it typed (the rest come from ``run.json``; ``prepare_run`` refuses those that would change
    verdicts and records the others) and how the run is shown, which ``run.json`` does not keep."""
    typed = [
        option.name
        for option in RUN_OPTIONS
        if option.name in given and option.group != "generation" and option.on_resume != "set-by-resume"
    ]
    shown = [name for name in names(on_resume="not-recorded") if name not in given]
    generation = [name for name in names(group="generation") if name in given]
    return _config_values(values, [*typed, *shown]), _config_values(values, generation)


def _fresh_config(values: dict[str, Any]) -> RunConfig:
    """A new run's config; every value is checked by its option group (one line naming the option).
    No ``--suite``: the empty suites mean the default suite, looked up when the run starts."""
    from callbench.harness.config import RunConfig, generation_settings

    config = _config_values(values, [name for name in values if name in OPTIONS])
    settings = {name: config.pop(name) for name in names(group="generation")}
    settings[GENERATION_TIMEOUT] = config["request_timeout_s"]  # --request-timeout is both
    return RunConfig(**config, settings=generation_settings(settings))


def _fail_if_all_errored(summary: dict[str, Any], run_dir: Path) -> None:
    """Exit 1 with one line when no case could be scored (issue 13, item 7: a dead model server)."""
    from callbench.errors import ProviderError
    from callbench.report.watch import all_errored

    failed = all_errored(summary, run_dir)
    if failed is not None:
        raise ProviderError(failed)


EXECUTOR_WORDS = {
    "contract": "synthetic results shaped by each contract: no tool ran",
    "python": "real Python implementations",
    "python-bindings": "the suite's own Python tools",
    "mcp": "a live MCP server",
}
"""How the run's closing lines describe an executor (what ran the tools)."""


def print_suite_notes(run_dir: Path) -> None:
    """One line per suite with load-time notes (the notes themselves are in run.json)."""
    from callbench.cli.common import console
    from callbench.harness.runfolder import read_header

    header = read_header(run_dir)
    source = header.options.get("tool_source") or {}
    notes = source.get("notes") or []
    if notes:  # one line per server; what was done to each tool's schema is in run.json
        console.print(
            f"  note: tools from {source.get('spec')}: {len(notes)} tool schema(s) were not strict as "
            "listed and were made strict (run.json → options.tool_source.notes says how)",
            markup=False,
            highlight=False,
        )
    cassette = header.options.get("cassette")
    if isinstance(cassette, dict):  # --record / --replay (docs/mcp.md, "Record and replay")
        verb = "recorded into" if cassette.get("mode") == "record" else "answered from"
        digest = str(cassette.get("hash_at_end") or cassette.get("hash") or "")[:12]
        console.print(
            f"  tools: MCP calls {verb} the cassette {cassette.get('folder')}"
            + (f" (hash {digest})" if digest else ""),
            markup=False,
            highlight=False,
        )
    model = header.options.get("agent_model")
    if isinstance(model, dict):  # --agent's model through callbench's proxy (docs/agents.md)
        mode = model.get("mode")
        verb = {"record": "recorded into", "replay": "answered from"}.get(str(mode), "forwarded to")
        where = model.get("folder") if mode != "live" else (model.get("upstreams") or {}).get("openai")
        console.print(f"  agent's model: requests {verb} {where}", markup=False, highlight=False)
    elif (header.options.get("config") or {}).get("agent_otel"):  # --agent-otel: the agent's own account
        console.print(
            "  agent's model: requests and tokens as the agent's own OpenTelemetry spans report them",
            markup=False,
            highlight=False,
        )
    servers = {name: s for s in header.tool_sources if s.kind == "mcp" for name in s.suites}
    for info in header.suites:
        if info.executor:
            what = EXECUTOR_WORDS.get(info.executor, "")
            server = servers.get(info.name)
            if server is not None:  # what answered, as the manifest records it (callbench show: all of it)
                what = f"{what}: " if what else ""
                what += f"{server.server_label()}, package {server.package_label()}"
            console.print(
                f"  tools: suite {info.name}: {info.executor}{f' ({what})' if what else ''}",
                markup=False,
                highlight=False,
            )
        if info.notes:
            console.print(
                f"  note: suite {info.name}: {len(info.notes)} expected literal(s) equal their schema "
                "default; the completion tier accepts omitting them (run.json lists them)",
                markup=False,
                highlight=False,
            )


async def _run(config: RunConfig) -> Any:
    from callbench.harness.engine import run_async

    return await run_async(config, [RunFolderNote(config), *make_observers(config)])


STARTED_RUN: list[Path] = []
"""The folder of the run this process started, once it exists (for the line printed on Ctrl-C)."""


class RunFolderNote:
    """Notes the run folder when the run starts, so that an interrupted run can name it."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config

    def on_run_start(self, header: Any, total: int) -> None:
        folder = self.config.out_dir or Path(self.config.runs_root) / header.run_id
        STARTED_RUN[:] = [Path(folder)]


def make_observers(config: RunConfig) -> list[Any]:
    """Progress display observers (rich/plain/quiet and --watch), and the --preflight table's printer."""
    from callbench.cli.doctor import PreflightPrinter

    first: list[Any] = [PreflightPrinter()] if config.preflight else []
    try:
        from callbench.report.progress import make_observers as report_observers
    except ImportError:
        return first
    return [*first, *report_observers(config)]
