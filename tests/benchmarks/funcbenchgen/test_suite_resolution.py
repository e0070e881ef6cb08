"""Item 22: ``dag:file=...`` resolves to the dag suite; real paths (with ``/``) still load as paths."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from callbench.cli.main import main
from callbench.errors import SuiteError, UserError
from callbench.suites.resolve import load_suite

STARTER = Path(__file__).resolve().parents[3] / "src" / "callbench" / "benchmarks" / "starter"


def _write_tasks(folder: Path) -> Path:
    out = folder / "tasks.jsonl"
    assert main(["generate", "dag", "n_core=5;depth=1,4;n_conn=2;seeds=1", "-o", str(out)]) == 0
    return out


def test_dag_file_spec_with_an_absolute_path_loads_the_dag_suite(tmp_path: Path) -> None:
    tasks = _write_tasks(tmp_path)
    suite = load_suite(f"dag:file={tasks}")
    assert suite.name == "dag" and len(suite.cases) == 2


def test_dag_file_spec_with_a_relative_path_loads_the_dag_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_tasks(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert len(load_suite("dag:file=tasks.jsonl;restate=both").cases) == 4
    (tmp_path / "sub").mkdir()
    shutil.move("tasks.jsonl", "sub/tasks.jsonl")
    assert len(load_suite("dag:file=sub/tasks.jsonl").cases) == 2


def test_a_missing_dag_file_is_named_by_the_dag_suite(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"nope\.jsonl: no such file"):
        load_suite(f"dag:file={tmp_path}/nope.jsonl")


def test_relative_paths_with_a_slash_still_load_as_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(STARTER, tmp_path / "suites" / "starter", ignore=shutil.ignore_patterns("__pycache__"))
    mine = tmp_path / "suites" / "mine"
    mine.mkdir()
    (mine / "cases.jsonl").write_text(
        json.dumps({"id": "only", "instruction": "say hi"}) + "\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert load_suite("suites/starter").cases
    assert load_suite("suites/starter/").cases
    assert [c.id for c in load_suite("./suites/mine/cases.jsonl").cases] == ["only"]
    assert [c.id for c in load_suite("suites/mine").cases] == ["only"]


def test_windows_and_colon_paths_are_paths_not_catalog_names(tmp_path: Path) -> None:
    # A drive letter must not be read as a catalog prefix, even one a plugin could register.
    for spec in ("C:\\suites\\mine.yaml", "C:/suites/mine.yaml", "d:cases.jsonl"):
        with pytest.raises(SuiteError, match="suite file or folder not found"):
            load_suite(spec)
    # An unregistered prefix before ':' is a path too (a file name may contain a colon on POSIX).
    odd = tmp_path / "run:1.jsonl"
    odd.write_text(json.dumps({"id": "only", "instruction": "say hi"}) + "\n", encoding="utf-8")
    assert [c.id for c in load_suite(str(odd)).cases] == ["only"]


def test_an_unknown_catalog_name_is_still_a_did_you_mean_error() -> None:
    with pytest.raises(UserError, match="unknown suite 'dga'"):
        load_suite("dga:n_core=5")


def _console_script() -> str:
    """The installed ``callbench`` entry point of this interpreter (else the one on PATH)."""
    here = Path(sysconfig.get_path("scripts")) / ("callbench.exe" if sys.platform == "win32" else "callbench")
    found = str(here) if here.is_file() else shutil.which("callbench")
    if found is None:
        pytest.skip("the callbench console script is not installed")
    return found


def test_console_script_generates_then_runs_a_shared_task_file(tmp_path: Path) -> None:
    cli = _console_script()
    tasks = tmp_path / "tasks.jsonl"
    gen = subprocess.run(
        [cli, "generate", "dag", "n_core=5;depth=1,4;n_conn=0,5;seeds=1", "-o", str(tasks)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert gen.returncode == 0, gen.stderr
    out = tmp_path / "run"
    run = subprocess.run(
        [
            cli,
            "run",
            "--suite",
            f"dag:file={tmp_path}/tasks.jsonl",
            "-m",
            "planner",
            "--k",
            "all",
            "--out",
            str(out),
            "--progress",
            "quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    rows = summary["scorer_aggregates"]["dag"]["rows"]
    assert sum(r["n"] for r in rows) == 4 and all(r["success_rate"] == 1.0 for r in rows)
    # The relative form from the documentation, run from the folder holding the file.
    rel = subprocess.run(
        [
            cli,
            "run",
            "--suite",
            "dag:file=tasks.jsonl",
            "-m",
            "planner",
            "--k",
            "all",
            "--out",
            str(tmp_path / "run2"),
            "--progress",
            "quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert rel.returncode == 0, rel.stderr


def test_a_mistyped_catalog_name_with_a_path_option_gets_one_line_naming_both(tmp_path: Path) -> None:
    with pytest.raises(
        SuiteError,
        match=r"suite file or folder not found, and 'dga' is not a registered suite "
        r"\(did you mean 'dag'\?\)",
    ):
        load_suite(f"dga:file={tmp_path}/tasks.jsonl")
