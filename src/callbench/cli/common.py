"""Helpers shared by subcommands: the console and the summary table."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

console = Console()
err_console = Console(stderr=True)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def summary_table(summary: dict[str, Any], title: str | None = None) -> Table:
    """Strict accuracy per scorer (tier); partial score shown apart, labelled diagnostic."""
    mode = summary.get("harness_mode")
    table = Table(title=title or f"{summary.get('model', '')}  ·  harness mode: {mode}")
    for column in ("scorer / tier", "n", "passed", "accuracy", "errors", "partial*"):
        table.add_column(column, justify="left" if column == "scorer / tier" else "right", no_wrap=True)
    table.caption = "accuracy: strict pass rate over completed cases; errors: excluded infrastructure failures; " \
                    "*partial: mean diagnostic partial score, never a pass criterion"
    for name, figures in summary.get("tiers", {}).items():
        if not figures["n"] and figures.get("n_not_applicable"):  # e.g. state-match on a stateless executor
            table.add_row(name, "n/a", "n/a", "n/a", str(figures.get("n_error_excluded", 0)), "n/a")
            continue
        table.add_row(name, str(figures["n"]), str(figures["passed"]), _pct(figures["accuracy"]),
                      str(figures.get("n_error_excluded", 0)), _pct(figures["mean_partial_diagnostic"]))
    return table


def print_summary(summary: dict[str, Any], run_dir: Any = None) -> None:
    console.print(summary_table(summary))
    recall = summary.get("retrieval_recall")
    extra = [f"retrieval recall {_pct(recall)}"] if recall is not None else []
    extra.append(f"{summary.get('n_completed', 0)} completed, {summary.get('n_error', 0)} error records")
    usage = summary.get("usage") or {}
    tokens = usage.get("tokens") or {}
    if tokens.get("input") or tokens.get("output") or tokens.get("cache_hits"):  # built-in agents use none
        line = f"{tokens['requests']} requests ({tokens.get('cache_hits', 0)} from cache), " \
               f"{tokens.get('input', 0)} input + {tokens.get('output', 0)} output tokens"
        if usage.get("latency_ms_p50") is not None:
            line += f", latency p50 {usage['latency_ms_p50']:.0f} ms / p95 {usage['latency_ms_p95']:.0f} ms"
        if usage.get("cost_usd") is not None:
            line += f", estimated cost ${usage['cost_usd']:.4f}"
        extra.append(line)
    flags = summary.get("qc_flags") or []
    if flags:
        extra.append(f"{len(flags)} quality-control flag(s) in summary.json")
    console.print("  " + " · ".join(extra))
    for name, aggregate in (summary.get("scorer_aggregates") or {}).items():
        if isinstance(aggregate, dict) and isinstance(aggregate.get("table"), str):
            console.print(f"\n[bold]{name}[/bold]")
            console.print(aggregate["table"], markup=False, highlight=False)
    if run_dir is not None:
        console.print(f"  run folder: {run_dir}  (run.json, records.jsonl, summary.json)")
