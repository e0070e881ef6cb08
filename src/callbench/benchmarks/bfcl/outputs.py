"""Per-entry output of ``bfcl score-results``: BFCL-style score files and callbench records.

For every model, under ``<score-dir>/<model>/``:

* ``<group>/BFCL_v4_<category>_score.json`` in BFCL's layout and format: a first line
  ``{accuracy, correct_count, total_count}``, then one line per *failed* entry (``id``,
  ``model_name``, ``test_category``, ``valid``, ``error``, ``error_type``, the raw result and
  the possible answer; improved mode adds the faithful verdict and the answer fixes).  Failed
  ids and error types line up with the files ``bfcl evaluate`` writes, so the two can be
  diffed entry by entry.
* ``run.json``, ``records.jsonl`` (one record per entry, passed or not, key ``bfcl:<id>``) and
  ``summary.json``: a callbench run folder that ``callbench show`` and ``compare`` read.  Its
  harness mode is ``bfcl-generate`` (the outputs come from BFCL's inference loop, so they are
  never pooled with runs of callbench's harness).  A result BFCL stored as
  ``Error during inference: ...`` is an ``error`` record (infrastructure), while the score files
  and the printed figures count it as a failure, as BFCL does.  The run names no suite, so
  ``callbench score`` refuses to re-score it from the traces (which cannot carry the model's
  name convention); score the result files again instead.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.aggregate import aggregate_rows
from callbench.benchmarks.bfcl.data import AGENTIC, MULTI_TURN, VERSION_PREFIX, result_folder
from callbench.benchmarks.bfcl.models import bfcl_eval_version
from callbench.benchmarks.bfcl.options import Check
from callbench.benchmarks.bfcl.results import EntryVerdict, FileScore
from callbench.benchmarks.bfcl.verdicts import to_verdict
from callbench.harness.runfolder import RECORDS_FILE, write_header, write_summary
from callbench.harness.summary_stream import stream_summary
from callbench.plugin import Aggregate, CaseRecord, Trace, TraceCall
from callbench.types.records import ErrorInfo, RunHeader
from callbench.types.trace import RoundInfo, Usage
from callbench.types.version import __version__

HARNESS_MODE = "bfcl-generate"
"""Harness mode of imported records: produced by BFCL's inference loop, not callbench's."""


def group_of(category: str) -> str:
    """BFCL's sub-folder for a category's score file (``non_live``, ``live``, ``multi_turn``,
    ``agentic`` or ``agentic/memory/<backend>``)."""
    return result_folder(category) or "other"


def score_line(model: str, category: str, entry: EntryVerdict) -> dict[str, Any]:
    """One failed entry as a line of a BFCL score file."""
    line: dict[str, Any] = {
        "id": entry.id,
        "model_name": model,
        "test_category": category,
        "valid": entry.valid,
        "error": entry.errors,
        "error_type": entry.error_type,
        "model_result_raw": entry.result,
        "possible_answer": entry.answer,
    }
    if entry.faithful_valid is not None:
        line.update(
            faithful_valid=entry.faithful_valid,
            faithful_error_type=entry.faithful_error_type,
            answer_fixes=entry.fixes,
        )
    return line


def write_score_files(files: list[FileScore], out: Path) -> list[Path]:
    """``<out>/<model>/<group>/BFCL_v4_<category>_score.json`` for every scored file."""
    written = []
    for result in files:
        target = (
            out / result.model / group_of(result.category) / f"{VERSION_PREFIX}_{result.category}_score.json"
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        head = {"accuracy": result.accuracy, "correct_count": result.correct, "total_count": result.total}
        lines = [json.dumps(head)]
        lines += [
            json.dumps(score_line(result.model, result.category, entry), default=str)
            for entry in result.failures
        ]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(target)
    return written


def write_runs(report: dict[str, Any], out: Path, result_dir: Path, data: Path | None) -> list[Path]:
    """One callbench run folder per model (``run.json``, ``records.jsonl``, ``summary.json``)."""
    written = []
    settings = report["settings"]
    for model, figures in report["models"].items():
        files = [item for item in report["files"] if item.model == model]
        run_dir = out / model
        records = [entry_record(item, entry, settings) for item in files for entry in item.entries]
        header = _header(model, run_dir, files, settings, figures, result_dir, data)
        write_header(run_dir, header)
        with (run_dir / RECORDS_FILE).open("w", encoding="utf-8") as handle:
            handle.writelines(record.model_dump_json() + "\n" for record in records)
        write_summary(run_dir, stream_summary(run_dir, header, {"bfcl": _Aggregate(settings)}))
        written.append(run_dir)
    return written


class _Aggregate:
    """BFCL aggregation of imported verdicts (every entry, inference errors as failures, as BFCL)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate:
        rows = [(r.category, r.verdicts["bfcl"].passed) for r in records if "bfcl" in r.verdicts]
        return Aggregate({**aggregate_rows(rows), "settings": self.settings})


def _header(
    model: str,
    run_dir: Path,
    files: list[FileScore],
    settings: dict[str, Any],
    figures: dict[str, Any],
    result_dir: Path,
    data: Path | None,
) -> RunHeader:
    return RunHeader(
        run_id=run_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        callbench_version=__version__,
        python_version=platform.python_version(),
        model=model,
        harness_mode=HARNESS_MODE,
        scorers={"bfcl": ["bfcl"]},
        options={
            "bfcl": {
                **settings,
                "name_convention": figures["name_convention"],
                "bfcl_eval_version": bfcl_eval_version(),
                "result_dir": str(result_dir),
                "result_files": [str(item.path) for item in files],
                "data": str(data) if data else None,
            }
        },
    )


def entry_record(file: FileScore, entry: EntryVerdict, settings: dict[str, Any]) -> CaseRecord:
    """A callbench record for one judged result line."""
    details: dict[str, Any] = {
        "category": file.category,
        "passed": entry.valid,
        "error_type": entry.error_type,
        **settings,
        "underscore_to_dot": file.convention.underscore_to_dot,
    }
    if entry.faithful_valid is not None:
        details.update(
            faithful_passed=entry.faithful_valid,
            faithful_error_type=entry.faithful_error_type,
            answer_fixes=entry.fixes,
        )
    if entry.turns is not None:
        details["turns"] = entry.turns
    judged = [flag for flag in entry.turns or [] if flag is not None]
    partial = sum(judged) / len(judged) if judged else None
    verdict = to_verdict(
        "bfcl", Check(entry.valid, entry.error_type, list(entry.errors)), details, partial=partial
    )
    record = CaseRecord(
        key=f"bfcl:{entry.id}",
        suite="bfcl",
        case_id=entry.id,
        category=file.category,
        harness_mode=HARNESS_MODE,
        trace=result_trace(file.category, entry),
        verdicts={"bfcl": verdict},
        metadata={"bfcl_result_file": str(file.path), "bfcl_result": entry.result},
    )
    if entry.inference_error:
        record.status = "error"
        record.error = ErrorInfo(type="bfcl_inference_error", message=str(entry.result)[:500])
    return record


def result_trace(category: str, entry: EntryVerdict) -> Trace:
    """The stored result as a trace (for viewing; the verdict comes from the raw result)."""
    trace = Trace(usage=_usage(entry.usage))
    turns = category in MULTI_TURN or category in AGENTIC
    steps = _steps(entry.result) if turns else [(0, entry.result)]
    round_turns = []
    for number, (turn, step) in enumerate(steps, 1):
        info = RoundInfo(index=number, started_at=0.0)
        if isinstance(step, list):
            for item in step:
                _add_calls(trace, info, item)
        else:
            info.text = step if isinstance(step, str) else json.dumps(step, default=str)
        trace.rounds.append(info)
        round_turns.append(turn)
    trace.final_text = trace.rounds[-1].text if trace.rounds else ""
    if turns:
        trace.final_state = {"bfcl": {"round_turns": round_turns}}
    return trace


def _steps(result: Any) -> list[tuple[int, Any]]:
    if not isinstance(result, list):
        return [(0, result)]
    return [(turn, step) for turn, steps in enumerate(result) if isinstance(steps, list) for step in steps]


def _add_calls(trace: Trace, info: RoundInfo, item: Any) -> None:
    if not isinstance(item, dict):
        info.text += json.dumps(item, default=str)
        return
    for name, raw in item.items():
        text = raw if isinstance(raw, str) else json.dumps(raw, default=str)
        error: str | None = None
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            parsed, error = None, f"invalid JSON: {exc}"
        else:
            error = None if isinstance(parsed, dict) else "arguments are not a JSON object"
            parsed = parsed if isinstance(parsed, dict) else None
        call_id = f"call_{len(trace.calls)}"
        trace.calls.append(
            TraceCall(
                index=len(trace.calls),
                call_id=call_id,
                round=info.index,
                tool=str(name),
                arguments_raw=text,
                arguments=parsed,
                parse_error=error,
            )
        )
        info.call_ids.append(call_id)


def _usage(usage: dict[str, Any]) -> Usage:
    tokens = {
        "input_tokens": usage.get("input_token_count"),
        "output_tokens": usage.get("output_token_count"),
    }
    return Usage(**{key: value for key, value in tokens.items() if type(value) is int})
