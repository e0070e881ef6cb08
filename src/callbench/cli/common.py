"""Helpers shared by subcommands: the console, the summary table and scorers' display tables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from callbench.types.summary import Summary, Table

console = Console()
err_console = Console(stderr=True)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def as_summary(summary: Summary | Mapping[str, Any]) -> Summary:
    """A typed summary from either form (``RunResult.summary`` is the JSON object)."""
    return summary if isinstance(summary, Summary) else Summary.from_json_dict(summary)


def summary_table(summary: Summary | Mapping[str, Any], title: str | None = None) -> RichTable:
    """Strict accuracy per scorer (tier); partial score shown apart, labelled diagnostic."""
    summary = as_summary(summary)
    table = RichTable(title=title or f"{summary.model}  ·  harness mode: {summary.harness_mode}")
    for column in ("scorer / tier", "n", "passed", "accuracy", "errors", "partial*"):
        first = column == "scorer / tier"  # may wrap: "<name> (diagnostic)" on a narrow terminal
        table.add_column(column, justify="left" if first else "right", no_wrap=not first)
    table.caption = (
        "accuracy: strict pass rate over completed cases; errors: excluded infrastructure "
        "failures; *partial: mean diagnostic partial score, never a pass criterion"
    )
    for name, figures in summary.tiers.items():
        name = f"{name} (diagnostic)" if figures.diagnostic else name  # shown, never a pass criterion
        if not figures.n and figures.n_not_applicable:  # e.g. state-match on a stateless executor
            table.add_row(name, "n/a", "n/a", "n/a", str(figures.n_error_excluded), "n/a")
            continue
        table.add_row(
            name,
            str(figures.n),
            str(figures.passed),
            _pct(figures.accuracy),
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


def print_summary(summary: Summary | Mapping[str, Any], run_dir: Any = None) -> None:
    """The run's summary table, a line of totals (usage, QC flags) and each scorer's own tables."""
    summary = as_summary(summary)
    console.print(summary_table(summary))
    recall = summary.retrieval_recall
    extra = [f"retrieval recall {_pct(recall)}"] if recall is not None else []
    extra.append(f"{summary.n_completed} completed, {summary.n_error} error records")
    usage = summary.usage
    tokens = usage.tokens if usage is not None else None
    if usage is not None and tokens is not None and (tokens.input or tokens.output or tokens.cache_hits):
        # built-in agents use no tokens: the line is left out for them
        line = (
            f"{tokens.requests} requests ({tokens.cache_hits} from cache), "
            f"{tokens.input} input + {tokens.output} output tokens"
        )
        if usage.latency_ms_p50 is not None and usage.latency_ms_p95 is not None:
            line += f", latency p50 {usage.latency_ms_p50:.0f} ms / p95 {usage.latency_ms_p95:.0f} ms"
        if usage.cost_usd is not None:
            line += f", estimated cost ${usage.cost_usd:.4f}"
        extra.append(line)
    if summary.qc_flags:
        extra.append(f"{len(summary.qc_flags)} quality-control flag(s) in summary.json")
    console.print("  " + " · ".join(extra))
    for name, aggregate in summary.scorer_aggregates.items():
        if aggregate.tables:
            print_tables(name, aggregate.tables)
    if run_dir is not None:
        console.print(f"  run folder: {run_dir}  (run.json, records.jsonl, summary.json)")
