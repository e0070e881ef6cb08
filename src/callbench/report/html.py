"""Self-contained HTML dashboard: one file, no network, all model output escaped.

The records are embedded as JSON in a ``<script type="application/json">`` element and rendered
client-side (text nodes only), rows lazily, so reports over 10,000 cases stay responsive.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from callbench.errors import PoolingError, UserError
from callbench.report.rundata import RunData, attach_expected, read_run
from callbench.stats import compare_runs, statistics_summary, strata

MAX_TEXT = 4000
"""Long tool results and texts are cut in the report (the run directory keeps them whole)."""

# JSON inside <script> must not contain "</script>" or "<!--"; escaping <, > and & as \u
# sequences keeps the JSON identical after parsing and makes breaking out impossible.
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def script_json(value: Any) -> str:
    """Serialise ``value`` for embedding inside a ``<script>`` element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).translate(_SCRIPT_ESCAPES)


def slim_record(record: dict[str, Any]) -> dict[str, Any]:
    """Copy of a record with very long strings and results shortened for the page."""
    return _shorten(record)


def _shorten(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + f"… [{len(value) - MAX_TEXT} more chars]"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def run_statistics(run: RunData) -> dict[str, Any]:
    """The run's statistics: those in ``summary.json`` when present, else computed."""
    stored = (run.summary or {}).get("statistics")
    if isinstance(stored, dict) and "strata" in stored:
        return stored
    return statistics_summary(run.records)


def leaderboard(runs: Sequence[RunData], stats: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows ranked by strict accuracy within each (tier, harness mode); never across them."""
    rows = []
    for run, st in zip(runs, stats, strict=True):
        for s in st["strata"]:
            acc = s["accuracy"]
            rows.append(
                {
                    "label": run.label,
                    "tier": s["tier"],
                    "harness_mode": s["harness_mode"],
                    "accuracy": acc["estimate"],
                    "low": acc["low"],
                    "high": acc["high"],
                    "n": s["n"],
                    "errors": s["errors"],
                    "partial": s.get("partial_mean_diagnostic"),
                }
            )
    rows.sort(key=lambda r: (r["tier"], r["harness_mode"], -r["accuracy"]))
    rank, prev = 0, None
    for row in rows:
        group = (row["tier"], row["harness_mode"])
        rank = 1 if group != prev else rank + 1
        row["rank"], prev = rank, group
    return rows


def comparisons(runs: Sequence[RunData], notes: list[str] | None = None) -> list[dict[str, Any]]:
    """Paired comparisons for every pair of runs, per tier and harness mode they share.

    Pairs with no (tier, harness mode) in common are not compared; a line saying so is appended
    to ``notes`` when given.
    """
    out = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            groups_a, groups_b = strata(a.records), strata(b.records)
            if notes is not None and groups_a and groups_b and not set(groups_a) & set(groups_b):
                notes.append(f"{a.label} and {b.label} share no tier and harness mode; not compared (never pooled)")
            for key in sorted(set(groups_a) & set(groups_b)):
                try:
                    cmp = compare_runs(groups_a[key], groups_b[key], key[0])
                except PoolingError:
                    continue
                if cmp["n"]:
                    out.append(cmp | {"a": a.label, "b": b.label})
    return out


def build_payload(runs: Sequence[RunData], *, live: bool = False) -> dict[str, Any]:
    """Everything the page script needs, as plain JSON-able data."""
    stats = [run_statistics(r) for r in runs]
    notes: list[str] = []
    pairs = comparisons(runs, notes) if len(runs) > 1 else []
    return {
        "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "live": live,
        "runs": [
            {
                "id": f"run{i}",
                "label": run.label,
                "header": _shorten(run.header),
                "statistics": st,
                "records": [slim_record(r) for r in run.records],
                "offset": run.offset,
            }
            for i, (run, st) in enumerate(zip(runs, stats, strict=True))
        ],
        "leaderboard": leaderboard(runs, stats) if len(runs) > 1 else [],
        "comparisons": pairs,
        "notes": notes,
    }


def _asset(name: str) -> str:
    return resources.files("callbench.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def render_html(payload: dict[str, Any], title: str = "callbench report") -> str:
    """Render the dashboard page for a payload from :func:`build_payload`."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(_asset("report.html.j2"))
    return template.render(
        title=title,
        css=jinja2.utils.markupsafe.Markup(_asset("report.css")),
        js=jinja2.utils.markupsafe.Markup(_asset("report.js")),
        data_json=jinja2.utils.markupsafe.Markup(script_json(payload)),
    )


def write_report(run_dirs: Sequence[str | Path], output: str | Path, title: str | None = None) -> Path:
    """Write the self-contained report for one or more run directories.

    Raises:
        UserError: when no run directory is given or one is unreadable.
    """
    if not run_dirs:
        raise UserError("give at least one run directory")
    runs = [read_run(d) for d in run_dirs]
    for run in runs:
        attach_expected(run)
    _dedupe_labels(runs)
    out = Path(output)
    page = render_html(build_payload(runs), title or "callbench report")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


def _dedupe_labels(runs: Sequence[RunData]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        count = seen.get(run.label, 0)
        seen[run.label] = count + 1
        if count:
            run.label = f"{run.label} #{count + 1}"
