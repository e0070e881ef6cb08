"""The scorer contract (verdict types live in :mod:`callbench.types.verdict`).

A scorer judges one case from its trace alone, deterministically, so a stored run re-scores to the
same verdicts. Every hook the harness calls is declared here with its default; a scorer overrides
what it needs and never relies on the harness discovering methods by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from callbench.types.summary import Aggregate
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
    * :meth:`aggregate` — run-level figures that are not means of per-case values, as an
      :class:`~callbench.types.summary.Aggregate` (data only: the run summary stores it, the CLI
      and the report render its tables). The default has none.
    """

    name: str = "scorer"

    @abstractmethod
    def score(self, case: Case, trace: Trace) -> Verdict:
        """The verdict of ``trace`` for ``case``."""

    async def ascore(self, case: Case, trace: Trace) -> Verdict:
        """Async scoring; override when scoring waits on a service."""
        return self.score(case, trace)

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate | None:
        """Run-level figures over the completed records this scorer judged (``None``: none).

        ``records`` may be a stream re-read from disk (a run of a million cases): iterate it once
        and keep only what the figures need. The records may be slimmed (no verdict details).
        """
        return None


class Aggregator(Protocol):
    """What the run summary asks of a scorer: its run-level figures (a :class:`Scorer`, or any
    object with this method, such as an importer's aggregation of verdicts it did not score)."""

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate | None: ...
