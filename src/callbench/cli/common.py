"""Helpers shared by subcommands: the console, the summary table and scorers' display tables."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from callbench.errors import UserError

if TYPE_CHECKING:
    from callbench.report.local_server import LocalServer
    from callbench.types.summary import Summary, Table

# The summary types (pydantic), the usage helpers and the report's formatting rules are imported in
# the functions that print a run: every command imports this module, and `--help` must not pay
# for them (tests/cli/test_startup_imports.py).

console = Console()
err_console = Console(stderr=True)


def _pct(value: float | None) -> str:
    from callbench.report.terminal import percent

    return "-" if value is None else percent(value)  # the rounding rule of every printed figure


def only_tiers(summary: Summary, only: Collection[str]) -> Summary:
    """``summary`` with only the named scorers' rows and tables (all of them for none or ``all``).

    Re-scoring keeps the verdicts of the tiers not asked for, so the stored summary holds them all;
    showing them too would look as if ``--tier`` did nothing.
    """
    names = set(only)
    if not names or "all" in names or not names & set(summary.tiers):
        return summary
    tiers = {name: figures for name, figures in summary.tiers.items() if name in names}
    aggregates = {name: agg for name, agg in summary.scorer_aggregates.items() if name in names}
    return summary.model_copy(update={"tiers": tiers, "scorer_aggregates": aggregates})


def require_run_folder(path: Path) -> Path:
    """``path`` when it is a folder; else one line saying it does not exist (or is a file).

    Raises:
        UserError: no such folder.
    """
    if not path.exists():
        raise UserError(f"no such run folder: {path}")
    if not path.is_dir():
        raise UserError(f"{path}: not a run folder (a file; give the folder holding run.json)")
    return path


def run_folder_path(raw: str) -> Path:
    """Parse ``run -o/--out``: a path, refusing the ``KEY=VALUE`` that ``-o`` used to mean.

    ``-o`` was ``--option`` for ``run`` and the output path everywhere else; it is the output path
    everywhere now. A value like ``limit=2`` with no ``/`` is an old habit, and taking it as a folder
    name would silently drop the suite option: say so instead. A folder whose name holds ``=`` is
    still possible as a path with a ``/`` (``./limit=2``).

    Raises:
        typer.BadParameter: for ``KEY=VALUE`` without a path separator.
    """
    if "=" in raw and "/" not in raw and os.sep not in raw:
        raise typer.BadParameter(
            f"{raw!r} looks like a suite option: -o is the run folder (--out) now; write --option {raw} "
            f"(for a folder of that name, write ./{raw})"
        )
    return Path(raw)


def shorten(text: str, width: int) -> str:
    """``text`` cut at the last word boundary within ``width`` characters, ``…`` marking the cut."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0] if " " in text[: width - 1] else text[: width - 1]
    return cut.rstrip(" ,;:.-") + "…"


def as_summary(summary: Summary | Mapping[str, Any]) -> Summary:
    """A typed summary from either form (``RunResult.summary`` is the JSON object)."""
    from callbench.types.summary import Summary

    return summary if isinstance(summary, Summary) else Summary.from_json_dict(summary)


EXECUTION_TIERS = ("real-tool-execution", "task-completion-execution")
"""The tiers whose verdicts rest on what the tools returned."""
SYNTHETIC = "synthetic results: no tool ran"


def synthetic_suites(run_dir: Any) -> list[str]:
    """The suites of the run in ``run_dir`` whose tools answered with synthetic results (the
    ``contract`` executor): their execution tiers judged no real execution."""
    if run_dir is None:
        return []
    from callbench.harness.runfolder import read_header

    try:
        header = read_header(Path(run_dir))
    except Exception:  # noqa: BLE001 - a folder without a readable run.json: nothing to say
        return []
    return [info.name for info in header.suites if info.executor == "contract"]


def summary_table(
    summary: Summary | Mapping[str, Any], title: str | None = None, synthetic: Collection[str] = ()
) -> RichTable:
    """Strict accuracy per scorer (tier); partial score shown apart, labelled diagnostic. With
    ``synthetic`` (suites whose tools gave synthetic results), the execution tiers' rows say so."""
    summary = as_summary(summary)
    table = RichTable(title=title or f"{summary.model}  ·  harness mode: {summary.harness_mode}")
    # Cases cut at the output limit or over the context window: accuracy without them, beside.
    limits = any(f.n_serving_limited for f in summary.tiers.values())
    columns = ["scorer / tier", "n", "passed", "accuracy", "errors", "partial*"]
    if limits:
        columns[4:4] = ["limited†", "w/o limited†"]
    for column in columns:
        first = column == "scorer / tier"  # may wrap: "<name> (diagnostic)" on a narrow terminal
        table.add_column(column, justify="left" if first else "right", no_wrap=not first)
    table.caption = (
        "accuracy: strict pass rate over completed cases; errors: excluded infrastructure "
        "failures; *partial: mean diagnostic partial score, never a pass criterion"
    )
    if limits:
        table.caption += (
            "; †limited: cases cut at the output token limit or refused for the context window, "
            "and the accuracy without them"
        )
    if synthetic:
        table.caption += f"; ‡{SYNTHETIC} in {', '.join(synthetic)}: execution tiers judged contract results"
    for name, figures in summary.tiers.items():
        marked = name in EXECUTION_TIERS and bool(synthetic)
        name = f"{name} (diagnostic)" if figures.diagnostic else name  # shown, never a pass criterion
        name = f"{name} ‡" if marked else name
        without = figures.accuracy_without_serving_limits if figures.n_serving_limited else figures.accuracy
        extra = [str(figures.n_serving_limited), _pct(without)] if limits else []
        if not figures.n and figures.n_not_applicable:  # e.g. state-match on a stateless executor
            na = ["n/a"] * len(extra)
            table.add_row(name, "n/a", "n/a", "n/a", *na, str(figures.n_error_excluded), "n/a")
            continue
        table.add_row(
            name,
            str(figures.n),
            str(figures.passed),
            _pct(figures.accuracy),
            *extra,
            str(figures.n_error_excluded),
            _pct(figures.mean_partial_diagnostic),
        )
    return table


def rich_table(table: Table) -> RichTable:
    """A scorer's display table for the terminal: plain text cells (never console markup),
    separated by one space like a text table, right-aligned where the scorer says."""
    out = RichTable(box=None, pad_edge=False, padding=(0, 0, 0, 1), show_edge=False, header_style="bold")
    for i, column in enumerate(table.columns):
        out.add_column(Text(column), justify=table.alignment(i), overflow="fold")  # narrow terminals: wrap
    for row in table.rows:
        out.add_row(*(Text(cell) for cell in row))
    return out


def print_tables(name: str, tables: list[Table]) -> None:
    """Print a scorer's tables under its name: title, table, notes below."""
    console.print(Text(f"\n{name}", style="bold"))
    for table in tables:
        if table.title:
            console.print(Text(table.title, style="bold"))
        if table.columns:
            console.print(rich_table(table))
        for note in table.notes:
            console.print(Text(note))


def print_summary(
    summary: Summary | Mapping[str, Any], run_dir: Any = None, only: Collection[str] = ()
) -> None:
    """The run's summary table, a line of totals (usage, QC flags) and each scorer's own tables.

    ``only``: the scorers/tiers to show (``score --tier X``), all of them when empty or ``all``.
    """
    from callbench.harness.usage import conversations_text, cost_text, requests_text, tokens_text
    from callbench.report.serving import serving_lines

    summary = only_tiers(as_summary(summary), only)
    console.print(summary_table(summary, synthetic=synthetic_suites(run_dir)))
    recall = summary.retrieval_recall
    extra = [f"retrieval recall {_pct(recall)}"] if recall is not None else []
    extra.append(f"{summary.n_completed} completed, {summary.n_error} error records")
    usage = summary.usage
    tokens = usage.tokens if usage is not None else None
    counters = summary.requests or {}
    cost_line = None
    if (
        usage is not None
        and tokens is not None
        and (tokens.input or tokens.output or tokens.cache_hits or counters.get("requests"))
    ):
        # built-in agents use no tokens and send no request: the line is left out for them
        line = f"{requests_text(tokens, counters)}, {tokens_text(tokens)}"
        if usage.latency_ms_p50 is not None and usage.latency_ms_p95 is not None:
            line += f", latency p50 {usage.latency_ms_p50:.0f} ms / p95 {usage.latency_ms_p95:.0f} ms"
            line += " per request"
        if usage.case_latency_ms_p50 is not None and usage.case_latency_ms_p95 is not None:
            line += f", {usage.case_latency_ms_p50:.0f} ms / {usage.case_latency_ms_p95:.0f} ms per case"
        extra.append(line)
        cost_line = cost_text(usage, set(summary.tiers))  # below: cost per passed case per strict tier
    if summary.qc_flags:
        extra.append(f"{len(summary.qc_flags)} quality-control flag(s) in summary.json")
    serving = serving_lines(summary.serving)  # the table has the accuracy without the limited cases
    if summary.n_manual:
        extra.append(f"{summary.n_manual} manual case(s) awaiting review")
    console.print("  " + " · ".join(extra))
    if cost_line is not None:
        console.print(Text(f"  {cost_line}"))
    conversations = conversations_text(usage.conversations if usage is not None else None)
    if conversations is not None:  # the agent's and the simulated user's tokens apart
        console.print(f"  tokens {conversations}")
    for line in serving:  # serving faults and run limits, apart from the accuracy figures
        console.print(Text(f"  serving: {line}", style="yellow"))
    if summary.n_error and run_dir is not None:  # say why cases errored (issue 13, item 7)
        from callbench.report.watch import run_error_causes

        for cause in run_error_causes(run_dir):
            console.print(Text(f"  error records: {cause}", style="red"))
    for name, aggregate in summary.scorer_aggregates.items():
        if aggregate.tables:
            print_tables(name, aggregate.tables)
    if run_dir is not None:
        console.print(f"  run folder: {run_dir}  (run.json, records.jsonl, summary.json)")


def serve_until_stopped(server: LocalServer, open_browser: bool = False) -> None:
    """Serve a page server until Ctrl-C, opening the default browser on it first when asked."""
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
