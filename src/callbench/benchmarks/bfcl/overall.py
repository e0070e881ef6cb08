"""BFCL v4's overall score from per-category results, computed as bfcl-eval 2026.3.23 computes it.

Five parts, weighted 10 / 10 / 10 / 30 / 40 (normalised to sum to one):

=================  ======  =====================================================================
part               weight  from
=================  ======  =====================================================================
``non_live``       10      unweighted mean of: simple (the unweighted mean of simple_python,
                           simple_java, simple_javascript), multiple, parallel, parallel_multiple
``live``           10      mean of live_simple, live_multiple, live_parallel,
                           live_parallel_multiple weighted by their entry counts
``irrelevance``    10      unweighted mean of irrelevance and live_irrelevance
``multi_turn``     30      unweighted mean of multi_turn_base, _miss_func, _miss_param, _long_context
``agentic``        40      unweighted mean of: web search (the unweighted mean of web_search_base
                           and web_search_no_snippet) and memory (the unweighted mean of
                           memory_kv, memory_vector, memory_rec_sum)
=================  ======  =====================================================================

live_relevance and format_sensitivity are outside it. A category without results counts as 0 and,
in the live mean, with its full entry count (:data:`CATEGORY_SIZES`), as BFCL does; the result
then says which categories were missing (BFCL shows the overall anyway, callbench marks it
incomplete). Categories are named as BFCL names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WEIGHTS: dict[str, int] = {"non_live": 10, "live": 10, "irrelevance": 10, "multi_turn": 30, "agentic": 40}
SIMPLE = ("simple_python", "simple_java", "simple_javascript")
NON_LIVE_AST = ("multiple", "parallel", "parallel_multiple")
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
IRRELEVANCE = ("irrelevance", "live_irrelevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
PARTS: dict[str, tuple[str, ...]] = {
    "non_live": SIMPLE + NON_LIVE_AST,
    "live": LIVE_AST,
    "irrelevance": IRRELEVANCE,
    "multi_turn": MULTI_TURN,
    "agentic": WEB_SEARCH + MEMORY,
}
LABELS = {
    "non_live": "Non-live AST",
    "live": "Live AST",
    "irrelevance": "Irrelevance",
    "multi_turn": "Multi-turn",
    "agentic": "Agentic",
}
SCORING = tuple(name for names in PARTS.values() for name in names)
"""Every category the overall score reads (21)."""
CATEGORY_SIZES: dict[str, int] = {
    "simple_python": 400,
    "simple_java": 100,
    "simple_javascript": 50,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_irrelevance": 884,
    "live_relevance": 16,
    "multi_turn_base": 200,
    "multi_turn_miss_func": 200,
    "multi_turn_miss_param": 200,
    "multi_turn_long_context": 200,
    "web_search_base": 100,
    "web_search_no_snippet": 100,
    "memory_kv": 155,
    "memory_vector": 155,
    "memory_rec_sum": 155,
}
"""Entries per category in bfcl-eval 2026.3.23 (what a missing category weighs in the live mean;
checked against the installed data by ``tests/benchmarks/bfcl/test_overall.py``)."""

Counts = Mapping[str, Mapping[str, Any]]
"""{category: {"accuracy": float, "total_count": int, ...}}, as ``scorer_aggregates.bfcl.categories``."""


def _score(per: Counts, name: str, missing: list[str]) -> tuple[float, int]:
    item = per.get(name)
    if item is None:
        missing.append(name)
        return 0.0, CATEGORY_SIZES.get(name, 0)
    return float(item["accuracy"]), int(item.get("total_count", 0))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def part_scores(per: Counts) -> tuple[dict[str, float], list[str]]:
    """The five parts' scores and the scoring categories without results (counted as 0)."""
    missing: list[str] = []

    def plain(names: tuple[str, ...]) -> float:
        return _mean([_score(per, name, missing)[0] for name in names])

    simple = plain(SIMPLE)
    parts = {"non_live": _mean([simple] + [_score(per, name, missing)[0] for name in NON_LIVE_AST])}
    live = [_score(per, name, missing) for name in LIVE_AST]
    total = sum(count for _, count in live)
    parts["live"] = sum(accuracy * count for accuracy, count in live) / total if total else 0.0
    parts["irrelevance"] = plain(IRRELEVANCE)
    parts["multi_turn"] = plain(MULTI_TURN)
    parts["agentic"] = _mean([plain(WEB_SEARCH), plain(MEMORY)])
    return parts, missing


def overall_score(per: Counts) -> dict[str, Any]:
    """BFCL's overall accuracy from per-category figures.

    Returns:
        ``overall`` (a fraction), ``parts`` (the five part scores), ``weights``, ``missing`` (the
        scoring categories without results, counted as 0) and ``complete`` (none missing).
    """
    parts, missing = part_scores(per)
    weight_sum = sum(WEIGHTS.values())
    overall = sum(parts[name] * (weight / weight_sum) for name, weight in WEIGHTS.items())
    return {
        "overall": overall,
        "parts": parts,
        "weights": dict(WEIGHTS),
        "missing": missing,
        "complete": not missing,
    }


def covers_any(per: Counts) -> bool:
    """Whether any category the overall reads has results (else there is nothing to show)."""
    return any(name in per for name in SCORING)
