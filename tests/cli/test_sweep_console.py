"""``callbench sweep`` through the installed console script (a fresh venv: undeclared imports fail)."""

from __future__ import annotations

import json
from pathlib import Path

from fresh_cli import FreshCli, assert_clean_error

TINY = "models: [oracle, baseline]\nsuites: [starter]\nlimit: 1\n"


def test_a_typo_in_the_file_path(fresh_cli: FreshCli, tmp_path: Path) -> None:
    (tmp_path / "sweep.yaml").write_text(TINY, encoding="utf-8")
    done = fresh_cli.run("sweep", "sweeep.yaml", cwd=tmp_path)
    assert_clean_error(done, 2, "callbench: error: no such sweep file: sweeep.yaml")
    assert not (tmp_path / "runs").exists()


def test_a_bad_key_is_one_line_and_nothing_runs(fresh_cli: FreshCli, tmp_path: Path) -> None:
    (tmp_path / "sweep.yaml").write_text(TINY + "concurency: 4\n", encoding="utf-8")
    done = fresh_cli.run("sweep", "sweep.yaml", cwd=tmp_path)
    stderr = assert_clean_error(
        done, 2, "sweep.yaml:4: field 'concurency': unknown key 'concurency' (did you mean 'concurrency'?)"
    )
    assert len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_tiny_sweep_then_show_and_report(fresh_cli: FreshCli, tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY, encoding="utf-8")
    done = fresh_cli.run("sweep", "tiny.yaml", "--progress", "plain", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "runs" / "sweeps" / "tiny"  # no out: runs/sweeps/<name>, name = the file's stem
    index = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["status"], c["n_records"]) for c in index["cells"]] == [
        ("oracle--production-parity", "done", 1),
        ("baseline--production-parity", "done", 1),
    ]
    assert "cell 1/2 oracle--production-parity" in done.stdout and "sweep tiny" in done.stdout
    shown = fresh_cli.run("show", str(out), "--format", "md", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "| oracle | 100.0% n=1 [" in shown.stdout
    report = fresh_cli.run("report", str(out), "-o", "r.html", cwd=tmp_path)
    assert report.returncode == 0 and "2 run(s)" in report.stdout, report.stderr


def test_backend_ray_in_an_install_without_the_extra(fresh_cli: FreshCli, tmp_path: Path) -> None:
    """The fresh venv has callbench without extras: --backend ray says how to get Ray, for run and sweep."""
    (tmp_path / "tiny.yaml").write_text(TINY, encoding="utf-8")
    hint = (
        "callbench: error: --backend ray needs the module 'ray', which is not installed: "
        "pip install 'callbench[ray]'"
    )
    run = fresh_cli.run("run", "-s", "starter", "-m", "oracle", "--backend", "ray", "-o", "r", cwd=tmp_path)
    assert_clean_error(run, 2, hint)
    sweep = fresh_cli.run("sweep", "tiny.yaml", "--backend", "ray", cwd=tmp_path)
    assert_clean_error(sweep, 2, hint)
    typo = fresh_cli.run("sweep", "tiny.yaml", "--backend", "rey", cwd=tmp_path)
    assert_clean_error(typo, 2, "callbench: error: --backend must be one of local, ray (got 'rey')")
    assert not (tmp_path / "r").exists() and not (tmp_path / "runs").exists()
