"""``callbench serve-tools``: serve one case's tools as an MCP server, for a person to poke at."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from callbench.types.run_options import parse_key_values


def register(app: typer.Typer) -> None:
    app.command(
        "serve-tools",
        help="Serve one case's offered tools as an MCP server (streamable HTTP on 127.0.0.1, or --stdio); "
        "calls are logged, and scored when you stop it.",
    )(serve_tools)


def serve_tools(
    suite: Annotated[str, typer.Option("--suite", "-s", help="Suite name, spec or path.")],
    case: Annotated[str, typer.Option("--case", help="The case id to serve.")],
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Speak MCP over stdin/stdout instead of HTTP.")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="HTTP port on 127.0.0.1 (0: any free port).")] = 0,
    k: Annotated[str | None, typer.Option("--k", help="Top-k tool retrieval, or 'all'.")] = None,
    data: Annotated[Path | None, typer.Option("--data", help="Local data set path.")] = None,
    registry: Annotated[Path | None, typer.Option("--registry", help="Tool registry folder.")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", help="Suite option KEY=VALUE.")] = None,
) -> None:
    import asyncio  # here, not at the top: only this command needs an event loop of its own

    from callbench.executors.base import run_sync
    from callbench.harness.config import Selection
    from callbench.harness.serve_case import (
        open_case,
        serve_http,
        serve_over_stdio,
        stderr_log,
        until_terminated,
    )
    from callbench.report.progress import verdict_word
    from callbench.suites.resolve import load_suite

    checked = Selection(k=k)  # the run command's rule for --k (a number >= 1, or 'all')
    loaded = load_suite(suite, data=data, registry=registry, **parse_key_values(option))
    served = open_case(loaded, case, checked.k)
    try:
        # Ctrl-C and SIGTERM both end the serving and go on to the scoring.
        with contextlib.suppress(KeyboardInterrupt):
            if stdio:
                asyncio.run(until_terminated(serve_over_stdio(served, stderr_log)))
            else:
                asyncio.run(until_terminated(serve_http(served, port, stderr_log)))
        verdicts = run_sync(served.score())
        stderr_log(f"{len(served.episode.trace.calls)} call(s) made; verdicts on them (no final answer):")
        for name, verdict in verdicts.items():
            stderr_log(f"  {name}: {verdict_word(verdict)}  {verdict.rationale}")
    finally:
        served.close()
