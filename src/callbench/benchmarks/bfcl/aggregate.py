"""BFCL-style aggregation of ``bfcl`` verdicts, and the faithful-vs-improved difference report.

Per category: accuracy = correct / total (errored records count as failures, as BFCL stores
inference errors as results).  Summaries follow bfcl-eval 2026.3.23: non-live "simple" is the
unweighted mean of python/java/javascript; non-live AST the unweighted mean of simple,
multiple, parallel, parallel_multiple; live AST is sample-weighted; multi-turn the unweighted
mean of its four categories; irrelevance the unweighted mean of irrelevance and
live_irrelevance.  A missing category counts as 0 (in the live mean with its full entry count, as
BFCL weighs it) and is listed under ``missing``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from callbench.benchmarks.bfcl.overall import CATEGORY_SIZES

LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
MULTI = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


def category_counts(rows: Iterable[tuple[str, bool]]) -> dict[str, dict[str, Any]]:
    """{category: {accuracy, correct_count, total_count}} from (category, passed) pairs."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for category, passed in rows:
        tally[category][0] += int(passed)
        tally[category][1] += 1
    return {
        name: {"accuracy": good / total, "correct_count": good, "total_count": total}
        for name, (good, total) in sorted(tally.items())
    }


def _get(per: dict[str, dict[str, Any]], name: str, missing: set[str]) -> tuple[float, int]:
    if name not in per:
        missing.add(name)
        return 0.0, CATEGORY_SIZES.get(name, 0)  # BFCL weighs a missing category by its full size
    return per[name]["accuracy"], per[name]["total_count"]


def _mean(per, names, missing) -> float:
    return sum(_get(per, name, missing)[0] for name in names) / len(names)


def _weighted(per, names, missing) -> float:
    pairs = [_get(per, name, missing) for name in names]
    total = sum(count for _, count in pairs)
    return sum(acc * count for acc, count in pairs) / total if total else 0.0


def summarise(per: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """BFCL's summary scores from per-category figures (only groups with a category present)."""
    present = set(per)
    missing: set[str] = set()
    out: dict[str, Any] = {}
    simple = ("simple_python", "simple_java", "simple_javascript")
    non_live = ("multiple", "parallel", "parallel_multiple")
    if present & set(simple + non_live):
        simple_mean = _mean(per, simple, missing)
        out["non_live_simple"] = simple_mean
        out["non_live_ast"] = (simple_mean + sum(_get(per, n, missing)[0] for n in non_live)) / 4
    if present & set(LIVE_AST):
        out["live_ast"] = _weighted(per, LIVE_AST, missing)
    if present & set(MULTI):
        out["multi_turn_overall"] = _mean(per, MULTI, missing)
    if present & {"irrelevance", "live_irrelevance"}:
        out["irrelevance_overall"] = _mean(per, ("irrelevance", "live_irrelevance"), missing)
    if "live_relevance" in present:
        out["relevance_overall"] = per["live_relevance"]["accuracy"]
    out["missing"] = sorted(missing)
    return out


def aggregate_rows(rows: Iterable[tuple[str, bool]]) -> dict[str, Any]:
    """Per-category figures plus BFCL summaries."""
    per = category_counts(rows)
    return {"categories": per, "summary": summarise(per)}


def differences(pairs: Iterable[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Entries where faithful and improved verdicts differ, from (key, verdict details) pairs."""
    out = []
    for key, details in pairs:
        bfcl = details.get("bfcl", {})
        if "faithful_passed" in bfcl and bfcl["faithful_passed"] != bfcl.get("passed"):
            out.append(
                {
                    "key": key,
                    "faithful": bfcl.get("faithful_error_type") or "pass",
                    "improved": bfcl.get("error_type") or "pass",
                }
            )
    return out
