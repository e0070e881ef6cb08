"""The one typed run-folder reader: whole folders, the tail follower, and the summary it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synth import make_records, write_run

from callbench.errors import UserError
from callbench.harness.runfolder import (
    LIVE_FILE,
    RecordTail,
    TornRecordWarning,
    read_live_state,
    read_records,
    read_run,
    read_summary,
    write_summary,
)
from callbench.types.records import CaseRecord
from callbench.types.summary import ScorerAggregate, Summary, Table


def _line(record: dict) -> str:
    return json.dumps(record) + "\n"


def test_tail_returns_only_new_complete_lines(tmp_path: Path) -> None:
    recs = make_records(3)
    path = tmp_path / "records.jsonl"
    path.write_text(_line(recs[0]) + _line(recs[1])[:20])
    tail = RecordTail(path)
    first = tail.read_new_with_offsets()
    assert [r.key for _end, r in first] == [recs[0]["key"]] and first[0][0] == tail.offset
    assert isinstance(first[0][1], CaseRecord)
    with path.open("a") as fh:
        fh.write(_line(recs[1])[20:] + _line(recs[2]))
    assert [r.key for r in tail.read_new()] == [recs[1]["key"], recs[2]["key"]]
    assert tail.read_new() == [] and tail.offset == path.stat().st_size


def test_final_read_takes_a_whole_last_line_and_skips_a_torn_one(tmp_path: Path) -> None:
    recs = make_records(2)
    (tmp_path / "records.jsonl").write_text(_line(recs[0]) + json.dumps(recs[1]))  # no newline
    assert [r.key for r in read_records(tmp_path)] == [recs[0]["key"], recs[1]["key"]]
    assert len(RecordTail(tmp_path / "records.jsonl").read_new()) == 1  # live: maybe still being written
    (tmp_path / "records.jsonl").write_text(_line(recs[0]) + '{"key": "torn')
    before = (tmp_path / "records.jsonl").read_bytes()
    with pytest.warns(TornRecordWarning, match=r"records\.jsonl:2: skipped a torn last line \(13 bytes"):
        assert [r.key for r in read_records(tmp_path)] == [recs[0]["key"]]
    assert (tmp_path / "records.jsonl").read_bytes() == before  # a reader never changes the file
    (tmp_path / "records.jsonl").write_text('{"key": "torn"\n' + _line(recs[0]))
    with pytest.raises(UserError, match=r"records.jsonl:1: invalid record"):
        read_records(tmp_path)


def test_read_run_keeps_the_latest_record_of_each_case_and_trial(tmp_path: Path) -> None:
    recs = make_records(4, seed=6)
    error = {"type": "TransientProviderError", "message": "503"}
    errored = dict(recs[0], status="error", error=error, verdicts={})
    run = read_run(write_run(tmp_path / "r", [errored, *recs], model="m"))
    assert [r.key for r in run.records] == [r["key"] for r in recs]
    assert run.records[0].status == "completed" and run.label == "m (r)"
    assert run.offset == (tmp_path / "r" / "records.jsonl").stat().st_size
    assert run.summary is not None and run.summary.statistics is not None  # synth writes statistics only


def test_read_run_errors_and_partial_folders(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such run directory"):
        read_run(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not a run folder"):
        read_run(tmp_path / "empty")
    early = read_run(tmp_path / "empty", allow_partial=True)
    assert early.header is None and early.records == [] and early.label == "empty"
    run = write_run(tmp_path / "r", make_records(1), summary=False)
    (run / "records.jsonl").unlink()
    with pytest.raises(UserError, match="the run wrote no records"):
        read_run(run)


def test_summary_round_trip_keeps_tables_and_set_fields_only(tmp_path: Path) -> None:
    table = Table(title="t", columns=["a", "b"], rows=[["1", "2"]], align=["left", "right"], notes=["n"])
    summary = Summary(
        schema_version=2,
        run_id="r",
        model="m",
        scorer_aggregates={"s": ScorerAggregate.model_validate({"x": 1, "tables": [table]})},
    )
    write_summary(tmp_path, summary)
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk == {
        "schema_version": 2,
        "run_id": "r",
        "model": "m",
        "scorer_aggregates": {"s": {"tables": [table.model_dump()], "x": 1}},
    }
    again = read_summary(tmp_path)
    assert again.scorer_aggregates["s"].tables == [table] and again.scorer_aggregates["s"].figures == {"x": 1}
    assert again.to_json_dict() == on_disk


def test_live_state_is_none_when_absent_or_torn(tmp_path: Path) -> None:
    assert read_live_state(tmp_path) is None
    (tmp_path / LIVE_FILE).write_text('{"done": 1')
    assert read_live_state(tmp_path) is None
    (tmp_path / LIVE_FILE).write_text('{"done": 1}')
    assert read_live_state(tmp_path) == {"done": 1}


def test_bulk_load_pauses_the_collector_and_restores_its_state() -> None:
    import gc

    from callbench.harness.runfolder import bulk_load

    assert gc.isenabled()
    with bulk_load():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk_load():
            pass
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()
