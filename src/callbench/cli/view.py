"""``callbench view RUN_DIR``: serve the dashboard on 127.0.0.1, following a run in progress."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the ``view`` command to ``app``."""
    app.command("view")(view_cmd)


def view_cmd(
    run_dir: Annotated[Path, typer.Argument(help="Run directory (may still be running, or not exist yet).")],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 picks a free one).")] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
) -> None:
    """Serve the live dashboard: new records, running figures and the rounds of the cases in
    flight appear as the run writes them. Stop with Ctrl-C."""
    from callbench.cli.common import serve_until_stopped
    from callbench.report.live import LiveServer

    # Not require_run_folder: the view may start before the run creates its folder (it waits).
    server = LiveServer(run_dir, port=port)
    if server.waiting:
        typer.echo(f"waiting for {run_dir} to appear… (serving at {server.url}, Ctrl-C to stop)")
    else:
        typer.echo(f"serving {run_dir} at {server.url} (Ctrl-C to stop)")
    serve_until_stopped(server, open_browser)
