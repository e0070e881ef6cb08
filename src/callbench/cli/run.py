"""``callbench run``: run suites against a model and score every case."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from callbench.cli.common import print_summary, run_folder_path
from callbench.cli.options import (
    DEFAULT_REQUEST_TIMEOUT_S,
    MaxConnections,
    MaxTokens,
    ReasoningEffort,
    Rpm,
    Seed,
    Temperature,
    ThinkingBudget,
)
from callbench.errors import ConfigError

if TYPE_CHECKING:
    from callbench.harness.config import BackendName, ProgressMode, RunConfig
    from callbench.harness.modes import HarnessMode

# The engine, its config models (pydantic) and the event loop are imported in the command's body:
# this module is imported by every `callbench` invocation, `--help` included.

DEFAULT_MODEL = "baseline"


def register(app: typer.Typer) -> None:
    app.command("run", help="Run suites against a model (default: built-in suite, built-in baseline agent).")(
        run
    )


def run(
    ctx: typer.Context,
    suite: Annotated[
        list[str] | None, typer.Option("--suite", "-s", help="Suite name, spec or path (repeatable).")
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="provider:model, or a built-in agent: baseline, oracle, refuse, noisy:SEED, planner.",
        ),
    ] = DEFAULT_MODEL,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Your agent application instead of a model, given each case's tools over MCP: "
            "cmd:COMMAND, http:URL or py:module:function (docs/agents.md).",
        ),
    ] = None,
    tier: Annotated[
        list[str] | None, typer.Option("--tier", "-t", help="Scorer/tier name (repeatable) or 'all'.")
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode", help="production-parity or oracle-assisted (with --agent: agent-under-test, implied)."
        ),
    ] = "production-parity",
    k: Annotated[
        str | None, typer.Option("--k", help="Top-k tool retrieval, or 'all' (default: the suite's, 24).")
    ] = None,
    executor: Annotated[
        str | None, typer.Option("--executor", help="Override the suites' executor (e.g. contract).")
    ] = None,
    data: Annotated[
        Path | None, typer.Option("--data", help="Local data set path for suites that need one.")
    ] = None,
    registry: Annotated[
        Path | None, typer.Option("--registry", help="Tool registry folder for path suites.")
    ] = None,
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            help="A live MCP server as the tools of path suites: mcp:stdio:COMMAND ARGS or "
            "mcp:http://HOST/PATH (docs/mcp.md).",
        ),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", help="Suite option KEY=VALUE (repeatable).")
    ] = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Run only this case id (repeatable).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N cases per suite.")] = None,
    trials: Annotated[int, typer.Option("--trials", help="Repeat every case K times.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            parser=run_folder_path,  # refuses the old '-o KEY=VALUE' (now --option) with one line
            help="Run folder (default runs/<timestamp>-<model>-<suite>).",
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option("--resume", help="Continue the run in this folder (re-runs error records)."),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", help="Cases in flight at once.")] = 8,
    delay: Annotated[float, typer.Option("--delay", help="Seconds between case starts.")] = 0.0,
    rpm: Rpm = None,
    tpm: Annotated[float | None, typer.Option("--tpm", help="Tokens per minute per endpoint.")] = None,
    max_connections: MaxConnections = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the response cache.")
    ] = False,
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="Where cases run: local (this process) or ray (Ray workers; docs/scale-out.md).",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="--backend ray: the cluster to join (auto, host:port, ray://host:port; "
            "default: start a local Ray instance).",
        ),
    ] = None,
    ray_workers: Annotated[
        int | None,
        typer.Option(
            "--ray-workers",
            help="--backend ray: workers playing cases, each at --concurrency (default: one per CPU).",
        ),
    ] = None,
    request_timeout: Annotated[
        float,
        typer.Option(
            "--request-timeout",
            help=(
                "Seconds per model request before it is retried; keep it well below the case time limit "
                "(120 s unless the case sets one)."
            ),
        ),
    ] = DEFAULT_REQUEST_TIMEOUT_S,
    max_retries: Annotated[
        int, typer.Option("--max-retries", help="Retries per request on 429/5xx/timeouts.")
    ] = 6,
    max_retry_time: Annotated[
        float, typer.Option("--max-retry-time", help="Cap on retry time per request (s).")
    ] = 300.0,
    price_table: Annotated[
        Path | None, typer.Option("--price-table", help="YAML/JSON prices per model for cost estimates.")
    ] = None,
    temperature: Temperature = 0.0,
    max_tokens: MaxTokens = 4096,
    seed: Seed = None,
    reasoning_effort: ReasoningEffort = None,
    thinking_budget: ThinkingBudget = None,
    tool_choice: Annotated[
        str,
        typer.Option(
            "--tool-choice",
            help="auto, required, none, or a tool name to force (sent as the API's tool_choice).",
        ),
    ] = "auto",
    parallel_tool_calls: Annotated[
        str,
        typer.Option(
            "--parallel-tool-calls", help="on or off: whether the model may make several calls in one answer."
        ),
    ] = "on",
    stream: Annotated[
        bool,
        typer.Option(
            "--stream",
            help="Stream answers (tool-call deltas assembled, time to first token recorded), as deployed.",
        ),
    ] = False,
    case_timeout: Annotated[
        list[str] | None,
        typer.Option(
            "--case-timeout",
            help="Case time limit in seconds for every case (replacing their own), or SUITE=SECONDS for "
            "one suite (repeatable). For slow local servers.",
        ),
    ] = None,
    recover_text_calls: Annotated[
        bool,
        typer.Option(
            "--recover-text-calls",
            help="Score calls a server left in the answer text (its tool-call parser failed) as calls, "
            "recorded as recovered; such runs are never pooled with native ones.",
        ),
    ] = False,
    preflight: Annotated[
        bool,
        typer.Option(
            "--preflight",
            help="Check the endpoint (callbench doctor) before any case runs; the table goes in run.json.",
        ),
    ] = False,
    progress: Annotated[str, typer.Option("--progress", help="auto, rich, plain or quiet.")] = "auto",
    watch: Annotated[
        bool, typer.Option("--watch", help="Print every round as it happens (use with --case).")
    ] = False,
) -> None:
    values = {name: value for name, value in locals().items() if name != "ctx"}
    from callbench.harness import eventloop
    from callbench.harness.config import OptionError
    from callbench.harness.rundir import resume_config

    if progress == "auto":
        values["progress"] = progress = "rich" if sys.stdout.isatty() else "plain"
    try:
        if resume is not None:
            given = {name for name in ctx.params if _given(ctx, name)}
            if "out" in given and out is not None and out.resolve() != resume.resolve():
                raise ConfigError(f"--out {out} and --resume {resume} name different run folders; give one")
            config = resume_config(
                resume,
                generation=_generation_overrides(given, values),
                progress=progress,
                watch=watch,
                preflight=preflight,
                **_resume_overrides(given, values),
            )
        else:
            config = _fresh_config(**values)
    except OptionError as exc:  # the command line's own option name, not the API field's
        raise ConfigError(exc.cli_message()) from None
    result = eventloop.run(_run(config))
    # --progress quiet silences the progress display only; the final table is the run's result.
    print_summary(result.summary, result.run_dir)
    print_suite_notes(result.run_dir)
    _fail_if_all_errored(result.summary, result.run_dir)


# Command-line parameter -> RunConfig field, for the options a resumed run may be given.
RESUME_FIELDS = {
    "suite": "suites",
    "model": "model",
    "agent": "agent",
    "tier": "tiers",
    "mode": "harness_mode",
    "k": "k",
    "executor": "executor",
    "data": "data",
    "registry": "registry",
    "tools": "tools",
    "option": "suite_options",
    "case": "case_ids",
    "limit": "limit",
    "trials": "trials",
    "concurrency": "concurrency",
    "delay": "delay_s",
    "rpm": "rpm",
    "tpm": "tpm",
    "max_connections": "max_connections",
    "no_cache": "cache",
    "backend": "backend",
    "ray_address": "ray_address",
    "ray_workers": "ray_workers",
    "request_timeout": "request_timeout_s",
    "max_retries": "max_retries",
    "max_retry_time": "max_retry_time_s",
    "price_table": "price_table",
    "case_timeout": "case_timeouts",
    "recover_text_calls": "recover_text_calls",
}
GENERATION_FLAGS = {
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "seed": "seed",
    "reasoning_effort": "reasoning_effort",
    "thinking_budget": "thinking_budget",
    "tool_choice": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "stream": "stream",
}
"""Command-line parameter -> ``GenerationSettings`` field."""


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option was typed on the command line (or set in the environment), not defaulted."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _pick(given: set[str], names: dict[str, str], values: dict[str, Any]) -> dict[str, Any]:
    return {field: values[name] for name, field in names.items() if name in given}


def _resume_overrides(given: set[str], values: dict[str, Any]) -> dict[str, Any]:
    """The options given with ``--resume``, as ``RunConfig`` fields. The rest come from ``run.json``;
    ``prepare_run`` refuses those that would change verdicts and records the others."""
    out = _pick(given, RESUME_FIELDS, values)
    for name in ("suites", "tiers", "case_ids"):
        if name in out:
            out[name] = tuple(out[name] or ())
    if "suite_options" in out:
        out["suite_options"] = parse_options(out["suite_options"])
    if "cache" in out:
        out["cache"] = not out["cache"]
    if "case_timeouts" in out:
        out["case_timeouts"] = parse_case_timeouts(out["case_timeouts"])
    return out


def _generation_overrides(given: set[str], values: dict[str, Any]) -> dict[str, Any]:
    out = _pick(given, GENERATION_FLAGS, values)
    if "parallel_tool_calls" in out:
        out["parallel_tool_calls"] = parse_on_off(out["parallel_tool_calls"], "--parallel-tool-calls")
    return out


def parse_on_off(value: str, flag: str) -> bool:
    """``on``/``off`` (also ``true``/``false``, ``1``/``0``) as a bool; anything else is one line."""
    text = value.strip().lower()
    if text in ("on", "true", "1", "yes"):
        return True
    if text in ("off", "false", "0", "no"):
        return False
    raise ConfigError(f"{flag} must be on or off (got {value!r})")


def parse_case_timeouts(items: list[str] | None) -> dict[str, float]:
    """``--case-timeout`` values (``SECONDS`` or ``SUITE=SECONDS``) as ``{suite or "*": seconds}``."""
    out: dict[str, float] = {}
    for item in items or []:
        suite, sep, seconds = item.rpartition("=")
        key = suite.strip() if sep else "*"
        if sep and not key:
            raise ConfigError(f"--case-timeout expects SECONDS or SUITE=SECONDS, got {item!r}")
        try:
            value = float(seconds)
        except ValueError:
            raise ConfigError(
                f"--case-timeout expects SECONDS or SUITE=SECONDS, got {item!r}: {seconds.strip()!r} is not "
                "a number"
            ) from None
        if not value > 0 or value != value or value == float("inf"):
            raise ConfigError(f"--case-timeout must be a positive number of seconds (got {item!r})")
        out[key] = value
    return out


def _fresh_config(
    *,
    suite: list[str] | None,
    model: str,
    agent: str | None,
    tier: list[str] | None,
    mode: str,
    k: str | None,
    executor: str | None,
    data: Path | None,
    registry: Path | None,
    tools: str | None,
    option: list[str] | None,
    case: list[str] | None,
    limit: int | None,
    trials: int,
    out: Path | None,
    concurrency: int,
    delay: float,
    rpm: float | None,
    tpm: float | None,
    max_connections: int | None,
    no_cache: bool,
    backend: str,
    ray_address: str | None,
    ray_workers: int | None,
    request_timeout: float,
    max_retries: int,
    max_retry_time: float,
    price_table: Path | None,
    temperature: float,
    max_tokens: int,
    seed: int | None,
    reasoning_effort: str | None,
    thinking_budget: int | None,
    tool_choice: str,
    parallel_tool_calls: str,
    stream: bool,
    case_timeout: list[str] | None,
    recover_text_calls: bool,
    preflight: bool,
    progress: str,
    watch: bool,
    **_: Any,
) -> RunConfig:
    """A new run's config; every value is checked by its option group (one line naming the option)."""
    from callbench.harness.config import EngineLimits, Output, RunConfig, Selection
    from callbench.types.messages import GenerationSettings

    limits = EngineLimits(
        concurrency=concurrency,
        delay_s=delay,
        rpm=rpm,
        tpm=tpm,
        max_connections=max_connections,
        cache=not no_cache,
        request_timeout_s=request_timeout,
        max_retries=max_retries,
        max_retry_time_s=max_retry_time,
        price_table=price_table,
        backend=cast("BackendName", backend),  # checked by EngineLimits
        ray_address=ray_address,
        ray_workers=ray_workers,
    )
    settings = GenerationSettings(
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        reasoning_effort=reasoning_effort,
        thinking_budget=thinking_budget,
        tool_choice=tool_choice,
        parallel_tool_calls=parse_on_off(parallel_tool_calls, "--parallel-tool-calls"),
        stream=stream,
        timeout_s=request_timeout,
    )
    # No --suite: RunConfig's empty suites mean the default suite, looked up when the run starts.
    selection = Selection(
        case_ids=case or (),
        limit=limit,
        trials=trials,
        k=k,
        executor=executor,
        suite_options=parse_options(option),
        data=data,
        registry=registry,
        tools=tools,
        case_timeouts=parse_case_timeouts(case_timeout),
        recover_text_calls=recover_text_calls,
    )
    output = Output(
        out_dir=out, progress=cast("ProgressMode", progress), watch=watch, preflight=preflight
    )  # checked by Output
    return RunConfig.from_groups(
        tuple(suite or ()),
        model,
        tuple(tier or ()),
        cast("HarnessMode", mode),
        agent=agent,
        selection=selection,
        limits=limits,
        generation=settings,
        output=output,
    )


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
    for info in header.suites:
        if info.executor:
            what = EXECUTOR_WORDS.get(info.executor, "")
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


def parse_options(items: list[str] | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out
