"""Resuming keeps how the run was made; run folders never collide; torn records and the work folders of
killed runs are handled without losing a byte (issue 13, items 8, 9 and 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import callbench
from callbench.errors import UserError
from callbench.harness.engine import remove_dead_workdirs
from callbench.harness.prepare import check_resume_config, new_run_folder, resume_config
from callbench.harness.runfolder import (
    RECORDS_FILE,
    TORN_FILE,
    TornRecordWarning,
    read_header,
    read_records,
    set_aside_torn_tail,
)


def _oracle(out: Path, **options: object) -> callbench.RunResult:
    return callbench.run("starter", "oracle", out_dir=out, progress="quiet", limit=3, **options)


def _cut_to_first_record(run_dir: Path) -> None:
    lines = (run_dir / RECORDS_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / RECORDS_FILE).write_text(lines[0], encoding="utf-8")


# -- item 8 -------------------------------------------------------------------------------------------


def test_a_cli_resume_takes_the_recorded_engine_settings(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out, rpm=600, tpm=9000, max_connections=3, concurrency=2, cache=False, max_retries=2)
    config = resume_config(out, progress="quiet")  # what `run --resume` builds when no option is given
    assert (config.rpm, config.tpm, config.max_connections, config.concurrency) == (600, 9000, 3, 2)
    assert (config.cache, config.max_retries, config.limit) == (False, 2, 3)
    assert config.resume and config.out_dir == out
    overridden = resume_config(out, generation={"temperature": 0.3}, concurrency=1)
    assert overridden.concurrency == 1 and overridden.settings.temperature == 0.3
    assert overridden.settings.max_tokens == 4096  # the other recorded settings stay


def test_check_resume_config_refuses_verdict_changes_and_lists_overrides(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out, concurrency=2)
    recorded = read_header(out).options["config"]
    assert check_resume_config(out, recorded, resume_config(out)) == {}
    overrides = check_resume_config(out, recorded, resume_config(out, concurrency=5, limit=None))
    assert overrides == {"concurrency": {"recorded": 2, "given": 5}, "limit": {"recorded": 3, "given": None}}
    with pytest.raises(
        UserError, match=r"cannot resume: --model was 'oracle' when the run started, given 'x'"
    ):
        check_resume_config(out, recorded, resume_config(out, model="x"))
    with pytest.raises(UserError, match=r"--seed was None when the run started, given 4"):
        check_resume_config(out, recorded, resume_config(out, generation={"seed": 4}))
    with pytest.raises(UserError, match=r"--executor was None when the run started, given 'contract'"):
        check_resume_config(out, recorded, resume_config(out, executor="contract"))


def test_an_api_resume_keeps_the_header_and_appends_an_event(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out, concurrency=2)
    before = json.loads((out / "run.json").read_text())
    _cut_to_first_record(out)
    _oracle(out, concurrency=1, resume=True)
    _oracle(out, concurrency=2, resume=True)
    after = json.loads((out / "run.json").read_text())
    assert {**after, "resumes": []} == before
    first, second = after["resumes"]
    assert (
        first["overrides"] == {"concurrency": {"recorded": 2, "given": 1}} and first["previous_records"] == 1
    )
    assert second["overrides"] == {} and second["previous_records"] == 3
    assert len(read_records(out)) == 3


def test_a_refused_api_resume_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out)
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(UserError, match=r"--mode \(harness_mode\) was 'production-parity'"):
        _oracle(out, resume=True, harness_mode="oracle-assisted")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


def test_a_header_written_before_resume_events_still_loads(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out)
    raw = json.loads((out / "run.json").read_text())
    del raw["resumes"]
    (out / "run.json").write_text(json.dumps(raw))
    assert read_header(out).resumes == []


# -- item 9 -------------------------------------------------------------------------------------------


def test_new_run_folders_with_one_name_get_suffixes(tmp_path: Path) -> None:
    made = [new_run_folder(tmp_path / "runs", "20260101-000000-oracle-starter") for _ in range(3)]
    assert [p.name for p in made] == [
        "20260101-000000-oracle-starter",
        "20260101-000000-oracle-starter-2",
        "20260101-000000-oracle-starter-3",
    ]
    assert all(p.is_dir() for p in made)


def test_default_run_folders_of_runs_in_the_same_second_differ(tmp_path: Path) -> None:
    runs = [
        callbench.run("starter", "oracle", runs_root=tmp_path, progress="quiet", limit=1) for _ in range(3)
    ]
    assert len({r.run_dir for r in runs}) == 3 and all((r.run_dir / "run.json").is_file() for r in runs)
    assert {read_header(r.run_dir).run_id for r in runs} == {r.run_dir.name for r in runs}


# -- item 10 ------------------------------------------------------------------------------------------


def test_a_torn_tail_is_set_aside_byte_for_byte(tmp_path: Path) -> None:
    good = b'{"a": 1}\n'
    torn = b'{"key": "starter:x", "su'
    (tmp_path / RECORDS_FILE).write_bytes(good * 2 + torn)
    with pytest.warns(
        TornRecordWarning, match=rf"{RECORDS_FILE}:3: re-scoring set aside a torn last line \(24"
    ):
        side = set_aside_torn_tail(tmp_path, why="re-scoring")
    assert side == tmp_path / TORN_FILE and side.read_bytes() == torn + b"\n"
    assert (tmp_path / RECORDS_FILE).read_bytes() == good * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert set_aside_torn_tail(tmp_path, why="re-scoring") is None  # nothing torn: nothing said


def test_a_whole_last_record_without_its_newline_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out)
    data = (out / RECORDS_FILE).read_bytes()
    (out / RECORDS_FILE).write_bytes(data[:-1])  # the newline of the last record cut
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert set_aside_torn_tail(out, why="resuming") is None
    assert (out / RECORDS_FILE).read_bytes() == data and not (out / TORN_FILE).exists()


def test_rescore_of_a_torn_run_keeps_the_bytes_and_the_other_records(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _oracle(out)
    data = (out / RECORDS_FILE).read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    (out / RECORDS_FILE).write_bytes(data[: start + 40])
    with pytest.warns(TornRecordWarning, match=r"records\.jsonl:3: re-scoring set aside"):
        summary = callbench.score_run(out)
    assert (out / TORN_FILE).read_bytes() == data[start : start + 40] + b"\n"
    assert summary["n_completed"] == 2 and len(read_records(out)) == 2


def test_dead_processes_work_folders_are_removed_live_ones_kept(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(done.stdout)
    dead_dirs = [tmp_path / f"callbench-{dead}-{n}" for n in (1, 7)]
    for folder in dead_dirs:
        (folder / "exports").mkdir(parents=True)
        (folder / "exports" / "x.fa").write_text(">x\nACGT\n")
    mine = tmp_path / f"callbench-{os.getpid()}-3"
    parent = tmp_path / f"callbench-{os.getppid()}-1"
    other = tmp_path / f"callbench-gold-{dead}"  # not a per-case folder
    for folder in (mine, parent, other):
        folder.mkdir()
    assert sorted(remove_dead_workdirs(tmp_path)) == sorted(dead_dirs)
    assert not any(folder.exists() for folder in dead_dirs)
    assert mine.is_dir() and parent.is_dir() and other.is_dir()
