"""Exporting a run whose records are torn or of another record schema: one clear line, nothing lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from callbench.cli.main import main
from callbench.errors import UserError
from callbench.harness.runfolder import TornRecordWarning
from callbench.interop.atif import export_atif
from callbench.interop.evaleval import export_evaleval
from callbench.interop.frames import export_parquet
from callbench.interop.inspect_log import export_inspect

EXPORTS = ["inspect", "atif", "evaleval", "parquet"]


def _copy(run: Path, tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copytree(run, out)
    return out


def _target(kind: str, tmp_path: Path) -> Path:
    return tmp_path / ("out.eval" if kind == "inspect" else f"out-{kind}")


def test_torn_last_line_is_left_out_with_one_warning(noisy_run, tmp_path, capsys):
    run = _copy(noisy_run, tmp_path, "torn")
    records = run / "records.jsonl"
    whole = records.read_bytes()
    records.write_bytes(whole + b'{"schema_version":1,"key":"starter:cut')  # a run killed mid-write
    before = records.read_bytes()
    with pytest.warns(TornRecordWarning, match="skipped a torn last line"):
        done = export_inspect(run, tmp_path / "torn.eval")
    assert done.samples == 16
    with pytest.warns(TornRecordWarning):
        assert len(export_atif(run, tmp_path / "atif").files) == 16
    assert records.read_bytes() == before  # nothing lost: the torn bytes stay for --resume
    for kind in EXPORTS:
        assert main(["export", kind, str(run), "-o", str(_target(kind, tmp_path))]) == 0
        err = capsys.readouterr().err.splitlines()
        torn = [line for line in err if "torn" in line]
        assert len(torn) == 1 and torn[0].startswith("callbench: warning:") and "records.jsonl:17" in torn[0]
    assert records.read_bytes() == before


def test_newer_record_schema_is_refused_in_one_line(noisy_run, tmp_path, capsys):
    run = _copy(noisy_run, tmp_path, "newer")
    lines = (run / "records.jsonl").read_text().splitlines()
    record = json.loads(lines[4])
    record["schema_version"] = 7
    lines[4] = json.dumps(record)
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    for export in (export_inspect, export_atif, export_evaleval, export_parquet):
        with pytest.raises(UserError, match=r"records.jsonl:5: record schema version 7 is newer"):
            export(run, tmp_path / "never.eval" if export is export_inspect else tmp_path / "never")
    assert not (tmp_path / "never").exists() and not (tmp_path / "never.eval").exists()
    for kind in EXPORTS:
        assert main(["export", kind, str(run), "-o", str(_target(kind, tmp_path))]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("callbench: error:") and "nothing was written" in err[0]


def test_older_record_schema_is_exported(noisy_run, tmp_path, inspect_read):
    """A record written by an older callbench (schema 0, without the fields added since) exports as
    the typed reader reads it, and the log says which record it was (read with inspect_ai's own
    reader)."""
    run = _copy(noisy_run, tmp_path, "older")
    lines = (run / "records.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["schema_version"] = 0
    for later in ("prompt_sha256", "expected", "retrieval_recall", "harness_assistance", "template"):
        record.pop(later, None)
    lines[0] = json.dumps(record)
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    (read,) = inspect_read(export_inspect(run, tmp_path / "old.eval").path)
    log = read.log
    assert len(log.samples) == 16
    old = next(s for s in log.samples if s.metadata["callbench"].get("record_schema_version") == 0)
    assert old.metadata["callbench"]["key"] == record["key"]
    assert log.eval.metadata["callbench"]["older_records"] == 1


def test_not_a_run_folder(tmp_path, capsys):
    for kind in EXPORTS:
        assert main(["export", kind, str(tmp_path / "nowhere")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"callbench: error: no such run folder: {tmp_path / 'nowhere'}"]
