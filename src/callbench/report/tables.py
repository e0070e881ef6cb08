"""Leaderboard and summary tables as Markdown, CSV or JSON (``callbench show`` / ``compare``).

Rows are always per (tier, harness mode): a table never shows a figure pooled across them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from callbench.errors import ConfigError
from callbench.harness.runfolder import RunFolder, read_run
from callbench.harness.usage import cost_text, usd
from callbench.report.overview import comparisons, usage_of
from callbench.report.payload import header_payload, run_statistics, statistics_payload
from callbench.report.serving import summary_serving_lines
from callbench.report.terminal import percent, tenths
from callbench.review.tables import reviewed_rows
from callbench.types.summary import GroupStatistics, RunUsage, Stratum, Summary, Table

if TYPE_CHECKING:
    from callbench.review.suspects import Suspect

ShowFormat = Literal["md", "csv", "json"]

COLUMNS = [
    "run",
    "model",
    "tier",
    "diagnostic",
    "harness_mode",
    "group",
    "n",
    "passed",
    "accuracy",
    "ci_low",
    "ci_high",
    "ci_method",
    "errors",
    "partial_diagnostic",
    "trials",
    "pass_at_k",
    "pass_hat_k",
    "flip_rate",
]


def stratum_rows(run: RunFolder, *, categories: bool = True) -> list[dict[str, Any]]:
    """One row per stratum (``group`` = ``all``), then per category when asked."""
    model = run.header.model if run.header is not None else ""
    diagnostic = set(run.header.diagnostic_scorers) if run.header is not None else set()
    rows = []
    for s in run_statistics(run).strata:
        base = {
            "run": run.path.name,
            "model": model,
            "tier": s.tier,
            "diagnostic": s.tier in diagnostic,  # shown beside the tiers, never a pass criterion
            "harness_mode": s.harness_mode,
        }
        rows.append(base | _figures(s, "all") | _stratum_extras(s))
        if categories:
            for name, c in s.by_category.items():
                rows.append(base | _figures(c, f"category:{name}"))
    return rows


# Rows keep the unrounded figures: each output rounds once, when it writes them (CSV to four digits,
# Markdown and the terminal to one decimal of a percent), so two views of one run never disagree.


def _stratum_extras(s: Stratum) -> dict[str, Any]:
    k = s.trials.trials
    repeated = k > 1
    return {
        "errors": s.errors,
        "partial_diagnostic": s.partial_mean_diagnostic,
        "trials": k,
        "pass_at_k": s.trials.pass_at_k.get(str(k)) if repeated else None,
        "pass_hat_k": s.trials.pass_hat_k.get(str(k)) if repeated else None,
        "flip_rate": s.trials.flip_rate if repeated else None,
    }


def _figures(group: Stratum | GroupStatistics, label: str) -> dict[str, Any]:
    acc = group.accuracy
    return {
        "group": label,
        "n": group.n,
        "passed": group.passed,
        "accuracy": acc.estimate,
        "ci_low": acc.low,
        "ci_high": acc.high,
        "ci_method": acc.method,
    }


CSV_DIGITS = 4
"""Decimals of the fractions (and points) written to CSV files."""


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    """CSV with a header line; missing values are empty cells, floats rounded to :data:`CSV_DIGITS`."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(row.get(k), k) for k in columns})
    return buf.getvalue()


def _csv_cell(value: Any, key: str = "") -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return round(value, COST_DIGITS if key in COST_KEYS else CSV_DIGITS)
    return value


def to_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    """A GitHub-flavoured Markdown table; ``|`` in values is escaped."""
    head = "| " + " | ".join(title for _key, title in columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(_md_cell(row, key) for key, _title in columns) + " |" for row in rows]
    return "\n".join([head, rule, *body]) + "\n"


PERCENT_KEYS = frozenset(
    {
        "accuracy",
        "partial_diagnostic",
        "pass_at_k",
        "pass_hat_k",
        "flip_rate",
        "automatic_accuracy",
        "reviewed_accuracy",
    }
)
"""Row fields that are fractions, shown as percentages with one decimal (one rounding rule)."""


def _md_cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if key in PERCENT_KEYS and value is not None:
        text = percent(value)
    elif key == "tier" and row.get("diagnostic"):
        text = f"{value} (diagnostic)"
    elif key == "ci" and row.get("ci_low") is not None:
        text = f"{tenths(100 * row['ci_low'])}–{percent(row['ci_high'])}"
    elif key == "mcnemar_p" and value is not None:
        text = f"{value:.3g}"
    elif key in COST_KEYS:
        text = usd(value)
    elif isinstance(value, float):
        text = tenths(value)  # differences in percentage points
    else:
        text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


SHOW_COLUMNS = [
    ("tier", "Tier"),
    ("harness_mode", "Harness mode"),
    ("group", "Group"),
    ("n", "n"),
    ("passed", "Passed"),
    ("accuracy", "Strict accuracy"),
    ("ci", "95% CI"),
    ("errors", "Errors"),
    ("partial_diagnostic", "Partial (diagnostic)"),
    ("trials", "Trials"),
    ("pass_at_k", "pass@k"),
    ("pass_hat_k", "pass^k"),
    ("flip_rate", "Flip rate"),
]
BOARD_COLUMNS = [
    ("rank_text", "#"),
    ("model", "Model"),
    ("run", "Run"),
    ("tier", "Tier"),
    ("harness_mode", "Harness mode"),
    ("n", "n"),
    ("accuracy", "Strict accuracy"),
    ("ci", "95% CI"),
    ("errors", "Errors"),
    ("partial_diagnostic", "Partial (diagnostic)"),
    ("cost_usd", "Cost (USD)"),
    ("cost_per_pass", "Cost per passed case (USD)"),
]


def table_markdown(table: Table) -> str:
    """A scorer's display table as Markdown: its title in bold, the table, then its notes.

    A table with no columns (a schema-1 text table) is shown as preformatted text.
    """
    parts = [f"**{_md_text(table.title)}**\n"] if table.title else []
    if table.columns:
        head = "| " + " | ".join(_md_text(c) for c in table.columns) + " |"
        rule = (
            "|"
            + "|".join("---:" if table.alignment(i) == "right" else "---" for i in range(len(table.columns)))
            + "|"
        )
        body = ["| " + " | ".join(_md_text(cell) for cell in row) + " |" for row in table.rows]
        parts.append("\n".join([head, rule, *body]) + "\n")
        parts.extend(f"{_md_text(note)}\n" for note in table.notes)  # one paragraph each
    elif table.notes:
        parts.append("```text\n" + "\n".join(table.notes) + "\n```\n")
    return "\n".join(parts)


def _md_text(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def aggregates_markdown(summary: Summary | None) -> str:
    """Each scorer aggregate's tables under a heading naming the scorer ('' when there are none)."""
    if summary is None:
        return ""
    out = []
    for name, aggregate in summary.scorer_aggregates.items():
        if aggregate.tables:
            out.append(f"#### {name}\n\n" + "\n".join(table_markdown(t) for t in aggregate.tables))
    return "\n".join(out)


REVIEW_COLUMNS = [
    ("tier", "Tier"),
    ("n", "n"),
    ("automatic_accuracy", "Automatic accuracy"),
    ("reviewed_accuracy", "Reviewed accuracy"),
    ("n_reviewed", "Reviewed"),
    ("n_agreed", "Agreed"),
    ("overturned", "Overturned (→pass/→fail)"),
    ("n_disputed", "Disputed"),
    ("n_unsure", "Unsure"),
    ("n_awaiting", "Awaiting"),
    ("n_stale", "Stale"),
    ("overturns_by_reason", "Overturns by reason"),
]
"""The reviewed-accuracy table of ``show``: beside the automatic figures, never instead of them."""

REVIEW_CSV_COLUMNS = [
    "reviewed_accuracy",
    "reviewed_passed",
    "n_reviewed",
    "n_overturned",
    "overturned_to_pass",
    "overturned_to_fail",
    "n_disputed",
    "n_awaiting",
    "n_stale",
    "overturns_by_reason",
]
"""Extra CSV columns of ``show`` for a run with reviews (filled on each tier's ``all`` row)."""


def _reviewed_markdown(rows: list[dict[str, Any]], suspects: list[str]) -> str:
    text = "**Reviewed accuracy** (beside the automatic figures; reviews in reviews/)\n\n"
    text += to_markdown(rows, REVIEW_COLUMNS)
    if suspects:
        text += "\n**Suspects**\n\n" + "".join(f"- {_md_text(line)}\n" for line in suspects)
    return text


def _with_reviews_csv(rows: list[dict[str, Any]], reviewed: list[dict[str, Any]]) -> str:
    by_tier = {r["tier"]: r for r in reviewed}
    for row in rows:
        extra = by_tier.get(row["tier"]) if row["group"] == "all" else None
        if extra is not None:
            row.update({k: extra[k] for k in REVIEW_CSV_COLUMNS})
    if "rubric" in by_tier:  # manual cases: no automatic stratum, a row of their own
        rubric = by_tier["rubric"]
        rows.append({"run": rows[0]["run"] if rows else "", "tier": "rubric", "group": "manual"} | rubric)
    return to_csv(rows, [*COLUMNS, *REVIEW_CSV_COLUMNS])


def reviews_payload(reviewed: list[dict[str, Any]], suspects: Sequence[Suspect]) -> dict[str, Any]:
    """The JSON of a run's reviews: reviewed accuracy per scorer (beside the automatic figures) and
    the suspects (rows from :func:`reviewed_rows`, suspects from ``find_suspects``)."""
    hidden = ("tier", "overturned", "overturns_by_reason_counts")
    return {
        "reviewed_accuracy": {
            r["tier"]: {k: v for k, v in r.items() if k not in hidden}
            | {"overturns_by_reason": r["overturns_by_reason_counts"]}
            for r in reviewed
        },
        "suspects": [s.as_dict() for s in suspects],
    }


def render_show(run_dir: str | Path, fmt: str) -> str:
    """The run's figures as ``md``, ``csv`` or ``json`` text (for ``callbench show --format``).

    A run folder with reviews also gets, per tier, reviewed accuracy beside automatic accuracy and the
    overturned verdicts per reason code (a table in md, extra columns in csv, ``reviews`` in json);
    the automatic figures are never replaced.
    """
    run = read_run(run_dir)
    reviewed = reviewed_rows(run.path) if fmt in ("json", "csv", "md") else []
    suspects: list[str] = []
    if reviewed and fmt in ("json", "md"):
        from callbench.review.suspects import find_suspects

        found = find_suspects(run.path)
        suspects = [s.text for s in found]
    if fmt == "json":
        payload: dict[str, Any] = {
            "run": run.path.name,
            "header": header_payload(run),
            "statistics": statistics_payload(run_statistics(run)),
            "usage": usage_of(run)[0].model_dump(mode="json", exclude_unset=True),
        }
        if reviewed:
            payload["reviews"] = reviews_payload(reviewed, found)
        return json.dumps(payload, indent=2, default=str)
    rows = stratum_rows(run)
    if fmt == "csv":
        return _with_reviews_csv(rows, reviewed) if reviewed else to_csv(rows)
    if fmt == "md":
        text = f"### {run.label}\n\n" + to_markdown(rows, SHOW_COLUMNS)
        serving = summary_serving_lines(run.summary) if run.summary is not None else []
        if serving:  # serving faults and run limits, apart from the accuracy figures
            items = "".join(f"- {_md_text(line)}\n" for line in serving)
            text += "\nServing faults and run limits:\n\n" + items
        usage = usage_of(run)[0]
        if usage.tokens.input or usage.tokens.output or usage.cost_usd is not None:
            text += f"\n{_md_text(cost_text(usage))}\n"  # cost per case and per passed case
        if reviewed:
            text += "\n" + _reviewed_markdown(reviewed, suspects)
        tables = aggregates_markdown(run.summary)
        return f"{text}\n{tables}" if tables else text
    raise ConfigError(f"--format: unknown format {fmt!r} (choose md, csv or json)")


def leaderboard_rows(runs: Sequence[RunFolder]) -> list[dict[str, Any]]:
    """Overall rows of every run, ranked within each (tier, harness mode) without ranking ties
    (:func:`callbench.report.overview.leaderboard`: rank = 1 + runs significantly better; ``tied``
    marks a shared rank, shown as ``=2``)."""
    from callbench.report.overview import leaderboard

    stats = [run_statistics(run) for run in runs]
    ranks = {(r["run"], r["tier"], r["harness_mode"]): r for r in leaderboard(runs, stats)}
    rows = []
    for index, run in enumerate(runs):
        usage = usage_of(run)[0]
        for row in stratum_rows(run, categories=False):
            ranked = ranks[(index, row["tier"], row["harness_mode"])]
            rows.append(
                row | {key: ranked[key] for key in ("rank", "tied", "rank_text")} | cost_cells(usage, row)
            )
    unranked_last = len(runs) + 1
    rows.sort(
        key=lambda r: (r["tier"], r["harness_mode"], r["rank"] or unranked_last, -(r["accuracy"] or 0.0))
    )
    return rows


COST_KEYS = frozenset({"cost_usd", "cost_per_case", "cost_per_pass"})
"""Row fields in US dollars: Markdown shows them as ``$0.0123`` (``–`` when unknown), CSV keeps
:data:`COST_DIGITS` decimals."""
COST_DIGITS = 8


def cost_cells(usage: RunUsage, row: dict[str, Any]) -> dict[str, Any]:
    """A leaderboard row's cost figures: the run's cost, its mean per case, and its cost per passed
    case under the row's tier (the run's whole cost / the tier's passed cases: failed cases and error
    records are paid for too); ``cost_note`` says why one is missing."""
    if usage.cost_usd is None:
        why = usage.cost_missing or "no price table entry for this model (--price-table)"
        return {"cost_usd": None, "cost_per_case": None, "cost_per_pass": None, "cost_note": why}
    per_case = usage.cost_per_case_mean
    if usage.cost_per_pass is not None and row["tier"] in usage.cost_per_pass:
        per_pass = usage.cost_per_pass[row["tier"]].cost_usd
    else:  # a diagnostic tier, or a summary written before cost per pass was kept
        per_pass = usage.cost_usd / row["passed"] if row.get("passed") else None
    note = None if per_pass is not None else f"no {row['tier']} case passed"
    return {
        "cost_usd": usage.cost_usd,
        "cost_per_case": per_case,
        "cost_per_pass": per_pass,
        "cost_note": note,
    }


PAIR_COLUMNS = [
    ("a", "A"),
    ("b", "B"),
    ("tier", "Tier"),
    ("harness_mode", "Harness mode"),
    ("n", "Shared cases"),
    ("diff", "A − B (pts)"),
    ("diff_ci", "95% CI (pts)"),
    ("mcnemar_p", "McNemar p"),
    ("discordant", "only A / only B"),
    ("decision", "Decision (declared test)"),
    ("mde_pts", "Detectable (pts, 80% power)"),
    ("noise_pts", "Noise floor (pts)"),
    ("lost", "Lost to errors A / B"),
]


def pair_rows(runs: Sequence[RunFolder]) -> list[dict[str, Any]]:
    """Paired comparisons as flat rows (differences in percentage points)."""
    out = []
    for c in comparisons(runs):
        d = c["difference"]
        out.append(
            {
                "a": c["a"],
                "b": c["b"],
                "tier": c["tier"],
                "harness_mode": c["harness_mode"],
                "n": c["n"],
                "diff": 100 * d["estimate"],
                "diff_low": 100 * d["low"],
                "diff_high": 100 * d["high"],
                "diff_ci": f"{tenths(100 * d['low'])} – {tenths(100 * d['high'])}",
                "mcnemar_p": float(f"{c['mcnemar_p']:.4g}"),
                "only_a": c["only_a"],
                "only_b": c["only_b"],
                "discordant": f"{c['only_a']} / {c['only_b']}",
                "test": c["test"],
                "significant": c["significant"],
                "decision": c["decision"],
                "errors_a": c["errors_a"],
                "errors_b": c["errors_b"],
                "lost": f"{c['errors_a']} / {c['errors_b']}",
                "mde": c["mde"],
                "noise_floor": c["noise_floor"],
                "mde_pts": "—" if c["mde"] is None else tenths(100 * c["mde"]),
                "noise_pts": "—" if c["noise_floor"] is None else f"±{tenths(100 * c['noise_floor'])}",
                "disagreeing": " ".join(c["disagreeing"]),
            }
        )
    return out


def _cost_notes(board: Sequence[dict[str, Any]]) -> str:
    """Under the leaderboard: why a run has no cost, or a tier no cost per passed case (one line each)."""
    lines = dict.fromkeys(
        f"- {row['run']}: cost – ({row['cost_note']})" for row in board if row.get("cost_note")
    )
    if not lines:
        return ""
    intro = (
        "\nCost per passed case = the run's whole cost (failed cases and error records included) / "
        "the tier's passed cases.\n\n"
    )
    return intro + "".join(_md_text(line) + "\n" for line in lines)


def render_compare(run_dirs: Sequence[str | Path], fmt: str = "md", *, pairs: bool = True) -> str:
    """Leaderboard (and paired comparisons) of several runs as ``md`` or ``csv``."""
    if not run_dirs:
        raise ConfigError("give at least one run directory")
    runs = [read_run(d) for d in run_dirs]
    board = leaderboard_rows(runs)
    pair = pair_rows(runs) if pairs and len(runs) > 1 else []
    if fmt == "csv":
        text = to_csv(board, ["rank", "tied", *COLUMNS, "cost_usd", "cost_per_case", "cost_per_pass"])
        if pair:
            cols = [
                "a",
                "b",
                "tier",
                "harness_mode",
                "n",
                "diff",
                "diff_low",
                "diff_high",
                "mcnemar_p",
                "only_a",
                "only_b",
                "test",
                "significant",
                "decision",
                "errors_a",
                "errors_b",
                "mde",
                "noise_floor",
                "disagreeing",
            ]
            text += "\n" + to_csv(pair, cols)
        return text
    if fmt == "md":
        text = "## Leaderboard\n\n" + to_markdown(board, BOARD_COLUMNS) + _cost_notes(board)
        if pair:
            text += "\n## Paired comparisons\n\n" + to_markdown(pair, PAIR_COLUMNS)
        return text
    raise ConfigError(f"--format: unknown format {fmt!r} (choose md or csv)")
