"""A run folder written by the previous version (records and summary of schema 1) still loads,
re-scores offline to the verdicts it holds, and its summary migrates to the current schema.

The fixture is a real run: ``callbench run --suite starter --suite genomics --trials 2`` with a flaky
noisy agent (two error records), written before summaries carried typed tables.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from callbench.errors import UserError
from callbench.harness.rescore import rescore
from callbench.harness.runfolder import read_records, read_run, read_summary
from callbench.types.summary import SUMMARY_SCHEMA_VERSION, Summary, Table

FIXTURE = Path(__file__).parent / "fixtures" / "run_schema1"


def _stored_summary() -> dict:
    return json.loads((FIXTURE / "summary.json").read_text(encoding="utf-8"))


def _verdicts(run_dir: Path) -> dict[tuple[str, int], dict]:
    return {r.record_id: {k: v.model_dump() for k, v in r.verdicts.items()} for r in read_records(run_dir)}


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    """A writable copy (re-scoring rewrites records.jsonl and summary.json)."""
    return Path(shutil.copytree(FIXTURE, tmp_path / "run_schema1"))


def test_the_fixture_is_schema_1() -> None:
    assert _stored_summary()["schema_version"] == 1
    lines = (FIXTURE / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["schema_version"] for line in lines} == {1}
    assert all("tables" not in agg for agg in _stored_summary()["scorer_aggregates"].values())


def test_reader_loads_header_records_and_migrated_summary() -> None:
    run = read_run(FIXTURE)
    assert run.header is not None and run.header.run_id == "run-schema1"
    assert [s.name for s in run.header.suites] == ["starter", "genomics"] and run.header.trials == 2
    assert len(run.records) == 24 and sum(r.status == "error" for r in run.records) == 2
    assert {r.error.type for r in run.records if r.error} == {"TransientProviderError"}
    assert run.label == "flaky-noisy (run_schema1)"
    summary = run.summary
    assert summary is not None and summary.schema_version == SUMMARY_SCHEMA_VERSION
    assert summary.tiers["state-match"].n == 10 and summary.n_error == 2
    assert summary.statistics is not None and summary.statistics.strata[0].trials.trials == 2
    assert summary.usage is not None and summary.usage.tokens.requests == 36
    assert summary.scorer_aggregates["state-match"].figures["state_changing_cases"] == 10


def test_old_summary_migrates_without_losing_a_field() -> None:
    stored = _stored_summary()
    migrated = read_summary(FIXTURE).to_json_dict()
    assert migrated == stored | {"schema_version": SUMMARY_SCHEMA_VERSION}
    assert list(migrated) == list(stored)  # same keys, same order


def test_schema_1_text_tables_become_table_notes() -> None:
    text = "setting arm n\nc5 plain 1\nsuccess follows the strict rule"
    raw = {"schema_version": 1, "scorer_aggregates": {"dag": {"rows": [{"n": 1}], "table": text}}}
    summary = Summary.from_json_dict(raw)
    aggregate = summary.scorer_aggregates["dag"]
    assert aggregate.tables == [Table(notes=text.splitlines())]
    assert aggregate.figures == {"rows": [{"n": 1}]}
    assert summary.to_json_dict()["scorer_aggregates"]["dag"] == {
        "rows": [{"n": 1}],
        "tables": [{"notes": text.splitlines()}],
    }


def test_summary_without_version_reads_as_schema_1() -> None:
    summary = Summary.from_json_dict({"scorer_aggregates": {"complexeval": {"n": 0, "table": "(none)"}}})
    assert summary.scorer_aggregates["complexeval"].tables[0].notes == ["(none)"]


def test_unreadable_summaries_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"schema_version": SUMMARY_SCHEMA_VERSION + 1}))
    with pytest.raises(UserError, match=r"summary.json: schema_version \d+ is newer"):
        read_summary(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"tiers": {"x": {"n": "many"}}}))
    with pytest.raises(UserError, match=r"summary.json: invalid summary: tiers.x.n: "):
        read_summary(tmp_path)
    (tmp_path / "summary.json").write_text("[1]")
    with pytest.raises(UserError, match="expected a JSON object"):
        read_summary(tmp_path)


def test_rescore_reproduces_the_stored_verdicts(run_copy: Path) -> None:
    before = _verdicts(run_copy)
    summary = rescore(run_copy)
    assert _verdicts(run_copy) == before
    stored = _stored_summary()
    written = json.loads((run_copy / "summary.json").read_text(encoding="utf-8"))
    assert written["schema_version"] == SUMMARY_SCHEMA_VERSION == summary.schema_version
    for key in (
        "tiers",
        "statistics",
        "n_completed",
        "n_error",
        "errors_by_type",
        "qc_flags",
        "scorer_aggregates",
    ):
        assert written[key] == stored[key], key
