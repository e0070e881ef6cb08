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
from callbench.harness.runfolder import RunFolder, bulk_load, read_run
from callbench.stats import compare_runs, record_view, statistics_summary, strata
from callbench.types.records import CaseRecord
from callbench.types.summary import Statistics

MAX_TEXT = 4000
"""Long tool results and texts are cut in the report (the run directory keeps them whole)."""

# JSON inside <script> must not contain "</script>" or "<!--"; escaping <, > and & as \u
# sequences keeps the JSON identical after parsing and makes breaking out impossible.
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def script_json(value: Any) -> str:
    """Serialise ``value`` for embedding inside a ``<script>`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.translate(_SCRIPT_ESCAPES)


def record_payload(record: CaseRecord) -> dict[str, Any]:
    """The page's JSON for one record: the fields the record was written with (a record of an older
    schema keeps its shape, so the page's fallbacks still apply), very long strings shortened.

    The one place records become page data, for the static report and the live view alike.
    """
    return _shorten_in_place(record.model_dump(mode="json", exclude_unset=True, fallback=str))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… [{len(text) - MAX_TEXT} more chars]"


def _shorten(value: Any) -> Any:
    """A copy of ``value`` with its long strings cut."""
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def _shorten_in_place(value: Any) -> Any:
    """Cut the long strings of a fresh JSON tree in place (no copy: 10,000-record reports stay fast)."""
    items = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    for key, item in items:
        kind = type(item)
        if kind is str:
            if len(item) > MAX_TEXT:
                value[key] = _cut(item)
        elif kind is dict or kind is list:
            _shorten_in_place(item)
    return value


def run_statistics(run: RunFolder) -> Statistics:
    """The run's statistics: those in ``summary.json`` when present, else computed from the records."""
    if run.summary is not None and run.summary.statistics is not None:
        return run.summary.statistics
    return compute_statistics(run.records)


def compute_statistics(records: list[CaseRecord]) -> Statistics:
    """Statistics of records (the latest of each (case, trial)), as in ``summary.json``."""
    return Statistics.model_validate(statistics_summary(records))


def statistics_payload(statistics: Statistics) -> dict[str, Any]:
    """The page's JSON for a run's statistics (the keys they were computed or stored with)."""
    return statistics.model_dump(mode="json", exclude_unset=True)


def leaderboard(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> list[dict[str, Any]]:
    """Rows ranked by strict accuracy within each (tier, harness mode); never across them."""
    rows: list[dict[str, Any]] = []
    for run, st in zip(runs, stats, strict=True):
        for s in st.strata:
            rows.append(
                {
                    "label": run.label,
                    "tier": s.tier,
                    "harness_mode": s.harness_mode,
                    "accuracy": s.accuracy.estimate,
                    "low": s.accuracy.low,
                    "high": s.accuracy.high,
                    "n": s.n,
                    "errors": s.errors,
                    "partial": s.partial_mean_diagnostic,
                }
            )
    rows.sort(key=lambda r: (r["tier"], r["harness_mode"], -r["accuracy"]))
    rank, prev = 0, None
    for row in rows:
        group = (row["tier"], row["harness_mode"])
        rank = 1 if group != prev else rank + 1
        row["rank"], prev = rank, group
    return rows


def comparisons(runs: Sequence[RunFolder], notes: list[str] | None = None) -> list[dict[str, Any]]:
    """Paired comparisons for every pair of runs, per tier and harness mode they share.

    Pairs with no (tier, harness mode) in common are not compared; a line saying so is appended
    to ``notes`` when given.
    """
    out = []
    views = [[record_view(r) for r in run.records] for run in runs]
    for i, a in enumerate(runs):
        for j in range(i + 1, len(runs)):
            b = runs[j]
            groups_a, groups_b = strata(views[i]), strata(views[j])
            if notes is not None and groups_a and groups_b and not set(groups_a) & set(groups_b):
                notes.append(
                    f"{a.label} and {b.label} share no tier and harness mode; not compared (never pooled)"
                )
            for key in sorted(set(groups_a) & set(groups_b)):
                try:
                    cmp = compare_runs(groups_a[key], groups_b[key], key[0])
                except PoolingError:
                    continue
                if cmp["n"]:
                    out.append(cmp | {"a": a.label, "b": b.label})
    return out


def build_payload(runs: Sequence[RunFolder], *, live: bool = False) -> dict[str, Any]:
    """Everything the page script needs, as plain JSON-able data."""
    stats = [run_statistics(r) for r in runs]
    notes: list[str] = []
    pairs = comparisons(runs, notes) if len(runs) > 1 else []
    with bulk_load():  # one JSON tree per record
        records = [[record_payload(r) for r in run.records] for run in runs]
    return {
        "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "live": live,
        "runs": [
            {
                "id": f"run{i}",
                "label": run.label,
                "header": _shorten(header_payload(run)),
                "statistics": statistics_payload(st),
                "records": page_records,
                "offset": run.offset,
            }
            for i, (run, st, page_records) in enumerate(zip(runs, stats, records, strict=True))
        ],
        "leaderboard": leaderboard(runs, stats) if len(runs) > 1 else [],
        "comparisons": pairs,
        "notes": notes,
    }


def header_payload(run: RunFolder) -> dict[str, Any]:
    """The run header's JSON (the keys ``run.json`` holds; empty before the run wrote it)."""
    return {} if run.header is None else run.header.model_dump(mode="json", exclude_unset=True, fallback=str)


def _asset(name: str) -> str:
    templates = resources.files("callbench.report").joinpath("templates")
    return templates.joinpath(name).read_text(encoding="utf-8")


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


def _dedupe_labels(runs: Sequence[RunFolder]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        count = seen.get(run.label, 0)
        seen[run.label] = count + 1
        if count:
            run.label = f"{run.label} #{count + 1}"


def attach_expected(run: RunFolder) -> list[str]:
    """Give each record its case's expected steps (tool + arguments), read from the run's suites.

    Records written before records carried their expected steps only name the expected tools; the
    report's argument diff needs the arguments too. A suite is used only when it still loads with
    the hash recorded in ``run.json``, so the expectations shown are the ones the run was scored
    against.

    Returns:
        Notes on suites that could not be used (shown nowhere else; the report still works).
    """
    if run.header is None or all(r.expected or not r.expected_tools for r in run.records):
        return []  # records written since records carry their expected steps need no suite
    from callbench.suites.resolve import load_suite

    steps: dict[str, list[dict[str, Any]]] = {}
    notes = []
    for info in run.header.suites:
        try:
            suite = load_suite(info.spec or info.name, data=info.data)
        except Exception as exc:  # noqa: BLE001 (any loader failure only costs the argument diff)
            notes.append(f"{info.spec}: not loaded ({exc})")
            continue
        if info.hash and suite.hash != info.hash:
            notes.append(f"{info.spec}: changed since the run (hash differs); expected arguments not shown")
            continue
        for case in suite.cases:
            steps[f"{suite.name}:{case.id}"] = [s.model_dump(mode="json") for s in case.expected]
    for record in run.records:
        if not record.expected and record.key in steps:
            record.expected = [dict(step) for step in steps[record.key]]
    return notes
