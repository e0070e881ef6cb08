"""Scorers: pure functions of (case, trace) producing a strict verdict and diagnostics."""

from callbench.scoring.base import Scorer
from callbench.types.verdict import Reason, Verdict

__all__ = ["Reason", "Scorer", "Verdict"]
