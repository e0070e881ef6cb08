"""``callbench view RUN_DIR``: serve the dashboard on 127.0.0.1, following a run in progress."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the ``view`` command to ``app``."""
    app.command("view")(view_cmd)


def view_cmd(
    run_dir: Annotated[Path, typer.Argument(help="Run directory (may still be running).")],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 picks a free one).")] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
) -> None:
    """Serve the live dashboard: new records, running figures and the rounds of the cases in
    flight appear as the run writes them. Stop with Ctrl-C."""
    from callbench.cli.common import require_run_folder
    from callbench.report.live import LiveServer

    require_run_folder(run_dir)
    server = LiveServer(run_dir, port=port)
    typer.echo(f"serving {run_dir} at {server.url} (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
