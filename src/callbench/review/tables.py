"""Review tables: reviewed accuracy beside automatic accuracy, and the suspects, as rows for
``callbench show`` (:mod:`callbench.report.tables`) and the report page (:mod:`callbench.report.payload`).

Read from each run folder's ``reviews/`` (:mod:`callbench.review.store`); the automatic figures
are never replaced. Runs without reviews contribute nothing. This module sits below the report in
the layers (see :mod:`callbench.review`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from callbench.harness.runfolder import RunFolder
from callbench.review.suspects import find_suspects


def reasons_text(reasons: dict[str, int]) -> str:
    return "; ".join(f"{code} {n}" for code, n in reasons.items())


def reviewed_rows(run_dir: str | Path) -> list[dict[str, Any]]:
    """Per scorer, automatic beside reviewed accuracy (:func:`callbench.review.store.reviewed_accuracy`);
    empty when the run folder has no reviews. A ``rubric`` row covers manual cases (reviewed only)."""
    from callbench.review.store import read_reviews, reviewed_accuracy

    entries = read_reviews(run_dir)
    if not entries:
        return []
    rows = []
    for name, acc in reviewed_accuracy(run_dir, entries).items():
        row = acc.model_dump()
        row["tier"] = name
        row["overturned"] = f"{acc.n_overturned} ({acc.overturned_to_pass}/{acc.overturned_to_fail})"
        row["overturns_by_reason_counts"] = dict(acc.overturns_by_reason)
        row["overturns_by_reason"] = reasons_text(acc.overturns_by_reason)
        rows.append(row)
    return rows


ROW_FIELDS = (
    "tier",
    "n",
    "automatic_accuracy",
    "reviewed_accuracy",
    "n_reviewed",
    "n_agreed",
    "n_overturned",
    "overturned_to_pass",
    "overturned_to_fail",
    "n_disputed",
    "n_unsure",
    "n_awaiting",
    "n_stale",
)


def page_reviews(runs: Sequence[RunFolder]) -> list[dict[str, Any]]:
    """Per run with reviews: ``{run, label, rows, suspects}``; rows per scorer (``rubric`` for
    manual cases) with the automatic and reviewed figures and the overturns per reason code."""
    out = []
    for index, run in enumerate(runs):
        rows = reviewed_rows(run.path)
        if not rows:
            continue
        page_rows = [
            {k: row.get(k) for k in ROW_FIELDS} | {"overturns_by_reason": row["overturns_by_reason_counts"]}
            for row in rows
        ]
        suspects = [{"text": s.text, "keys": list(s.keys)} for s in find_suspects(run.path)]
        out.append({"run": index, "label": run.label, "rows": page_rows, "suspects": suspects})
    return out
