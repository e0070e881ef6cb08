"""``callbench manifest diff RUN_A RUN_B``: how two runs' tool sources differ (docs/mcp.md, "Manifests").

The manifest is ``run.json``'s ``tool_sources``: per tool source the server's name, version and
protocol, the package it was started from, and a hash per tool and per listing. ``diff`` exits 0 when
the two runs measured the same tools and 1 when they did not, like ``diff``; bad input (no such folder,
no ``run.json``, a run made before manifests were kept) is one line and exit 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from callbench.types.manifest import ToolSourceManifest

# run.json's readers (pydantic models) are imported in the commands: every `callbench --help` imports
# this module.


def register(app: typer.Typer) -> None:
    """Add the ``manifest`` command group to ``app``."""
    group = typer.Typer(help="The manifest of what a run measured (its tool sources).", no_args_is_help=True)

    @group.callback()
    def _manifest() -> None:
        """The manifest of what a run measured: per tool source the server's name, version and protocol,
        its package, and a hash per tool schema and per listing (run.json's tool_sources)."""

    group.command("diff")(diff_cmd)
    app.add_typer(group, name="manifest")


def diff_cmd(
    run_a: Annotated[Path, typer.Argument(help="The first run folder.")],
    run_b: Annotated[Path, typer.Argument(help="The second run folder.")],
) -> None:
    """Print how RUN_B's tool sources differ from RUN_A's, suite by suite: server, protocol and package
    versions, tools added, removed and changed. Exit 0 when they are the same, 1 when they differ."""
    from callbench.types.manifest import diff_manifests

    left, right = recorded_manifest(run_a), recorded_manifest(run_b)
    diff = diff_manifests(left, right)
    if not diff.differs:
        n_tools = sum(len(source.tools) for source in left)
        typer.echo(f"same manifest: {len(left)} tool source(s), {n_tools} tools ({run_a} and {run_b})")
        return
    typer.echo(f"--- {run_a}\n+++ {run_b}")
    for line in diff.lines(str(run_a), str(run_b)):
        typer.echo(line)
    raise typer.Exit(1)


def recorded_manifest(run_dir: Path) -> list[ToolSourceManifest]:
    """The run's manifest; one line (a ``UserError``) when the folder, its ``run.json`` or the
    manifest is missing."""
    from callbench.cli.common import require_run_folder
    from callbench.errors import UserError
    from callbench.harness.runfolder import read_header

    header = read_header(require_run_folder(run_dir))
    if not header.tool_sources:
        raise UserError(
            f"{run_dir}: run.json records no manifest (the run was made before callbench kept one); "
            "its tool sources cannot be compared"
        )
    return list(header.tool_sources)


def manifest_warnings(run_dirs: Sequence[Path]) -> list[str]:
    """One line per pair of runs whose manifests differ (what ``callbench compare`` warns), and one
    for the runs that record none when others do."""
    from callbench.errors import UserError
    from callbench.harness.runfolder import read_header
    from callbench.types.manifest import diff_manifests

    manifests: list[tuple[Path, list[ToolSourceManifest]]] = []
    for run_dir in run_dirs:
        try:
            manifests.append((run_dir, list(read_header(run_dir).tool_sources)))
        except UserError:  # not a run folder: the comparison itself says so
            continue
    out = []
    for i, (dir_a, a) in enumerate(manifests):
        for dir_b, b in manifests[i + 1 :]:
            if not a or not b:
                continue
            diff = diff_manifests(a, b)
            if diff.sources:
                changes = " | ".join(source.summary() for source in diff.sources)
                out.append(
                    f"{dir_a} and {dir_b} measured different tools: {changes} "
                    f"(callbench manifest diff {dir_a} {dir_b})"
                )
    missing = [str(d) for d, m in manifests if not m]
    if missing and len(missing) < len(manifests):
        out.append(
            f"{', '.join(missing)}: no manifest in run.json (made before callbench kept one): "
            "their tool sources cannot be compared with the other runs'"
        )
    return out
