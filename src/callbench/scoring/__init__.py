"""Scorers: pure functions of (case, trace) producing a strict verdict and diagnostics."""

from callbench.scoring.base import Reason, Scorer, Verdict

__all__ = ["Reason", "Scorer", "Verdict"]
