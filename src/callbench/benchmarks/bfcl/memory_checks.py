"""The ``bfcl`` verdict of a memory case.

A question is judged as BFCL judges it: its agentic checker (:mod:`callbench.benchmarks.bfcl.agentic`)
on the last of the model's steps that does not decode as calls
(:func:`~callbench.benchmarks.bfcl.agentic.last_message`, shared with web search). A
prerequisite conversation is not scored (BFCL scores only the questions): its verdict is kept for the
record and marked not applicable, so it counts in no rate, callbench's or BFCL's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from callbench.benchmarks.bfcl.agentic import judge_episode
from callbench.benchmarks.bfcl.memory_cases import is_prereq
from callbench.benchmarks.bfcl.memory_executor import SETTINGS_KEY
from callbench.benchmarks.bfcl.verdicts import to_verdict
from callbench.plugin import Verdict

if TYPE_CHECKING:
    from callbench.benchmarks.bfcl.options import BfclOptions
    from callbench.plugin import Case, Trace

NOT_SCORED = (
    "prerequisite conversation: sets the memory up for its scenario's questions; not scored (as in BFCL)"
)


def score_memory(case: Case, trace: Trace, options: BfclOptions, scorer: str = "bfcl") -> Verdict:
    """The ``bfcl`` verdict of a memory case."""
    meta = case.metadata["bfcl"]
    state = (trace.final_state or {}).get("bfcl", {})
    memory = (trace.final_state or {}).get(SETTINGS_KEY, {})
    if is_prereq(meta["category"]):
        details = {
            "category": meta["category"],
            "scenario": meta.get("scenario"),
            "chain_position": meta.get("chain_position"),
            "flushed": memory.get("flushed") is not None,
            "force_quit": bool(state.get("force_quit")),
        }
        return Verdict(
            scorer=scorer, passed=False, applicable=False, rationale=NOT_SCORED, details={"bfcl": details}
        )
    check, out = judge_episode(meta, trace, state, options)
    out["memory_from"] = memory.get("start_from")
    if memory.get("prerequisites_without_snapshot"):
        out["prerequisites_without_snapshot"] = memory["prerequisites_without_snapshot"]
    return to_verdict(scorer, check, out)
