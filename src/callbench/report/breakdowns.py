"""Cross-run breakdowns for the report: per category, per tool, expected-vs-called, reason codes.

Everything is computed here from full records (the page's rows do not carry what these tables
need) and shipped as ``DATA.breakdowns``; the page only draws it. Records are referred to by their
index in ``RunFolder.records``, which is also their index in the page's ``DATA.runs[i].records``,
so a clickable cell costs a few bytes per record instead of a key.

Error records (``status == "error"``) are infrastructure failures, not model behaviour: they are
left out of every table here and counted apart (``runs[i].errors``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbench.harness.runfolder import RunFolder, bulk_load
from callbench.stats import statistics_summary
from callbench.types.records import CaseRecord
from callbench.types.summary import Align, GroupStatistics, Statistics, Table
from callbench.types.trace import TraceCall
from callbench.types.verdict import TIERS

NO_CALL = "(no call)"
"""Confusion column of an expected step the model made no call for."""
NO_STEP = "(no expected step)"
"""Confusion row of a call that was paired with no expected step."""

EXECUTION_DECIDED = ("ok", "error", "rejected")
"""Execution statuses of calls the harness tried to execute or refused (the failure rate's
denominator): ``skipped`` (call-only) and ``not_executed`` (past the call cap, no executor) are out."""

RULES = {
    "tools": (
        "Error records are left out and counted apart. Calls to a name that was not among the "
        "tools offered (known_tool false) are counted apart, never as calls of a tool. Unparsable: "
        "arguments that did not parse as JSON. Schema-invalid rate: schema-invalid calls over "
        "parsable calls. Execution-failure rate: calls whose execution was 'error' (the tool failed) "
        "or 'rejected' (not run: malformed or schema-invalid) over calls executed or rejected; "
        "call-only ('skipped') and never-executed calls are left out of it."
    ),
    "confusion": (
        "Each expected step is paired with the call the tier's scorer paired it with; steps and "
        "calls left unpaired are then paired in order (so a wrong tool called in place of the "
        "expected one shows here); records whose verdict reports no pairing are paired by position. "
        "(no call): no call left for the step; (no expected step): a call beyond the expected steps. "
        "Alternatives of a step are joined with ' | '."
    ),
    "reasons": (
        "Failing records per reason code; a record with several codes counts once under each of "
        "them, so a column can add up to more than its failures."
    ),
}
"""The definitions the page and the display tables state beside their tables."""


def tier_order(tiers: Iterable[str], diagnostic: Iterable[str]) -> list[str]:
    """Strict tiers first (in their defined order), then other scorers, then diagnostic ones."""
    diag = set(diagnostic)

    def rank(name: str) -> tuple[int, int, str]:
        if name in diag:
            return (2, 0, name)
        if name in TIERS:
            return (0, TIERS.index(name), name)
        return (1, 0, name)

    return sorted(set(tiers), key=rank)


def diagnostic_scorers(runs: Sequence[RunFolder]) -> list[str]:
    """Scorers some run declares diagnostic (``run.json``'s ``diagnostic_scorers``)."""
    return sorted({name for run in runs if run.header is not None for name in run.header.diagnostic_scorers})


def run_stats(run: RunFolder) -> Statistics:
    """The run's statistics as stored in ``summary.json``, else computed from its records."""
    if run.summary is not None and run.summary.statistics is not None:
        return run.summary.statistics
    return Statistics.model_validate(statistics_summary(run.records))


# --- accuracy by category --------------------------------------------------------------------------


def _group(g: GroupStatistics) -> dict[str, Any]:
    a = g.accuracy
    return {
        "n": g.n,
        "passed": g.passed,
        "estimate": a.estimate,
        "low": a.low,
        "high": a.high,
        "method": a.method,
    }


def category_tables(
    stats: Sequence[Statistics], order: list[str], diagnostic: set[str]
) -> list[dict[str, Any]]:
    """One table per (tier, harness mode): a row per category, a cell per run (None: not in that run)."""
    by_stratum: dict[tuple[str, str], list[dict[str, GroupStatistics] | None]] = {}
    for i, st in enumerate(stats):
        for s in st.strata:
            cells = by_stratum.setdefault((s.tier, s.harness_mode), [None] * len(stats))
            cells[i] = s.by_category
    out = []
    for tier, mode in sorted(by_stratum, key=lambda k: (order.index(k[0]), k[1])):
        per_run = by_stratum[(tier, mode)]
        names = sorted({name for cats in per_run if cats for name in cats})
        rows = [
            {
                "category": name,
                "cells": [_group(cats[name]) if cats and name in cats else None for cats in per_run],
            }
            for name in names
        ]
        out.append({"tier": tier, "harness_mode": mode, "diagnostic": tier in diagnostic, "rows": rows})
    return out


# --- per tool --------------------------------------------------------------------------------------


@dataclass
class ToolCounts:
    """Call counts of one tool in one run."""

    calls: int = 0
    unparsable: int = 0
    schema_invalid: int = 0
    """Among parsable calls."""
    decided: int = 0
    """Calls executed or rejected (the execution-failure rate's denominator)."""
    exec_error: int = 0
    rejected: int = 0

    def add(self, call: TraceCall) -> None:
        self.calls += 1
        if call.parse_error is not None:
            self.unparsable += 1
        elif not call.schema_valid:
            self.schema_invalid += 1
        if call.execution in EXECUTION_DECIDED:
            self.decided += 1
        self.exec_error += call.execution == "error"
        self.rejected += call.execution == "rejected"

    def as_dict(self) -> dict[str, Any]:
        parsable = self.calls - self.unparsable
        failed = self.exec_error + self.rejected
        return {
            "calls": self.calls,
            "unparsable": self.unparsable,
            "schema_invalid": self.schema_invalid,
            "schema_invalid_rate": self.schema_invalid / parsable if parsable else None,
            "executed_or_rejected": self.decided,
            "exec_error": self.exec_error,
            "rejected": self.rejected,
            "exec_failure_rate": failed / self.decided if self.decided else None,
        }


@dataclass
class RunTools:
    """Per-tool counts of one run."""

    known: dict[str, ToolCounts] = field(default_factory=lambda: defaultdict(ToolCounts))
    unknown: Counter[str] = field(default_factory=Counter)
    total: ToolCounts = field(default_factory=ToolCounts)
    no_call_records: int = 0

    def add(self, rec: CaseRecord) -> None:
        """Count a completed record's calls; calls to names not offered go apart."""
        if not rec.trace.calls:
            self.no_call_records += 1
        for call in rec.trace.calls:
            if call.known_tool:
                self.known[call.tool].add(call)
                self.total.add(call)
            else:
                self.unknown[call.tool] += 1


def run_tools(run: RunFolder) -> RunTools:
    """Count the completed records' calls per tool; calls to names not offered go apart."""
    return RunTally.of(run.records).tools


def tool_table(runs: Sequence[RunFolder], tallies: Sequence[RunTally] | None = None) -> dict[str, Any]:
    """Rows of tools (every tool called in some run, by total calls then name), a cell per run."""
    counted = [t.tools for t in _tallies(runs, tallies)]
    calls: Counter[str] = Counter()
    for t in counted:
        for name, c in t.known.items():
            calls[name] += c.calls
    names = sorted(calls, key=lambda n: (-calls[n], n))
    unknown: Counter[str] = Counter()
    for t in counted:
        unknown.update(t.unknown)
    return {
        "rows": [
            {"tool": n, "cells": [t.known[n].as_dict() if n in t.known else None for t in counted]}
            for n in names
        ],
        "totals": [t.total.as_dict() for t in counted],
        "unknown": [
            {"tool": n, "counts": [t.unknown.get(n, 0) for t in counted]}
            for n in sorted(unknown, key=lambda n: (-unknown[n], n))
        ],
        "unknown_totals": [sum(t.unknown.values()) for t in counted],
        "no_call_records": [t.no_call_records for t in counted],
    }


# --- expected vs called ----------------------------------------------------------------------------


def _label(tools: Sequence[str]) -> str:
    return " | ".join(tools) if tools else "(any tool)"


def step_pairs(rec: CaseRecord, tier: str) -> tuple[list[tuple[str, str]], bool]:
    """(expected step label, called tool) pairs of one record under ``tier``, and whether the
    tier's scorer reported its pairing (else the pairs are positional).

    Unpaired steps get :data:`NO_CALL`, unpaired calls :data:`NO_STEP`.
    """
    calls = [c.tool for c in rec.trace.calls]
    verdict = rec.verdicts.get(tier)
    details = verdict.details if verdict is not None else {}
    matches = details.get("matches")
    scorer = isinstance(matches, list)
    expected_raw = details.get("expected_tools") if scorer else None
    expected = [list(s) for s in (expected_raw if isinstance(expected_raw, list) else rec.expected_tools)]
    assignment: dict[int, int] = {}
    if scorer:
        for m in matches or []:
            i, c = m.get("expected_index"), m.get("call_index")
            if isinstance(i, int) and isinstance(c, int) and 0 <= i < len(expected) and 0 <= c < len(calls):
                assignment[i] = c
    # What the scorer left unpaired (or everything, without a scorer pairing) is paired in order.
    free_steps = [i for i in range(len(expected)) if i not in assignment]
    used = set(assignment.values())
    free_calls = [c for c in range(len(calls)) if c not in used]
    for i, c in zip(free_steps, free_calls, strict=False):
        assignment[i] = c
    pairs = [
        (_label(expected[i]), calls[assignment[i]] if i in assignment else NO_CALL)
        for i in range(len(expected))
    ]
    used = set(assignment.values())
    pairs += [(NO_STEP, calls[c]) for c in range(len(calls)) if c not in used]
    return pairs, scorer


@dataclass
class Pairings:
    """Expected-vs-called counts of one run under one tier, with the records behind each cell."""

    cells: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(list))
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    scorer: int = 0
    positional: int = 0

    def add(self, index: int, rec: CaseRecord, tier: str) -> None:
        pairs, by_scorer = step_pairs(rec, tier)
        self.scorer += by_scorer
        self.positional += not by_scorer
        self.counts.update(pairs)
        for pair in dict.fromkeys(pairs):  # a record is listed once per cell
            self.cells[pair].append(index)


@dataclass
class RunTally:
    """What the breakdown tables keep of one run's records, counted one record at a time (the
    streaming report never holds the records): tiers present, per-tool counts, expected-vs-called
    pairings per tier and failing records per reason code. ``skip_pairing``: tiers whose pairings
    are not needed (diagnostic scorers report none)."""

    skip_pairing: frozenset[str] = frozenset()
    count: int = 0
    errors: int = 0
    tiers: dict[str, None] = field(default_factory=dict)
    tools: RunTools = field(default_factory=RunTools)
    pairings: dict[str, Pairings] = field(default_factory=dict)
    judged: Counter[tuple[str, str]] = field(default_factory=Counter)
    failed: Counter[tuple[str, str]] = field(default_factory=Counter)
    codes: dict[tuple[str, str], dict[str, list[int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Sequence[CaseRecord], skip_pairing: frozenset[str] = frozenset()) -> RunTally:
        """The tally of records already in memory."""
        tally = cls(skip_pairing)
        for rec in records:
            tally.add(rec)
        return tally

    def add(self, rec: CaseRecord) -> None:
        """Count the run's next record (its index is its index in the page)."""
        index = self.count
        self.count += 1
        for tier in rec.verdicts:
            self.tiers.setdefault(tier)
        if rec.status == "error":  # infrastructure, not model behaviour: counted apart
            self.errors += 1
            return
        self.tools.add(rec)
        for tier, v in rec.verdicts.items():
            if not v.applicable:
                continue
            if tier not in self.skip_pairing:
                self.pairings.setdefault(tier, Pairings()).add(index, rec, tier)
            key = (tier, rec.harness_mode)
            self.judged[key] += 1
            self.failed[key] += not v.passed
            codes = self.codes.setdefault(key, {})
            for code in dict.fromkeys(v.codes):  # once per code and record
                codes.setdefault(code, []).append(index)


def _tallies(runs: Sequence[RunFolder], tallies: Sequence[RunTally] | None) -> Sequence[RunTally]:
    return [RunTally.of(run.records) for run in runs] if tallies is None else tallies


def confusion(run: RunFolder, tier: str, tally: RunTally | None = None) -> dict[str, Any]:
    """Expected-vs-called counts of one run under one tier, with the records behind each cell."""
    found = (tally or RunTally.of(run.records)).pairings.get(tier) or Pairings()
    cells, counts, scorer, positional = found.cells, found.counts, found.scorer, found.positional
    rows = _sorted_axis({e for e, _ in cells}, NO_STEP)
    cols = _sorted_axis({c for _, c in cells}, NO_CALL)
    return {
        "tier": tier,
        "rows": rows,
        "columns": cols,
        # [row index, column index, pairs, record indices]
        "cells": [
            [rows.index(e), cols.index(c), counts[(e, c)], idx] for (e, c), idx in sorted(cells.items())
        ],
        "records_by_scorer": scorer,
        "records_positional": positional,
    }


def _sorted_axis(names: set[str], last: str) -> list[str]:
    return sorted(n for n in names if n != last) + ([last] if last in names else [])


# --- reason codes ----------------------------------------------------------------------------------


def reason_tables(
    runs: Sequence[RunFolder],
    order: list[str],
    diagnostic: set[str],
    tallies: Sequence[RunTally] | None = None,
) -> list[dict[str, Any]]:
    """Per (tier, harness mode): for each reason code, the failing records of each run carrying it."""
    found: dict[tuple[str, str], dict[str, list[list[int]]]] = {}
    failed: dict[tuple[str, str], list[int]] = {}
    judged: dict[tuple[str, str], list[int]] = {}
    for ri, tally in enumerate(_tallies(runs, tallies)):
        for key, n in tally.judged.items():
            judged.setdefault(key, [0] * len(runs))[ri] += n
            failed.setdefault(key, [0] * len(runs))[ri] += tally.failed[key]
            codes = found.setdefault(key, {})
            for code, indices in tally.codes.get(key, {}).items():
                codes.setdefault(code, [[] for _ in runs])[ri].extend(indices)
    out = []
    for key in sorted(judged, key=lambda k: (order.index(k[0]) if k[0] in order else len(order), k)):
        codes = found.get(key, {})
        total = {c: sum(len(x) for x in per_run) for c, per_run in codes.items()}
        out.append(
            {
                "tier": key[0],
                "harness_mode": key[1],
                "diagnostic": key[0] in diagnostic,
                "n": judged[key],
                "failed": failed[key],
                "codes": [
                    {"code": c, "records": codes[c]} for c in sorted(codes, key=lambda c: (-total[c], c))
                ],
            }
        )
    return out


# --- entry points ----------------------------------------------------------------------------------


def _tiers(tallies: Sequence[RunTally], stats: Sequence[Statistics]) -> list[str]:
    names = {s.tier for st in stats for s in st.strata}
    names |= {t for tally in tallies for t in tally.tiers}
    return list(names)


def breakdowns_payload(
    runs: Sequence[RunFolder],
    stats: Sequence[Statistics] | None = None,
    tallies: Sequence[RunTally] | None = None,
) -> dict[str, Any]:
    """The breakdown tables' data for the page (JSON-able): ``DATA.breakdowns``.

    Args:
        runs: The report's runs, in page order.
        stats: Their statistics (default: from each run's summary, else computed).
        tallies: The runs' :class:`RunTally` (counted from ``run.records`` when not given: the
            streaming report passes them, its runs hold no records).
    """
    diagnostic = set(diagnostic_scorers(runs))
    # Many small objects are built over tens of thousands of records: without the pause, the cyclic
    # collector rescans every loaded record again and again (seconds at 3 x 10,000 records).
    with bulk_load():
        if tallies is None:
            tallies = [RunTally.of(r.records, frozenset(diagnostic)) for r in runs]
        stats = [run_stats(r) for r in runs] if stats is None else list(stats)
        order = tier_order(_tiers(tallies, stats), diagnostic)
        return {
            "tiers": [{"tier": t, "diagnostic": t in diagnostic} for t in order],
            "runs": [
                {"label": r.label, "records": tally.count, "errors": tally.errors}
                for r, tally in zip(runs, tallies, strict=True)
            ],
            "rules": RULES,
            "categories": category_tables(stats, order, diagnostic),
            "tools": tool_table(runs, tallies),
            # Strict and other non-diagnostic tiers only: a diagnostic scorer reports no pairing.
            "confusion": [
                [confusion(run, t, tally) for t in _pairing_tiers(tally, order, diagnostic)]
                for run, tally in zip(runs, tallies, strict=True)
            ],
            "reasons": reason_tables(runs, order, diagnostic, tallies),
        }


def _pairing_tiers(tally: RunTally, order: list[str], diagnostic: set[str]) -> list[str]:
    return [t for t in order if t not in diagnostic and t in tally.tiers]


def _align(numbers: int) -> list[Align]:
    """A name column, then ``numbers`` right-aligned columns."""
    right: list[Align] = ["right"] * numbers
    return ["left", *right]


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.1f}"


def breakdown_tables(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> list[Table]:
    """The breakdowns as display tables (for ``callbench report --format md|csv``)."""
    data = breakdowns_payload(runs, stats)
    labels = [r["label"] for r in data["runs"]]
    errors = [f"{r['label']}: {r['errors']} error records left out" for r in data["runs"] if r["errors"]]
    return [
        *_category_display(data, labels),
        *_tool_display(data, labels, errors),
        *_confusion_display(data, labels),
        *_reason_display(data, labels),
    ]


def _category_display(data: dict[str, Any], labels: list[str]) -> list[Table]:
    out = []
    columns = ["Category"] + [
        f"{lab} {what}" for lab in labels for what in ("accuracy (%)", "95% CI (%)", "n")
    ]
    for t in data["categories"]:
        rows = []
        for row in t["rows"]:
            cells = [row["category"]]
            for c in row["cells"]:
                cells += (
                    ["", "", ""]
                    if c is None
                    else [_pct(c["estimate"]), f"{_pct(c['low'])}–{_pct(c['high'])}", str(c["n"])]
                )
            rows.append(cells)
        kind = "diagnostic" if t["diagnostic"] else "strict"
        out.append(
            Table(
                title=f"Accuracy by category · {t['tier']} ({kind}) · {t['harness_mode']}",
                columns=columns,
                rows=rows,
                align=_align(len(columns) - 1),
                notes=["Diagnostic scorer: shown, never a pass criterion."] if t["diagnostic"] else [],
            )
        )
    return out


def _tool_display(data: dict[str, Any], labels: list[str], errors: list[str]) -> list[Table]:
    tools = data["tools"]
    what = ("calls", "unparsable", "schema-invalid (%)", "execution failures (%)")
    columns = ["Tool"] + [f"{lab} {w}" for lab in labels for w in what]

    def cells(c: dict[str, Any] | None) -> list[str]:
        if c is None:
            return ["", "", "", ""]
        return [
            str(c["calls"]),
            str(c["unparsable"]),
            _pct(c["schema_invalid_rate"]),
            _pct(c["exec_failure_rate"]),
        ]

    rows = [[r["tool"]] + [x for c in r["cells"] for x in cells(c)] for r in tools["rows"]]
    rows.append(["(all offered tools)"] + [x for c in tools["totals"] for x in cells(c)])
    out = [
        Table(
            title="Calls per tool",
            columns=columns,
            rows=rows,
            align=_align(len(columns) - 1),
            notes=[data["rules"]["tools"], *errors],
        )
    ]
    if tools["unknown"]:
        out.append(
            Table(
                title="Calls to tools not offered (unknown tools)",
                columns=["Tool", *labels],
                rows=[[u["tool"], *map(str, u["counts"])] for u in tools["unknown"]],
                align=_align(len(labels)),
            )
        )
    return out


def _confusion_display(data: dict[str, Any], labels: list[str]) -> list[Table]:
    out = []
    for label, tables in zip(labels, data["confusion"], strict=True):
        for t in tables:
            grid = [["0"] * len(t["columns"]) for _ in t["rows"]]
            for r, c, n, _ in t["cells"]:
                grid[r][c] = str(n)
            out.append(
                Table(
                    title=f"Expected vs called tool · {label} · {t['tier']}",
                    columns=["Expected \\ called", *t["columns"]],
                    rows=[[name, *grid[i]] for i, name in enumerate(t["rows"])],
                    align=_align(len(t["columns"])),
                    notes=[data["rules"]["confusion"]],
                )
            )
    return out


def _reason_display(data: dict[str, Any], labels: list[str]) -> list[Table]:
    out = []
    for t in data["reasons"]:
        rows = [["(failed records)", *map(str, t["failed"])], ["(judged records)", *map(str, t["n"])]]
        rows += [[c["code"], *(str(len(x)) for x in c["records"])] for c in t["codes"]]
        kind = "diagnostic" if t["diagnostic"] else "strict"
        out.append(
            Table(
                title=f"Reason codes · {t['tier']} ({kind}) · {t['harness_mode']}",
                columns=["Reason code", *labels],
                rows=rows,
                align=_align(len(labels)),
                notes=[data["rules"]["reasons"]],
            )
        )
    return out
