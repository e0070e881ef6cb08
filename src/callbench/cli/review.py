"""``callbench review``: the review page of one or more runs, and the agreement of their reviews.

Two forms share the command:

* ``callbench review RUN_DIR [RUN_DIR…] --reviewer NAME [--port N] [--open]`` serves the review page
  (also spelled ``callbench review serve …``);
* ``callbench review agreement RUN_DIR [--reviewers a,b] [--consensus NAME] [--format text|md|json]``
  prints inter-rater agreement, the disagreements and the suspect rules or cases.

The first word decides: a subcommand name runs that subcommand; anything else (a folder, or an
option) is the serve form. A word that is neither a subcommand nor an existing folder is refused with
one line naming both readings (a folder literally named ``agreement`` is reached as ``./agreement``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from callbench.cli.common import require_run_folder, serve_until_stopped
from callbench.errors import ConfigError, require_extra

SERVE = "serve"


class ReviewGroup(TyperGroup):
    """A group whose first argument is a subcommand or, failing that, a run folder to serve."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Route ``review RUN_DIR …`` (and ``review --reviewer X RUN_DIR``) to the serve command."""
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            first = args[0]
            if not first.startswith("-") and not Path(first).exists():
                names = ", ".join(sorted(self.commands))
                raise ConfigError(
                    f"review: {first!r} is neither a review subcommand ({names}) nor an existing run folder"
                )
            args = [SERVE, *args]
        return super().parse_args(ctx, args)


HELP = (
    "Review a run's verdicts by hand, and measure how far reviewers agree.\n\n"
    "'callbench review RUN_DIR [RUN_DIR...] --reviewer NAME' serves the review page (the same as "
    "'review serve ...'); 'callbench review agreement RUN_DIR' prints agreement, disagreements and "
    "suspects. Reviews are stored in RUN_DIR/reviews/<reviewer>.jsonl, beside the automatic verdicts."
)


def register(app: typer.Typer) -> None:
    """Add the ``review`` group to ``app``."""
    sub = typer.Typer(cls=ReviewGroup, help=HELP, no_args_is_help=True)
    sub.command(SERVE)(serve_cmd)
    sub.command("agreement")(agreement_cmd)
    app.add_typer(sub, name="review")


def serve_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run folders to review.", show_default=False)],
    reviewer: Annotated[
        str, typer.Option("--reviewer", help="Your reviewer name (reviews/<name>.jsonl).", show_default=False)
    ],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 picks a free one).")] = 8766,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
) -> None:
    """Serve the review page (the default form: callbench review RUN_DIR --reviewer NAME). Ctrl-C stops."""
    from callbench.review.store import check_reviewer
    from callbench.types.review import CONSENSUS_REVIEWER

    for run_dir in run_dirs:
        require_run_folder(run_dir)
    check_reviewer(reviewer)
    if reviewer == CONSENSUS_REVIEWER:
        raise ConfigError(
            f"--reviewer: {CONSENSUS_REVIEWER!r} is reserved for consensus entries "
            "(record them with 'callbench review agreement RUN_DIR --consensus NAME')"
        )
    from callbench.review.page import ReviewServer

    server = ReviewServer(list(run_dirs), reviewer, port=port)
    typer.echo(f"reviewing {', '.join(map(str, run_dirs))} as {reviewer} at {server.url} (Ctrl-C to stop)")
    serve_until_stopped(server, open_browser)


def agreement_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run folder with reviews/.", show_default=False)],
    reviewers: Annotated[
        str | None,
        typer.Option(
            "--reviewers", help="Comma-separated reviewers to compare (default: all).", show_default=False
        ),
    ] = None,
    consensus: Annotated[
        str | None,
        typer.Option(
            "--consensus",
            help="Record NAME's decision as the consensus of each unsettled disagreement.",
            show_default=False,
        ),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text, md or json.")] = "text",
    weights: Annotated[str, typer.Option("--weights", help="Rubric criteria's kappa weights.")] = "linear",
    threshold: Annotated[
        int, typer.Option("--threshold", help="Cases of same-reason overturns that make a rule suspect.")
    ] = 3,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples of intervals.")] = 500,
) -> None:
    """Agreement of reviewers (with each other and the automatic verdicts), disagreements, suspects.

    Per scorer and rubric criterion, with 95% intervals; --consensus NAME records NAME's decision
    as the agreed verdict of each unsettled disagreement."""
    require_extra("review", "callbench review agreement")  # before any review is read
    from callbench.review.agreement_report import FORMATS, agreement_report, record_consensus

    require_run_folder(run_dir)
    if format not in FORMATS:
        raise ConfigError(f"--format must be text, md or json, not {format!r}")
    if weights not in ("linear", "quadratic"):
        raise ConfigError(f"--weights must be linear or quadratic, not {weights!r}")
    if threshold < 1 or resamples < 1:
        raise ConfigError("--threshold and --resamples must be at least 1")
    names = [n.strip() for n in reviewers.split(",") if n.strip()] if reviewers is not None else None
    if names is not None and not names:
        raise ConfigError("--reviewers: give comma-separated reviewer names")
    report = agreement_report(
        run_dir,
        names,
        weights="quadratic" if weights == "quadratic" else "linear",
        resamples=resamples,
        threshold=threshold,
    )
    line = None
    if consensus is not None:
        done = record_consensus(report, consensus)
        report.n_consensus += len(done.recorded)
        line = (
            f"consensus: recorded {len(done.recorded)} entr{'y' if len(done.recorded) == 1 else 'ies'} "
            f"taking {consensus}'s decision; {done.already} already settled"
        )
        if done.skipped:
            line += f"; {len(done.skipped)} not decided by {consensus}, left open: {', '.join(done.skipped)}"
    text = report.render(format)
    if format == "json" and line is not None:
        import json

        payload = json.loads(text)
        payload["consensus_recorded"] = line
        text = json.dumps(payload, indent=2)
    typer.echo(text.rstrip("\n"))
    if line is not None and format != "json":
        typer.echo(line)
