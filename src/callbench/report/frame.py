"""Records as a pandas DataFrame: ``callbench.load_records(run_dir)``.

pandas is an optional extra (``pip install 'callbench[pandas]'``); it is imported on call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.errors import UserError
from callbench.report.rundata import read_run

if TYPE_CHECKING:
    import pandas as pd


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise UserError("load_records needs pandas: pip install 'callbench[pandas]'") from None
    return pandas


def flatten_record(record: Mapping[str, Any], run: str = "") -> dict[str, Any]:
    """One flat row: identity, outcome, trace counts, and ``<tier>.passed|partial|reasons`` per tier."""
    trace = record.get("trace") or {}
    error = record.get("error")
    row: dict[str, Any] = {
        "run": run,
        "key": record.get("key"),
        "suite": record.get("suite"),
        "case_id": record.get("case_id"),
        "category": record.get("category"),
        "trial": record.get("trial"),
        "status": record.get("status"),
        "error_type": error.get("type") if isinstance(error, Mapping) else error,
        "harness_mode": record.get("harness_mode"),
        "template": record.get("template"),
        "retrieval_recall": record.get("retrieval_recall"),
        "duration_ms": record.get("duration_ms"),
        "rounds": len(trace.get("rounds") or []),
        "calls": len(trace.get("calls") or []),
        "tools_called": " ".join(str(c.get("tool")) for c in trace.get("calls") or []),
        "stop_reason": trace.get("stop_reason"),
        "final_text": trace.get("final_text"),
    }
    for tier, verdict in (record.get("verdicts") or {}).items():
        row[f"{tier}.passed"] = bool(verdict.get("passed"))
        row[f"{tier}.partial"] = verdict.get("partial")
        row[f"{tier}.reasons"] = " ".join(str(r.get("code")) for r in verdict.get("reasons") or [])
    return row


def records_frame(records: Iterable[Mapping[str, Any]], run: str = "") -> pd.DataFrame:
    """DataFrame of already-loaded record dicts (one row per record)."""
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
