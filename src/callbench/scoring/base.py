"""The scorer protocol (verdict types live in :mod:`callbench.types.verdict`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from callbench.types.verdict import Verdict

if TYPE_CHECKING:
    from callbench.types.case import Case
    from callbench.types.trace import Trace


@runtime_checkable
class Scorer(Protocol):
    """Scores one case from its trace alone; must be deterministic so stored runs re-score identically.

    Scorers are built by the catalog as ``factory(suite)``. A scorer may also define
    ``async ascore(case, trace)`` (used when present, e.g. for LLM judges) and
    ``aggregate(records) -> dict`` for run-level metrics that are not means of per-case values.
    """

    name: str

    def score(self, case: Case, trace: Trace) -> Verdict: ...
