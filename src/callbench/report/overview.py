"""The page's first screen across runs: who is best, on what, at what cost, under which settings.

Figures are never pooled across scoring tiers or harness modes. Everything here is computed from
the run folders (records, ``run.json``, ``summary.json``) and shipped to the page as small tables;
the page script (``templates/js/overview.js``) only lays them out.

* **Scorer order** (:func:`scorer_order`): the strict tiers in :data:`callbench.types.verdict.TIERS`
  order (strictest first), then other pass-criterion scorers by name, then the diagnostic scorers
  (``run.json`` → ``diagnostic_scorers``) by name, shown apart.
* **Leaderboard ranks** (:func:`leaderboard`): within each (tier, harness mode), a run's rank is
  1 + the number of runs *significantly* better — by the paired comparison's declared test
  (:func:`callbench.stats.declared_test`) when the runs share cases, by non-overlapping 95%
  intervals when they share none. Runs no test separates share a rank (shown as ``=2``); a run with
  a pair too small for any test to decide gets no rank ("too few shared cases to rank").
* **Pairing** (:func:`case_identity`): records of two runs are paired by the case's content (its
  instruction and expected steps), not by its key, so a case run under two suite aliases
  (``genomics:simple/x`` and ``genomics-simple:x``) is compared with itself.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from callbench.errors import PoolingError
from callbench.harness.runfolder import RunFolder
from callbench.harness.tool_isolation import isolation_entries, isolation_line
from callbench.harness.usage import UsageTally, conversations_text, usd
from callbench.report.cost import cost_points, cost_points_table
from callbench.stats import compare_runs, harness_mode, record_view, strata
from callbench.types.manifest import ToolSourceManifest, diff_manifests
from callbench.types.records import CaseRecord
from callbench.types.summary import RunUsage, Statistics, Table
from callbench.types.verdict import TIERS

RANK_RULE = (
    "Rank = 1 + the number of runs significantly better in the same tier and harness mode, by one "
    "declared test per pair: on fewer than 30 shared cases the exact McNemar test (p < 0.05), from 30 "
    "on the paired bootstrap (its 95% interval of A − B excludes 0); without shared cases, 95% "
    "intervals that do not overlap. Runs no test separates share a rank (=2); a run that shares only "
    "1–5 cases with another is not ranked (too few shared cases to rank). Pairs leave out the cases "
    "either run lost to error records."
)
TOO_FEW = "too few shared cases to rank"
BUILTIN_AGENTS = {"oracle", "baseline", "refuse", "noisy", "planner"}
"""Built-in agents (``run.json`` → ``provider.provider``): they call no model, so they have no tokens."""


# ---- scorers --------------------------------------------------------------------------------


def diagnostic_scorers(runs: Sequence[RunFolder]) -> list[str]:
    """Scorers any run declares diagnostic (``run.json`` or ``summary.json`` says so), sorted."""
    names: set[str] = set()
    for run in runs:
        if run.header is not None:
            names |= set(run.header.diagnostic_scorers)
        if run.summary is not None:
            names |= {name for name, figures in run.summary.tiers.items() if figures.diagnostic}
    return sorted(names)


def scorer_order(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> dict[str, list[str]]:
    """The grid's columns: ``strict`` (pass-criterion scorers) and ``diagnostic`` ones, in order."""
    present = {s.tier for st in stats for s in st.strata}
    diagnostic = [name for name in diagnostic_scorers(runs) if name in present]
    rest = present - set(diagnostic)
    strict = [t for t in TIERS if t in rest] + sorted(rest - set(TIERS))
    return {"strict": strict, "diagnostic": diagnostic}


def _tier_rank(order: Mapping[str, list[str]]) -> dict[str, int]:
    return {name: i for i, name in enumerate(order["strict"] + order["diagnostic"])}


# ---- pairing by case content ----------------------------------------------------------------


def case_identity(record: CaseRecord) -> str:
    """A case's identity that does not depend on its suite alias: a hash of its instruction and
    expected steps (canonical JSON). Records without an instruction keep their key."""
    if not record.instruction:
        return record.key
    expected: Any = record.expected or record.metadata.get("expected") or record.expected_tools
    text = json.dumps([record.instruction, expected], sort_keys=True, separators=(",", ":"), default=str)
    return "case#" + hashlib.sha256(text.encode()).hexdigest()[:16]


_NO_METADATA: Mapping[str, Any] = MappingProxyType({})


class RunFacts:
    """What the overview keeps of one run's records, built one record at a time (never the records).

    ``views`` are :func:`callbench.stats.record_view` dicts (what statistics read; metadata cut to
    its template, the one key statistics read there), ``identities`` the :func:`case_identity` of
    each record, ``usage`` the run's token and latency tally. Equal verdict views and repeated
    strings are shared, so a record costs a few hundred bytes (3 x 100,000 records stay in memory).
    """

    def __init__(self) -> None:
        self.views: list[dict[str, Any]] = []
        self.identities: list[str] = []
        self.usage = UsageTally()
        self._verdicts: dict[tuple[Any, ...], dict[str, Any]] = {}

    @classmethod
    def of(cls, records: Sequence[CaseRecord]) -> RunFacts:
        """The facts of records already in memory."""
        facts = cls()
        for record in records:
            facts.add(record)
        return facts

    def add(self, record: CaseRecord) -> None:
        """Count one record (in the run's order: its index is its index in the page)."""
        view = dict(record_view(record))
        for name in ("key", "suite", "case_id", "category", "status", "harness_mode", "template"):
            if type(view.get(name)) is str:
                view[name] = sys.intern(view[name])
        meta = record.metadata
        view["metadata"] = {"template": meta["template"]} if "template" in meta else _NO_METADATA
        verdicts = tuple((t, v["passed"], v["partial"], v["applicable"]) for t, v in view["verdicts"].items())
        shared = self._verdicts.get(verdicts)
        if shared is None:
            shared = self._verdicts[verdicts] = view["verdicts"]
        view["verdicts"] = shared
        self.views.append(view)
        self.identities.append(sys.intern(case_identity(record)))
        self.usage.add(record)


def _identity_views(facts: RunFacts) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The run's record views re-keyed by case identity, and identity -> the run's own key.

    Two cases of one run with the same content would be merged as trials of one case; they keep
    their own keys instead (they then pair only with the same key).
    """
    keys_of: dict[str, set[str]] = defaultdict(set)
    for view, identity in zip(facts.views, facts.identities, strict=True):
        keys_of[identity].add(view["key"])
    views, back = [], {}
    for view, identity in zip(facts.views, facts.identities, strict=True):
        if len(keys_of[identity]) > 1:
            identity = view["key"]
        view = dict(view)
        back[identity] = view["key"]
        view["key"] = identity
        views.append(view)
    return views, back


def _facts(runs: Sequence[RunFolder], facts: Sequence[RunFacts] | None) -> Sequence[RunFacts]:
    return [RunFacts.of(run.records) for run in runs] if facts is None else facts


# ---- comparisons ----------------------------------------------------------------------------


def _case_passes(records: Sequence[Mapping[str, Any]], tier: str) -> dict[str, bool]:
    """Majority pass per case (as ``compare_runs`` counts it) over completed records."""
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for rec in records:
        if rec.get("status") != "error":
            verdict = (rec.get("verdicts") or {}).get(tier) or {}
            outcomes[str(rec["key"])].append(bool(verdict.get("passed")))
    return {k: sum(v) / len(v) >= 0.5 for k, v in outcomes.items()}


def _suites_of(run: RunFolder, facts: RunFacts) -> str:
    if run.header is not None and run.header.suites:
        return ", ".join(s.name for s in run.header.suites)
    return ", ".join(sorted({str(v["suite"]) for v in facts.views})) or "no records"


def comparisons(
    runs: Sequence[RunFolder], notes: list[str] | None = None, facts: Sequence[RunFacts] | None = None
) -> list[dict[str, Any]]:
    """Paired comparisons for every pair of runs, per tier and harness mode they share.

    Records are paired by :func:`case_identity`. Each comparison has the keys of
    :func:`callbench.stats.compare_runs` (``disagreeing`` lists run A's keys), plus ``a_index``,
    ``b_index``, the declared test's fields (``test``, ``rankable``, ``significant``, ``better``,
    ``decision``; :func:`callbench.stats.declared_test`), ``errors_a``/``errors_b`` and ``disagreeing_cases``:
    ``{a_key, b_key, winner}`` with ``winner`` ``"a"`` or ``"b"``, the side that passed.

    Pairs that cannot be compared get a line in ``notes`` (when given) saying why. ``facts``: the
    runs' :class:`RunFacts` (built from ``run.records`` when not given).
    """
    out = []
    facts = _facts(runs, facts)
    rekeyed = [_identity_views(f) for f in facts]
    for i, a in enumerate(runs):
        for j in range(i + 1, len(runs)):
            b = runs[j]
            groups_a, groups_b = strata(rekeyed[i][0]), strata(rekeyed[j][0])
            shared = sorted(set(groups_a) & set(groups_b))
            if not shared:
                if notes is not None and groups_a and groups_b:
                    notes.append(
                        f"{a.label} and {b.label} share no tier and harness mode; not compared (never pooled)"
                    )
                continue
            paired = []
            for key in shared:
                try:
                    cmp = compare_runs(groups_a[key], groups_b[key], key[0])
                except PoolingError as exc:
                    if notes is not None:
                        notes.append(f"{a.label} vs {b.label} ({key[0]}, {key[1]}): not compared: {exc}")
                    continue
                if cmp["n"]:
                    paired.append(_annotate(cmp, groups_a[key], groups_b[key], rekeyed[i][1], rekeyed[j][1]))
            if not paired and notes is not None:
                notes.append(
                    f"{a.label} and {b.label} pair no case: no case of one run (suites: "
                    f"{_suites_of(a, facts[i])}) has the same instruction and expected steps as a "
                    f"completed case of the other (suites: {_suites_of(b, facts[j])})"
                )
            out += [cmp | {"a": a.label, "b": b.label, "a_index": i, "b_index": j} for cmp in paired]
    return out


def _annotate(
    cmp: dict[str, Any],
    recs_a: Sequence[Mapping[str, Any]],
    recs_b: Sequence[Mapping[str, Any]],
    back_a: Mapping[str, str],
    back_b: Mapping[str, str],
) -> dict[str, Any]:
    """Map the disagreeing identities back to each run's keys, with the side that passed."""
    pass_a = _case_passes(recs_a, cmp["tier"])
    cases = [
        {"a_key": back_a.get(k, k), "b_key": back_b.get(k, k), "winner": "a" if pass_a.get(k) else "b"}
        for k in cmp["disagreeing"]
    ]
    cases.sort(key=lambda c: (c["a_key"], c["b_key"]))  # identities are hashes: show keys in order
    return cmp | {"disagreeing": [c["a_key"] for c in cases], "disagreeing_cases": cases}


# ---- leaderboard ----------------------------------------------------------------------------


def _better(
    x: Mapping[str, Any], y: Mapping[str, Any], pairs: Mapping[tuple[int, int], dict[str, Any]]
) -> bool:
    """Whether run row ``x`` is significantly better than ``y`` (same tier and harness mode)."""
    i, j = x["run"], y["run"]
    cmp = pairs.get((i, j)) or pairs.get((j, i))
    if cmp is not None and cmp["n"]:
        side = "a" if cmp["a_index"] == i else "b"
        return bool(cmp["significant"] and cmp["better"] == side)  # the pair's declared test
    return bool(x["low"] > y["high"])  # no shared case: intervals apart


def _unrankable(x: Mapping[str, Any], pairs: Mapping[tuple[int, int], dict[str, Any]]) -> bool:
    """Whether run row ``x`` has a pair no test can decide (too few shared cases)."""
    return any(x["run"] in key and cmp["n"] and not cmp["rankable"] for key, cmp in pairs.items())


def leaderboard(
    runs: Sequence[RunFolder],
    stats: Sequence[Statistics],
    pairs: Sequence[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Rows per (run, tier, harness mode), ranked within each (tier, harness mode) without
    ranking ties: ``rank`` = 1 + the number of runs significantly better (see :data:`RANK_RULE`);
    ``tied`` says another run holds the same rank. Never ranked across tiers or modes.

    Args:
        pairs: The runs' :func:`comparisons` (computed when not given).
    """
    if pairs is None:
        pairs = comparisons(runs)
    order = _tier_rank(scorer_order(runs, stats))
    by_pair = {(c["a_index"], c["b_index"], c["tier"], c["harness_mode"]): c for c in pairs}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for index, (run, st) in enumerate(zip(runs, stats, strict=True)):
        for s in st.strata:
            groups[(s.tier, s.harness_mode)].append(
                {
                    "run": index,
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
    rows: list[dict[str, Any]] = []
    for (tier, mode), members in sorted(groups.items(), key=lambda g: (order.get(g[0][0], 99), g[0])):
        local = {(i, j): c for (i, j, t, m), c in by_pair.items() if t == tier and m == mode}
        for row in members:
            unrankable = _unrankable(row, local)
            row["rank"] = (
                None if unrankable else 1 + sum(_better(o, row, local) for o in members if o is not row)
            )
        counts: dict[int, int] = defaultdict(int)
        for row in members:
            if row["rank"] is not None:
                counts[row["rank"]] += 1
        for row in members:
            row["tied"] = row["rank"] is not None and counts[row["rank"]] > 1
            row["rank_text"] = (
                TOO_FEW if row["rank"] is None else ("=" if row["tied"] else "") + str(row["rank"])
            )
        unranked_last = len(members) + 1
        rows += sorted(members, key=lambda r: (r["rank"] or unranked_last, -r["accuracy"], r["label"]))
    return rows


# ---- cost and speed -------------------------------------------------------------------------


def usage_of(run: RunFolder, facts: RunFacts | None = None) -> tuple[RunUsage, str]:
    """The run's usage from ``summary.json``, else computed from its records (or their ``facts``);
    and its source."""
    if run.summary is not None and run.summary.usage is not None:
        return run.summary.usage, "summary.json"
    header = run.header
    prices = header.options.get("price_table") if header is not None else None
    if prices is not None and not Path(str(prices)).is_file():
        prices = None  # the run's price file is gone: the built-in table (or $CALLBENCH_PRICES)
    diagnostic = header.diagnostic_scorers if header is not None else ()
    return (facts or RunFacts.of(run.records)).usage.result(prices, diagnostic=diagnostic), "records"


def _is_builtin(run: RunFolder) -> bool:
    provider = run.header.provider if run.header is not None else {}
    name = str(provider.get("provider") or (run.header.model if run.header else "")).split(":")[0]
    return name in BUILTIN_AGENTS


def cost_rows(runs: Sequence[RunFolder], facts: Sequence[RunFacts] | None = None) -> list[dict[str, Any]]:
    """Tokens, requests, latency and estimated cost per run; ``None`` figures come with a reason
    in ``missing`` (field -> why)."""
    out = []
    for index, run in enumerate(runs):
        usage, source = usage_of(run, None if facts is None else facts[index])
        tokens, conv = usage.tokens, usage.conversations
        missing: dict[str, str] = {}
        has_tokens = tokens.input + tokens.output + tokens.reasoning + tokens.cached_input > 0
        if not has_tokens:
            why = "built-in agent: no model, no tokens" if _is_builtin(run) else "no token counts reported"
            if run.header is not None and run.header.harness_mode == "agent-under-test":
                why = "agent under test: its model calls are not seen by callbench"
            missing["tokens"] = why
        if usage.n_latency == 0:
            missing["latency"] = "no live model requests (all cached or none)"
        if usage.cost_usd is None:
            missing["cost"] = (
                missing["tokens"]
                if not has_tokens
                else usage.cost_missing or "no price table entry for this model (--price-table)"
            )
        if usage.n_case_latency == 0:
            missing["case_latency"] = "no case durations recorded"
        out.append(
            {
                "run": index,
                "label": run.label,
                "source": source,
                "input": tokens.input if has_tokens else None,
                "output": tokens.output if has_tokens else None,
                "reasoning": tokens.reasoning if has_tokens else None,
                "cached_input": tokens.cached_input if has_tokens else None,
                "requests": tokens.requests,
                "cache_hits": tokens.cache_hits,
                "latency_ms_p50": usage.latency_ms_p50 if usage.n_latency else None,
                "latency_ms_p95": usage.latency_ms_p95 if usage.n_latency else None,
                "n_latency": usage.n_latency,
                "case_latency_ms_p50": usage.case_latency_ms_p50,
                "case_latency_ms_p95": usage.case_latency_ms_p95,
                "n_case_latency": usage.n_case_latency,
                "cost_usd": usage.cost_usd,
                "price_model": usage.price_model,
                # cost per case and per passed case (strict tiers); the table and entry that priced it
                "cost_per_case": usage.cost_per_case_mean,
                "cost_per_pass": {t: pc.model_dump() for t, pc in (usage.cost_per_pass or {}).items()},
                "price_table": usage.price_table,
                "price": usage.price,
                "missing": missing,
                # conversation runs: tokens per conversation, the agent's and the user's apart
                "conversations": None if conv is None else conv.model_dump(mode="json"),
                "conversations_text": conversations_text(conv),
            }
        )
    return out


# ---- what was run ---------------------------------------------------------------------------


def _subject(run: RunFolder) -> str:
    h = run.header
    if h is None:
        return ""
    if h.harness_mode == "agent-under-test":
        return "agent " + str(h.provider.get("agent") or h.model.removeprefix("agent:"))
    return h.model


def config_rows(runs: Sequence[RunFolder]) -> list[dict[str, Any]]:
    """Each run's configuration as display strings (``fields``) and the suites with their hashes."""
    out = []
    for index, run in enumerate(runs):
        h = run.header
        if h is None:
            out.append({"run": index, "label": run.label, "fields": {}, "suites": []})
            continue
        provider = {k: v for k, v in h.provider.items() if k not in {"model", "agent"}}
        fields = {
            "model or agent": _subject(run),
            "provider": _compact(provider),
            "settings": _compact(h.settings),
            "k": "suite default" if h.retrieval_k is None else str(h.retrieval_k),
            "suite k": ", ".join(sorted({"all" if v is None else str(v) for v in h.suite_k.values()})) or "–",
            "executor": h.executor or "suite default",
            "harness mode": h.harness_mode,
            "round budget": str(h.harness_assistance.get("round_budget", "–")),
            "trials": str(h.trials),
            "callbench version": h.callbench_version,
            TOOL_SOURCES: "; ".join(m.one_line() for m in h.tool_sources) or "–",
            TOOL_ISOLATION: "; ".join(
                f"{e.get('source')}: {e.get('isolation')}" for e in isolation_entries(h.options)
            )
            or "–",
        }
        suites = [
            {
                "name": s.name,
                "hash": s.hash,
                "registry_hash": s.registry_hash,
                "prompt_template_hash": s.prompt_template_hash,
                "n_cases": s.n_cases,
            }
            for s in h.suites
        ]
        manifest = [m.model_dump(mode="json") for m in h.tool_sources]
        out.append(
            {
                "run": index,
                "label": run.label,
                "fields": fields,
                "suites": suites,
                "tool_sources": manifest,
                "tool_isolation": isolation_entries(h.options),
            }
        )
    return out


def _compact(value: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(value.items()) if v is not None) or "–"


IDENTITY_FIELDS = ("model or agent", "provider")
"""Fields that name what is compared; differences elsewhere are warned about."""
TOOL_SOURCES = "tool sources"
"""The manifest's field (server name@version, protocol, package, tools, listing hash per source);
its differences are warned about tool by tool (:func:`_manifest_warnings`), not as whole strings."""


TOOL_ISOLATION = "tool isolation"
"""Each live MCP tool source's isolation (``case``, ``run``, ``shared``): a ``shared`` one is warned
about in every report, one run or several (:func:`_order_warnings`)."""


def config_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per field in which the runs differ in anything but the model, e.g.
    ``k: 5 vs suite default`` or ``suite hash differs for genomics``; one per run whose verdicts may
    depend on the order of its cases (a ``shared`` tool server)."""
    rows = [r for r in rows if r["fields"]]
    order = _order_warnings(rows)
    if len(rows) < 2:
        return order
    out = order
    for name in rows[0]["fields"]:
        if name in IDENTITY_FIELDS or name == TOOL_SOURCES:
            continue
        values = list(dict.fromkeys(r["fields"].get(name, "–") for r in rows))
        if len(values) > 1:
            if name == "settings":
                out.append(f"settings: {_settings_difference(rows)}")
            else:
                out.append(f"{name}: {' vs '.join(values)}")
    out += _suite_warnings(rows)
    out += _manifest_warnings(rows)
    return out


def _order_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """``label: isolation shared of SOURCE (...): verdicts may depend on order ...``, per such source."""
    return [
        f"{r['label']}: {isolation_line(entry)}"
        for r in rows
        for entry in r.get("tool_isolation") or ()
        if entry.get("isolation") == "shared"
    ]


def _manifest_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per pair of runs whose manifests differ: servers, packages, tools changed."""
    manifests = [
        (r["label"], [ToolSourceManifest.model_validate(m) for m in r.get("tool_sources") or ()])
        for r in rows
    ]
    out = []
    for i, (label_a, a) in enumerate(manifests):
        for label_b, b in manifests[i + 1 :]:
            diff = diff_manifests(a, b) if a and b else None
            if diff is not None and diff.sources:
                changes = " | ".join(source.summary() for source in diff.sources)
                out.append(f"tool sources differ between {label_a} and {label_b}: {changes}")
    return out


def _settings_difference(rows: Sequence[Mapping[str, Any]]) -> str:
    parsed = [dict(p.split("=", 1) for p in r["fields"]["settings"].split(", ") if "=" in p) for r in rows]
    keys = sorted({k for p in parsed for k in p})
    diffs = []
    for key in keys:
        values = list(dict.fromkeys(p.get(key, "unset") for p in parsed))
        if len(values) > 1:
            diffs.append(f"{key} {' vs '.join(values)}")
    return "; ".join(diffs)


def _suite_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    out = []
    names = list(dict.fromkeys(s["name"] for r in rows for s in r["suites"]))
    sets = list(dict.fromkeys(tuple(sorted(s["name"] for s in r["suites"])) for r in rows))
    if len(sets) > 1:
        out.append("suites: " + " vs ".join(", ".join(s) or "none" for s in sets))
    for name in names:
        for field, what in (
            ("hash", "suite hash"),
            ("registry_hash", "registry hash"),
            ("prompt_template_hash", "prompt template hash"),
        ):
            values = {s[field] for r in rows for s in r["suites"] if s["name"] == name}
            if len(values) > 1:
                out.append(f"{what} differs for {name}")
    return out


# ---- trials with errors ---------------------------------------------------------------------


def trial_notes(runs: Sequence[RunFolder], facts: Sequence[RunFacts] | None = None) -> list[dict[str, Any]]:
    """Why a run's trial figures stop below its ``--trials``.

    :func:`callbench.stats.trial_statistics` reports pass@k only up to the smallest number of
    *completed* trials any case has (error records are excluded, never counted as failures), and
    leaves cases with a single completed trial out. One error record in a ``--trials 3`` run
    therefore caps pass@k at k = 2.
    """
    out = []
    for index, run in enumerate(runs):
        planned = run.header.trials if run.header is not None else 1
        if planned < 2:
            continue
        by_mode: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        views = RunFacts.of(run.records).views if facts is None else facts[index].views
        for view in views:
            counts = by_mode[harness_mode(view)][str(view["key"])]
            counts[0 if view["status"] == "error" else 1] += 1
        for mode, cases in sorted(by_mode.items()):
            short = {k: c for k, c in cases.items() if c[0] and c[1] < planned}
            if not short:
                continue
            least = min(c[1] for c in short.values())
            n_err = sum(c[0] for c in short.values())
            cases_word = "case has" if len(short) == 1 else "cases have"
            shown = f"pass@k shown up to k = {least}" if least >= 2 else "no pass@k for those cases"
            text = (
                f"pass@{planned} not shown: {len(short)} {cases_word} error records "
                f"({n_err} of their trials), so {shown} (pass@k needs k completed trials of every "
                f"case; errors are never counted as failures). Resume the run "
                f"(callbench run --resume {run.path}) to complete it."
            )
            out.append(
                {
                    "run": index,
                    "label": run.label,
                    "harness_mode": mode,
                    "planned": planned,
                    "cases": sorted(short),
                    "text": text,
                }
            )
    return out


# ---- page data and display tables -----------------------------------------------------------


def overview_payload(
    runs: Sequence[RunFolder], stats: Sequence[Statistics], facts: Sequence[RunFacts] | None = None
) -> dict[str, Any]:
    """The overview's page data: top-level keys of the page's DATA.

    Args:
        facts: The runs' :class:`RunFacts` (built from ``run.records`` when not given: the
            streaming report passes them, its runs hold no records).
    """
    notes: list[str] = []
    facts = _facts(runs, facts)
    pairs = comparisons(runs, notes, facts) if len(runs) > 1 else []
    config = config_rows(runs)
    firsts = [_first_index(f) for f in facts]
    order = scorer_order(runs, stats)
    usage = cost_rows(runs, facts)
    return {
        "scorers": order,
        "leaderboard": leaderboard(runs, stats, pairs) if len(runs) > 1 else [],
        "rank_rule": RANK_RULE,
        "comparisons": [page_comparison(c, runs, firsts) for c in pairs],
        "notes": notes,
        "usage": usage,
        "cost_points": cost_points(runs, stats, usage, order["strict"]),  # accuracy vs cost, Pareto front
        "config": config,
        "config_warnings": config_warnings(config),
        "trial_notes": trial_notes(runs, facts),
        "serving_notes": serving_notes(runs),
    }


def serving_notes(runs: Sequence[RunFolder]) -> list[str]:
    """``label: N answers look like calls the server failed to parse ...`` for each run with serving
    faults or run limits in its ``summary.json`` (shown under the grid, apart from the figures)."""
    from callbench.report.serving import summary_serving_lines

    notes = []
    for run in runs:
        if run.summary is not None:
            notes += [f"{run.label}: {line}" for line in summary_serving_lines(run.summary)]
    return notes


def page_comparison(
    cmp: dict[str, Any], runs: Sequence[RunFolder], firsts: Sequence[Mapping[str, int]] | None = None
) -> dict[str, Any]:
    """A comparison as the page gets it: the disagreeing cases as ``[a_row, b_row, winner]`` (each
    run's index of the case's first record, ``winner`` 0 for A, 1 for B) instead of two lists of
    keys — at 10,000 cases the keys alone were a third of the page. ``firsts``: each run's
    :func:`_first_index` (computed from ``run.records`` when not given)."""
    if firsts is None:
        firsts = [_first_index(RunFacts.of(r.records)) for r in runs]
    first_a = firsts[cmp["a_index"]]
    first_b = firsts[cmp["b_index"]]
    cases = [
        [first_a[c["a_key"]], first_b[c["b_key"]], 0 if c["winner"] == "a" else 1]
        for c in cmp["disagreeing_cases"]
    ]
    page = {k: v for k, v in cmp.items() if k not in ("disagreeing", "disagreeing_cases")}
    return page | {"disagreeing_rows": cases}


def _first_index(facts: RunFacts) -> dict[str, int]:
    first: dict[str, int] = {}
    for index, view in enumerate(facts.views):
        first.setdefault(str(view["key"]), index)
    return first


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _num(x: float | int | None, reason: str = "") -> str:
    if x is None:
        return f"– ({reason})" if reason else "–"
    return f"{x:,.0f}" if isinstance(x, int) or float(x).is_integer() else f"{x:,.1f}"


def overview_tables(runs: Sequence[RunFolder], stats: Sequence[Statistics]) -> list[Table]:
    """The overview as display tables (for ``callbench report --format md|csv``): the runs ×
    scorers grid, the leaderboard (tie-aware ranks), paired comparisons, cost and speed, accuracy
    vs cost (when any run has a cost; :mod:`callbench.report.cost`), and the configuration with its
    warnings."""
    data = overview_payload(runs, stats)
    priced = any(p["cost_per_case"] is not None for g in data["cost_points"] for p in g["points"])
    return [
        _grid_table(runs, stats, data["scorers"]),
        _leaderboard_table(runs, stats, data),
        _comparison_table(data),
        _cost_table(data["usage"]),
        *([cost_points_table(data["cost_points"])] if priced else []),  # accuracy vs cost, when any cost
        _config_table(data["config"], data["config_warnings"]),
    ]


def _grid_table(runs: Sequence[RunFolder], stats: Sequence[Statistics], order: dict[str, list[str]]) -> Table:
    tiers = order["strict"] + order["diagnostic"]
    rows = []
    for run, st in zip(runs, stats, strict=True):
        modes = sorted({s.harness_mode for s in st.strata})
        for mode in modes:
            cells = {s.tier: s for s in st.strata if s.harness_mode == mode}
            row = [run.label, _subject(run), mode]
            for tier in tiers:
                s = cells.get(tier)
                if s is None:
                    row.append("–")
                    continue
                a = s.accuracy
                err = f", {s.errors} errors" if s.errors else ""
                row.append(f"{_pct(a.estimate)} ({_pct(a.low)}–{_pct(a.high)}; n={s.n}{err})")
            rows.append(row)
    columns = ["Run", "Model or agent", "Harness mode"]
    columns += order["strict"] + [f"{t} (diagnostic)" for t in order["diagnostic"]]
    notes = ["Strict accuracy % (95% interval; n completed); never pooled across harness modes."]
    if order["diagnostic"]:
        notes.append(f"Diagnostic — not a pass criterion: {', '.join(order['diagnostic'])}.")
    return Table(title="Runs × scorers", columns=columns, rows=rows, notes=notes)


def _leaderboard_table(runs: Sequence[RunFolder], stats: Sequence[Statistics], data: dict[str, Any]) -> Table:
    board = data["leaderboard"] or leaderboard(runs, stats, [])
    rows = [
        [
            r["rank_text"],
            r["label"],
            r["tier"],
            r["harness_mode"],
            str(r["n"]),
            _pct(r["accuracy"]),
            f"{_pct(r['low'])}–{_pct(r['high'])}",
            str(r["errors"]),
        ]
        for r in board
    ]
    columns = ["Rank", "Run", "Tier", "Harness mode", "n", "Strict accuracy (%)", "95% CI (%)", "Errors"]
    align: list[Any] = ["right", "left", "left", "left", "right", "right", "right", "right"]
    return Table(title="Leaderboard", columns=columns, rows=rows, align=align, notes=[RANK_RULE])


def _comparison_table(data: dict[str, Any]) -> Table:
    rows = []
    for c in data["comparisons"]:
        d = c["difference"]
        rows.append(
            [
                c["a"],
                c["b"],
                c["tier"],
                c["harness_mode"],
                str(c["n"]),
                f"{100 * d['estimate']:+.1f}",
                f"{100 * d['low']:.1f} – {100 * d['high']:.1f}",
                c["decision"],
                f"{c['mcnemar_p']:.3g}",
                f"{c['only_a']} / {c['only_b']}",
                "—" if c["mde"] is None else f"{100 * c['mde']:.1f}",
                "—" if c["noise_floor"] is None else f"±{100 * c['noise_floor']:.1f}",
                f"{c['errors_a']} / {c['errors_b']}",
            ]
        )
    columns = ["A", "B", "Tier", "Harness mode", "Shared cases", "A − B (pts)", "95% CI (pts)"]
    columns += ["Decision (declared test)", "McNemar p", "only A / only B", "Detectable (pts, 80% power)"]
    columns += ["Noise floor (pts)", "lost to errors A / B"]
    notes = [
        "A − B on the cases both runs completed (paired by instruction and expected steps); cases "
        "either run lost to error records are left out of the pair.",
        RANK_RULE,
    ]
    return Table(title="Paired comparisons", columns=columns, rows=rows, notes=notes + data["notes"])


def _cost_table(usage: Sequence[Mapping[str, Any]]) -> Table:
    rows = []
    for u in usage:
        why = u["missing"]
        cost = "–" if u["cost_usd"] is None else f"{u['cost_usd']:.4f}"
        per_pass = "; ".join(
            f"{tier} {usd(pc['cost_usd'])}" if pc["passed"] else f"{tier} – (none passed)"
            for tier, pc in (u.get("cost_per_pass") or {}).items()
        )
        rows.append(
            [
                u["label"],
                _num(u["input"], why.get("tokens", "")),
                _num(u["output"]),
                _num(u["reasoning"]),
                _num(u["cached_input"]),
                f"{u['requests']} ({u['cache_hits']} cached)",
                _num(u["latency_ms_p50"], why.get("latency", "")),
                _num(u["latency_ms_p95"]),
                _num(u.get("case_latency_ms_p50"), why.get("case_latency", "")),
                _num(u.get("case_latency_ms_p95")),
                cost if u["cost_usd"] is not None else f"– ({why.get('cost', '')})",
                usd(u.get("cost_per_case")) if u.get("cost_per_case") is not None else "–",
                per_pass or "–",
            ]
        )
    columns = ["Run", "Input tokens", "Output", "Reasoning", "Cached input", "Requests"]
    columns += ["Latency p50 (ms)", "Latency p95 (ms)", "Case latency p50 (ms)", "Case latency p95 (ms)"]
    columns += ["Cost (USD)", "Cost per case (USD)", "Cost per passed case (USD)"]
    notes = [f"{u['label']}: tokens {u['conversations_text']}" for u in usage if u.get("conversations_text")]
    notes += [
        f"{u['label']}: priced as {u['price_model']} ({u['price_table']})"
        for u in usage
        if u.get("price_table")
    ]
    notes.append(
        "Latency per request: live model requests; per case: the record's duration. Cost: every record "
        "(failed cases and error records too); a failed HTTP attempt (500, 429) reports no usage and "
        "costs nothing."
    )
    return Table(title="Cost and speed", columns=columns, rows=rows, notes=notes)


def _config_table(config: Sequence[Mapping[str, Any]], warnings: list[str]) -> Table:
    names = list(dict.fromkeys(k for c in config for k in c["fields"]))
    rows = []
    for c in config:
        suites = "; ".join(
            f"{s['name']} (suite {s['hash'][:12]}, registry {s['registry_hash'][:12]}, "
            f"prompt {s['prompt_template_hash'][:12]})"
            for s in c["suites"]
        )
        rows.append([c["label"], *(c["fields"].get(n, "–") for n in names), suites or "–"])
    notes = [f"Differs between runs — {w}" for w in warnings]
    return Table(title="What was run", columns=["Run", *names, "Suites (hashes)"], rows=rows, notes=notes)
