"""Runs, records and verdicts as data frames, and as parquet files (``callbench export parquet``).

Three tables, each with a fixed column set (docs/interop.md lists them):

* **runs**: one row per run folder: identity, counts, tokens and cost, and per scorer
  ``<scorer>.n``, ``.passed``, ``.accuracy``, ``.low``, ``.high`` (the interval), ``.diagnostic`` and
  ``.partial_mean``;
* **records**: one row per (case, trial), the columns of ``callbench.load_records`` (identity,
  outcome, trace counts, ``<tier>.passed|partial|reasons``);
* **verdicts**: one row per (case, trial, scorer), long format: ``scorer``, ``diagnostic``,
  ``applicable``, ``passed``, ``partial``, ``reasons``, ``rationale`` beside the record's identity.
  Error records have no verdicts, hence no rows here (they are in the records table).

pandas (the ``pandas`` extra) or polars (installed apart) builds the frames; pyarrow (the ``parquet``
extra) writes the files. Each is imported when asked for; a missing one is one line naming its extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from callbench.errors import UserError, missing_extra
from callbench.harness.runfolder import RunFolder, read_run
from callbench.types.records import CaseRecord

Backend = Literal["pandas", "polars"]

RUN_COLUMNS = (
    "run",
    "path",
    "run_id",
    "created_at",
    "callbench_version",
    "model",
    "provider",
    "harness_mode",
    "suites",
    "trials",
    "n_records",
    "n_completed",
    "n_error",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "requests",
    "cost_usd",
)
"""The runs table's fixed columns; per-scorer columns follow (see the module's docstring)."""
RUN_SCORER_FIELDS = ("n", "passed", "accuracy", "low", "high", "diagnostic", "partial_mean")

RECORD_COLUMNS = (
    "run",
    "key",
    "suite",
    "case_id",
    "category",
    "trial",
    "status",
    "error_type",
    "harness_mode",
    "template",
    "retrieval_recall",
    "duration_ms",
    "rounds",
    "calls",
    "tools_called",
    "stop_reason",
    "final_text",
)
"""The records table's fixed columns (``flatten_record``'s); ``<tier>.passed|partial|reasons`` follow."""

VERDICT_COLUMNS = (
    "run",
    "key",
    "suite",
    "case_id",
    "category",
    "trial",
    "harness_mode",
    "scorer",
    "diagnostic",
    "applicable",
    "passed",
    "partial",
    "reasons",
    "rationale",
)
"""The verdicts table's columns (all of them: it is long, one row per scorer)."""


def _dirs(run_dirs: str | Path | Sequence[str | Path]) -> list[Path]:
    return [Path(run_dirs)] if isinstance(run_dirs, str | Path) else [Path(d) for d in run_dirs]


def _runs(run_dirs: str | Path | Sequence[str | Path]) -> list[RunFolder]:
    return [read_run(d) for d in _dirs(run_dirs)]


def run_row(folder: RunFolder) -> dict[str, Any]:
    """One row of the runs table."""
    from callbench.harness.summary_stream import stream_summary

    header = folder.header
    assert header is not None
    summary = folder.summary if folder.summary is not None else stream_summary(folder.path, header)
    tokens = summary.usage.tokens if summary.usage is not None else None
    row: dict[str, Any] = {
        "run": folder.path.name,
        "path": str(folder.path),
        "run_id": header.run_id,
        "created_at": header.created_at,
        "callbench_version": header.callbench_version,
        "model": header.model,
        "provider": str((header.provider or {}).get("provider") or ""),
        "harness_mode": summary.harness_mode,
        "suites": " ".join(s.name for s in header.suites),
        "trials": header.trials,
        "n_records": summary.n_records,
        "n_completed": summary.n_completed,
        "n_error": summary.n_error,
        "input_tokens": tokens.input if tokens else None,
        "output_tokens": tokens.output if tokens else None,
        "reasoning_tokens": tokens.reasoning if tokens else None,
        "cached_input_tokens": tokens.cached_input if tokens else None,
        "requests": tokens.requests if tokens else None,
        "cost_usd": summary.usage.cost_usd if summary.usage is not None else None,
    }
    strata = {s.tier: s for s in (summary.statistics.strata if summary.statistics else [])}
    for name, figures in summary.tiers.items():
        stratum = strata.get(name)
        row[f"{name}.n"] = figures.n
        row[f"{name}.passed"] = figures.passed
        row[f"{name}.accuracy"] = figures.accuracy
        row[f"{name}.low"] = stratum.accuracy.low if stratum is not None else None
        row[f"{name}.high"] = stratum.accuracy.high if stratum is not None else None
        row[f"{name}.diagnostic"] = figures.diagnostic or name in header.diagnostic_scorers
        row[f"{name}.partial_mean"] = figures.mean_partial_diagnostic
    return row


def record_rows(folder: RunFolder) -> list[dict[str, Any]]:
    """The records table's rows of one run (``callbench.load_records``'s columns)."""
    from callbench.report.dataframe import flatten_record

    return [flatten_record(r, folder.path.name) for r in folder.records]


def verdict_rows(folder: RunFolder) -> list[dict[str, Any]]:
    """The verdicts table's rows of one run."""
    diagnostic = set(folder.header.diagnostic_scorers) if folder.header is not None else set()
    rows: list[dict[str, Any]] = []
    for record in folder.records:
        rows.extend(_verdicts(record, folder.path.name, diagnostic))
    return rows


def _verdicts(record: CaseRecord, run: str, diagnostic: set[str]) -> Iterable[dict[str, Any]]:
    for name, verdict in record.verdicts.items():
        yield {
            "run": run,
            "key": record.key,
            "suite": record.suite,
            "case_id": record.case_id,
            "category": record.category,
            "trial": record.trial,
            "harness_mode": record.harness_mode,
            "scorer": name,
            "diagnostic": name in diagnostic,
            "applicable": verdict.applicable,
            "passed": verdict.passed,
            "partial": verdict.partial,
            "reasons": " ".join(verdict.codes),
            "rationale": verdict.rationale,
        }


def columns_of(rows: list[dict[str, Any]], fixed: Sequence[str]) -> list[str]:
    """The fixed columns, then every other key in the order the rows first name it."""
    seen = dict.fromkeys(fixed)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def frame(
    rows: list[dict[str, Any]], fixed: Sequence[str], backend: Backend = "pandas", what: str = ""
) -> Any:
    """A pandas or polars frame of ``rows`` with the fixed columns first (present even when empty)."""
    columns = columns_of(rows, fixed)
    full = [{c: row.get(c) for c in columns} for row in rows]
    if backend == "pandas":
        try:
            import pandas as pd
        except ImportError:
            raise missing_extra(what or "a pandas frame", "pandas", "pandas") from None
        return pd.DataFrame(full, columns=columns)
    if backend == "polars":
        try:
            import polars as pl
        except ImportError:
            raise missing_extra(what or "a polars frame", "polars", "polars") from None
        if not full:
            return pl.DataFrame({c: [] for c in columns})
        return pl.from_dicts(full, infer_schema_length=None)
    raise UserError(f"backend must be 'pandas' or 'polars', not {backend!r}")


def load_runs(run_dirs: str | Path | Sequence[str | Path], backend: Backend = "pandas") -> Any:
    """The runs table of one or more run folders."""
    return frame([run_row(f) for f in _runs(run_dirs)], RUN_COLUMNS, backend, "load_runs")


def load_records(run_dirs: str | Path | Sequence[str | Path], backend: Backend = "pandas") -> Any:
    """The records table of one or more run folders."""
    rows = [row for f in _runs(run_dirs) for row in record_rows(f)]
    return frame(rows, RECORD_COLUMNS, backend, "load_records")


def load_verdicts(run_dirs: str | Path | Sequence[str | Path], backend: Backend = "pandas") -> Any:
    """The verdicts table of one or more run folders."""
    rows = [row for f in _runs(run_dirs) for row in verdict_rows(f)]
    return frame(rows, VERDICT_COLUMNS, backend, "load_verdicts")


# --- parquet ------------------------------------------------------------------------------------


@dataclass
class ParquetExport:
    """What ``export parquet`` wrote: ``runs.parquet``, ``records.parquet``, ``verdicts.parquet``."""

    folder: Path
    files: dict[str, Path]
    rows: dict[str, int]


def export_parquet(run_dir: str | Path, out: str | Path | None = None) -> ParquetExport:
    """Write the run's three tables as parquet files in ``out`` (default ``RUN_DIR/parquet``)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise missing_extra("export parquet", "pyarrow", "parquet") from None
    from callbench.interop.source import read_for_export

    source = read_for_export(run_dir)  # the exports' refusals (newer schema) and torn-line warning
    folder_run = RunFolder(source.path, source.header, source.records, source.summary)
    target = Path(out) if out is not None else source.path / "parquet"
    target.mkdir(parents=True, exist_ok=True)
    tables = {
        "runs": ([run_row(folder_run)], RUN_COLUMNS),
        "records": (record_rows(folder_run), RECORD_COLUMNS),
        "verdicts": (verdict_rows(folder_run), VERDICT_COLUMNS),
    }
    files: dict[str, Path] = {}
    rows: dict[str, int] = {}
    for name, (data, fixed) in tables.items():
        columns = columns_of(data, fixed)
        arrays = {c: [row.get(c) for row in data] for c in columns}
        table = pa.table({c: pa.array(values) for c, values in arrays.items()})
        path = target / f"{name}.parquet"
        pq.write_table(table, path)
        files[name], rows[name] = path, len(data)
    return ParquetExport(target, files, rows)
