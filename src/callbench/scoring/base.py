"""The scorer contract (verdict types live in :mod:`callbench.types.verdict`).

A scorer judges one case from its trace alone, deterministically, so a stored run re-scores to the
same verdicts. Every hook the harness calls is declared here with its default; a scorer overrides
what it needs and never relies on the harness discovering methods by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from callbench.types.verdict import Verdict

if TYPE_CHECKING:
    from callbench.types.case import Case
    from callbench.types.records import CaseRecord
    from callbench.types.trace import Trace


class Scorer(ABC):
    """Base class of every scorer. Built by the catalog as ``factory(suite)``.

    * :meth:`score` — the verdict of one case (required; pure and deterministic).
    * :meth:`ascore` — the same, for scorers that wait on a service (an LLM judge); the harness
      always awaits this one, and the default simply calls :meth:`score`.
    * :meth:`aggregate` — run-level figures that are not means of per-case values (data only: the
      CLI and the report render them). The default has none.
    """

    name: str = "scorer"

    @abstractmethod
    def score(self, case: Case, trace: Trace) -> Verdict:
        """The verdict of ``trace`` for ``case``."""

    async def ascore(self, case: Case, trace: Trace) -> Verdict:
        """Async scoring; override when scoring waits on a service."""
        return self.score(case, trace)

    def aggregate(self, records: Sequence[CaseRecord]) -> dict[str, Any] | None:
        """Run-level figures over the completed records this scorer judged (``None``: none)."""
        return None
