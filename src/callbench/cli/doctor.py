"""``callbench doctor MODEL``: check an endpoint's tool-call serving before anything is scored.

Prints a table (each check, passed/failed/skipped, the evidence, what a failure would corrupt) or,
with ``--json``, the same as one JSON object. Exit 0 when no check failed, 1 when one did, 2 on bad
input (one line: an unknown provider, a built-in agent, an unreachable server, a refused key).
The checks themselves are :mod:`callbench.harness.doctor`; docs/doctor.md explains each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from callbench.cli.common import console
from callbench.cli.options import (
    CONTEXT_PROBE_TOKENS,
    DEFAULT_CASE_LIMIT_S,
    DEFAULT_REQUEST_TIMEOUT_S,
    with_run_options,
)
from callbench.errors import CallbenchError, ConfigError

if TYPE_CHECKING:
    from callbench.harness.doctor import DoctorReport

# The checks, the providers and the config models (pydantic) are imported where they are used:
# `run` and `show` import this module, and every `callbench --help` imports those.

STYLES = {"passed": "green", "failed": "bold red", "skipped": "yellow"}


def register(app: typer.Typer) -> None:
    app.command(
        "doctor",
        help="Check a model endpoint's tool-call serving (13 checks, at most 30 requests) before a run.",
    )(doctor)


SHARED_WITH_RUN = (
    "temperature",
    "max_tokens",
    "seed",
    "reasoning_effort",
    "thinking_budget",
    "rpm",
    "max_connections",
)
"""The run options ``doctor`` takes as ``run`` does (same flags, help and defaults)."""


@with_run_options(SHARED_WITH_RUN)
def doctor(
    model: Annotated[str, typer.Argument(help="provider:model[@URL], as for run --model (e.g. vllm:MODEL).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    request_timeout: Annotated[
        float,
        typer.Option("--request-timeout", help="Seconds per request (no retries: a timeout is evidence)."),
    ] = DEFAULT_REQUEST_TIMEOUT_S,
    case_timeout: Annotated[
        float,
        typer.Option("--case-timeout", help="The case time limit the latency check measures against (s)."),
    ] = DEFAULT_CASE_LIMIT_S,
    context_probe: Annotated[
        int,
        typer.Option(
            "--context-probe",
            help="Tokens of the over-long prompt of the context check (0: skip it; refused prompts are "
            "not billed, an accepted one is).",
        ),
    ] = CONTEXT_PROBE_TOKENS,
    **shared: Any,
) -> None:
    """Check MODEL's endpoint and print the table; exit 1 when a check failed."""
    from callbench.harness import eventloop
    from callbench.harness.config import OptionError, check_generation
    from callbench.harness.doctor import DoctorOptions, run_doctor
    from callbench.providers.model import make_provider
    from callbench.providers.reachability import check_endpoint
    from callbench.types.messages import GenerationSettings

    try:
        generation = {name: value for name, value in shared.items() if name not in ("rpm", "max_connections")}
        settings = check_generation(GenerationSettings(**generation, timeout_s=request_timeout))
    except OptionError as exc:
        raise ConfigError(exc.cli_message()) from None
    if not request_timeout > 0:
        raise ConfigError(f"--request-timeout must be a positive number of seconds (got {request_timeout:g})")
    options = DoctorOptions(
        context_probe_tokens=context_probe,
        case_limit_s=case_timeout,
        request_timeout_s=request_timeout,
        rpm=shared["rpm"],
        max_connections=shared["max_connections"],
    )
    provider = make_provider(model)  # an unknown provider or a missing key: one line
    if provider.needs_network:
        check_endpoint(provider)  # nothing listening: one line, no request sent

    async def go() -> DoctorReport:
        try:
            return await run_doctor(provider, settings, options, label=model)
        finally:
            await provider.aclose()

    report = eventloop.run(go())
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        console.print(report_table(report))
    if not report.passed:  # exit 1 with one line on stderr (the table above has the evidence)
        names = ", ".join(c.name for c in report.failed)
        raise CallbenchError(
            f"doctor: {len(report.failed)} check(s) failed ({names}): the endpoint does not do what a "
            "benchmark run needs (the evidence column says whether the server or the model is at "
            "fault where it can tell); see docs/doctor.md"
        )


def report_table(report: DoctorReport | Mapping[str, Any], title: str | None = None) -> Table:
    """The doctor table: check, result, evidence, what a failure would corrupt (plain text cells:
    evidence quotes the endpoint's answers, never console markup)."""
    from callbench.harness.doctor import DoctorReport

    if not isinstance(report, DoctorReport):
        report = DoctorReport.from_json(report)
    table = Table(title=title or f"doctor · {report.model}", show_lines=False, pad_edge=False)
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("evidence", overflow="fold", ratio=3)
    table.add_column("a failure would corrupt", overflow="fold", ratio=2)
    for check in report.checks:
        corrupts = check.corrupts if check.status == "failed" else Text(check.corrupts, style="dim")
        table.add_row(
            Text(check.name), Text(check.status, style=STYLES[check.status]), Text(check.evidence), corrupts
        )
    table.caption = report.verdict_line()
    return table


def print_report(report: DoctorReport | Mapping[str, Any], title: str | None = None) -> None:
    """Print the table and, when a check failed, one line saying what that means for a run."""
    from callbench.harness.doctor import DoctorReport

    if not isinstance(report, DoctorReport):
        report = DoctorReport.from_json(report)
    console.print(report_table(report, title))
    if report.failed:
        console.print(
            Text(
                f"  {len(report.failed)} check(s) failed: these are serving faults (the server, its flags or "
                "the preset), not the model's; figures they touch measure the server (docs/doctor.md)",
                style="red",
            )
        )


class PreflightPrinter:
    """``run --preflight``: prints the doctor table when the engine has it, before the first case."""

    def on_preflight(self, report: DoctorReport) -> None:
        print_report(report, title=f"preflight · {report.model} (kept in run.json)")


def preflight_lines(run_dir: Path) -> list[str]:
    """What ``show`` says about a run's ``--preflight`` table: a line of counts, then one line per
    failed check with its evidence (nothing when the run had no preflight)."""
    from callbench.harness.doctor import stored_preflight
    from callbench.harness.runfolder import read_header

    report = stored_preflight(read_header(run_dir).options)
    if report is None:
        return []
    lines = [f"preflight (callbench doctor, {report.at}): {report.verdict_line()}; table in run.json"]
    lines += [f"  preflight failed: {c.name}: {c.evidence} -> {c.corrupts}" for c in report.failed]
    return lines


def print_preflight(run_dir: Path) -> None:
    """Print :func:`preflight_lines` (red when a check failed)."""
    lines = preflight_lines(run_dir)
    style = "red" if len(lines) > 1 else None
    for line in lines:
        console.print(Text("  " + line, style=style or ""))


def preflight_json(run_dir: Path) -> dict[str, Any] | None:
    """The run's preflight table as stored (``None`` when the run had none)."""
    from callbench.harness.doctor import PREFLIGHT_KEY
    from callbench.harness.runfolder import read_header

    data = read_header(run_dir).options.get(PREFLIGHT_KEY)
    return dict(data) if isinstance(data, Mapping) else None
