"""The ``bfcl`` scorer: BFCL's checker over callbench traces.

Single-turn categories are judged by :mod:`callbench.benchmarks.bfcl.entry` in faithful mode
(verdict parity with bfcl-eval) or improved mode (recorded, never pooled: the verdict details
carry the faithful verdict too, so :func:`callbench.benchmarks.bfcl.aggregate.differences` can
list the entries that differ).
Multi-turn categories are judged by :mod:`callbench.benchmarks.bfcl.multi_turn_checks`, format
sensitivity by :mod:`callbench.benchmarks.bfcl.format_sensitivity`, memory by
:mod:`callbench.benchmarks.bfcl.memory_checks` (its prerequisite conversations are not scored).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.aggregate import aggregate_rows, differences
from callbench.benchmarks.bfcl.aggregate_tables import bfcl_aggregate
from callbench.benchmarks.bfcl.entry import judge_entry
from callbench.benchmarks.bfcl.format_sensitivity import CATEGORY as FORMAT_SENSITIVITY
from callbench.benchmarks.bfcl.format_sensitivity import score_format_case
from callbench.benchmarks.bfcl.options import IMPROVED_SWITCHES, BfclOptions
from callbench.benchmarks.bfcl.verdicts import to_verdict
from callbench.plugin import Aggregate, Reason, Scorer, Verdict

if TYPE_CHECKING:
    from collections.abc import Iterable

    from callbench.plugin import Case, CaseRecord, Suite, Trace

MULTI_TURN_PREFIX = "multi_turn"
WEB_SEARCH_PREFIX = "web_search"
MEMORY_PREFIX = "memory_"
PREREQ_SUFFIX = "_prereq"


def options_from(settings: dict[str, Any] | None) -> BfclOptions:
    """BfclOptions from a suite's ``metadata["bfcl"]`` settings."""
    settings = dict(settings or {})
    known = {
        key: settings[key] for key in ("mode", "underscore_to_dot", *IMPROVED_SWITCHES) if key in settings
    }
    return BfclOptions(**known)


class BfclScorer(Scorer):
    """Scores BFCL cases; built by the catalog as ``BfclScorer(suite)``."""

    name = "bfcl"

    def __init__(self, suite: Suite | None = None, options: BfclOptions | None = None) -> None:
        settings = suite.metadata.get("bfcl") if suite is not None else None
        self.options = options or options_from(settings)

    def score(self, case: Case, trace: Trace) -> Verdict:
        """Judge one case from its trace."""
        meta = case.metadata.get("bfcl")
        if not meta:
            return Verdict(
                scorer=self.name,
                passed=False,
                rationale="not a BFCL case",
                reasons=[Reason(code="not_bfcl", message="case has no metadata['bfcl']")],
            )
        category = meta["category"]
        if category == FORMAT_SENSITIVITY:
            return score_format_case(case, trace, self.options, self.name)
        if category.startswith(MULTI_TURN_PREFIX):
            from callbench.benchmarks.bfcl.multi_turn_checks import score_multi_turn

            return score_multi_turn(case, trace, self.options)
        if category.startswith(WEB_SEARCH_PREFIX):  # agentic: the last message without calls
            from callbench.benchmarks.bfcl.web_search_checks import score_web_search

            return score_web_search(case, trace, self.options)
        if category.startswith(MEMORY_PREFIX):  # agentic; prerequisite conversations are not scored
            from callbench.benchmarks.bfcl.memory_checks import score_memory

            return score_memory(case, trace, self.options, self.name)
        docs = [tool.metadata["bfcl_doc"] for tool in case.inline_contracts()]
        result = fc_result_from_trace(trace, docs, self.options.underscore_to_dot)
        return self.judge(category, docs, result, meta.get("ground_truth"), entry_id=case.id)

    def judge(
        self, category: str, docs: list[dict], result: Any, truth: Any, entry_id: str | None = None
    ) -> Verdict:
        """Judge a stored FC result."""
        fixes: list[str] = []
        chosen = judge_entry(category, docs, result, truth, self.options, entry_id=entry_id, applied=fixes)
        details: dict[str, Any] = {
            "category": category,
            "passed": chosen.valid,
            "error_type": chosen.error_type,
            **self.options.describe(),
        }
        if self.options.improved:
            details["answer_fixes"] = fixes
            faithful = judge_entry(
                category, docs, result, truth, BfclOptions(underscore_to_dot=self.options.underscore_to_dot)
            )
            details["faithful_passed"] = faithful.valid
            details["faithful_error_type"] = faithful.error_type
        return to_verdict(self.name, chosen, details)

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate:
        """BFCL-style per-category accuracy and summaries, plus faithful/improved differences."""
        rows, pairs, ids = [], [], []
        for record in records:
            verdict = record.verdicts.get(self.name)
            category = (
                verdict.details.get("bfcl", {}).get("category") if verdict else None
            ) or record.category
            if category.endswith(PREREQ_SUFFIX):  # memory set-up conversations: not scored, as in BFCL
                continue
            rows.append((category, bool(verdict and verdict.passed and record.status == "completed")))
            ids.append(record.case_id)
            if verdict is not None:
                pairs.append((record.key, verdict.details))
        out = aggregate_rows(rows)
        out["settings"] = self.options.describe()
        if self.options.improved:
            out["faithful_vs_improved"] = differences(pairs)
        return bfcl_aggregate(out, ids, rows, self.options.mode)


def restore_dotted_names(name: str, docs: list[dict[str, Any]]) -> str:
    """Map a provider-sanitised name (``math_sqrt``) back to the doc's name (``math.sqrt``)."""
    if any(doc["name"] == name for doc in docs):
        return name
    for doc in docs:
        if "." in doc["name"] and doc["name"].replace(".", "_") == name:
            return doc["name"]
    return name


def fc_result_from_trace(trace: Trace, docs: list[dict[str, Any]], underscore_to_dot: bool = False) -> Any:
    """The BFCL FC result of a single-turn trace: calls of the first round, else the text.

    Names are the docs' names (providers map wire-safe names back); with ``underscore_to_dot``
    they are written the way such a model's BFCL result holds them (``.`` as ``_``), so the
    setting never changes a verdict of a callbench run.
    """
    calls = [call for call in trace.calls if call.round == 1]
    if not calls:
        return trace.rounds[0].text if trace.rounds else trace.final_text
    out = []
    for call in calls:
        name = restore_dotted_names(call.tool, docs)
        out.append({name.replace(".", "_") if underscore_to_dot else name: raw_arguments(call)})
    return out


def raw_arguments(call: Any) -> str:
    """The argument text BFCL would decode: the raw text, or JSON of parsed arguments when none was kept."""
    if call.arguments_raw or call.arguments is None:
        return call.arguments_raw
    return json.dumps(call.arguments)
