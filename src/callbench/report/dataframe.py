"""Records as a pandas DataFrame: ``callbench.load_records(run_dir)``.

pandas is an optional extra (``pip install 'callbench[pandas]'``); it is imported on call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.errors import missing_extra
from callbench.harness.runfolder import read_run
from callbench.types.records import CaseRecord

if TYPE_CHECKING:
    import pandas as pd


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise missing_extra("load_records", "pandas", "pandas") from None
    return pandas


def flatten_record(record: CaseRecord, run: str = "") -> dict[str, Any]:
    """One flat row: identity, outcome, trace counts, and ``<tier>.passed|partial|reasons`` per tier."""
    trace = record.trace
    row: dict[str, Any] = {
        "run": run,
        "key": record.key,
        "suite": record.suite,
        "case_id": record.case_id,
        "category": record.category,
        "trial": record.trial,
        "status": record.status,
        "error_type": record.error.type if record.error is not None else None,
        "harness_mode": record.harness_mode,
        "template": record.template,
        "retrieval_recall": record.retrieval_recall,
        "duration_ms": record.duration_ms,
        "rounds": len(trace.rounds),
        "calls": len(trace.calls),
        "tools_called": " ".join(c.tool for c in trace.calls),
        "stop_reason": trace.stop_reason,
        "final_text": trace.final_text,
    }
    for tier, verdict in record.verdicts.items():
        row[f"{tier}.passed"] = verdict.passed
        row[f"{tier}.partial"] = verdict.partial
        row[f"{tier}.reasons"] = " ".join(verdict.codes)
    return row


def records_frame(records: Iterable[CaseRecord], run: str = "") -> pd.DataFrame:
    """DataFrame of already-loaded records (one row per record)."""
    return _pandas().DataFrame([flatten_record(r, run) for r in records])


def load_records(run_dirs: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """Load one or more run directories' ``records.jsonl`` into one DataFrame.

    Args:
        run_dirs: A run directory or a list of them; the ``run`` column names the directory.

    Returns:
        One row per record, with per-tier columns ``<tier>.passed``, ``<tier>.partial`` (diagnostic)
        and ``<tier>.reasons`` (space-separated reason codes).

    Raises:
        UserError: when pandas is missing or a run directory is unreadable.
    """
    pd = _pandas()
    dirs = [run_dirs] if isinstance(run_dirs, str | Path) else list(run_dirs)
    frames = []
    for d in dirs:
        run = read_run(d)
        frames.append(records_frame(run.records, run.path.name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
