"""A real small sweep with the built-in agents (no network): 2 models × 2 suites × 2 modes.

Checks the folders and the index, that every cell's records equal an ordinary ``callbench run`` with
the same options, resume after a partial sweep, a failed cell, and ``show``/``report`` on the folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from callbench.cli.main import main
from callbench.harness.runfolder import latest_records, read_header, read_records
from callbench.report.sweep_matrix import render_json, render_markdown, sweep_matrix

SWEEP = """\
name: tiny
models:
  - oracle
  - {model: noisy:3, settings: {temperature: 0.5}}
suites: [starter, genomics-simple]
modes: [production-parity, oracle-assisted]
settings: {max_tokens: 512}
limit: 2
concurrency: 2
"""
CELLS = [
    "oracle--production-parity",
    "oracle--oracle-assisted",
    "noisy-3--production-parity",
    "noisy-3--oracle-assisted",
]


def verdicts(run_dir: Path) -> dict[tuple[str, int], dict[str, bool]]:
    return {
        (r.key, r.trial): {name: v.passed for name, v in r.verdicts.items()}
        for r in latest_records(read_records(run_dir))
    }


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    (root / "tiny.yaml").write_text(SWEEP, encoding="utf-8")
    assert main(["sweep", str(root / "tiny.yaml"), "--out", str(root / "out"), "--progress", "quiet"]) == 0
    return root


def test_one_run_folder_per_cell_and_the_index(swept: Path) -> None:
    out = swept / "out"
    assert sorted(p.name for p in (out / "cells").iterdir()) == sorted(CELLS)
    assert (out / "sweep.yaml").read_text(encoding="utf-8") == SWEEP
    index = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert index["name"] == "tiny" and len(index["hash"]) == 64
    assert index["sweep"]["suites"] == ["starter", "genomics-simple"]
    assert [c["id"] for c in index["cells"]] == CELLS
    for entry in index["cells"]:
        assert entry["status"] == "done" and entry["folder"] == f"cells/{entry['id']}"
        assert (entry["n_records"], entry["n_completed"], entry["n_error"]) == (4, 4, 0)  # 2 suites × limit 2
        header = read_header(out / entry["folder"])
        assert header.harness_mode == entry["mode"]  # one mode per run folder, never two
        assert [s.name for s in header.suites] == ["starter", "genomics-simple"]
    noisy = next(c for c in index["cells"] if c["id"] == "noisy-3--production-parity")
    assert noisy["model"] == "noisy:3" and noisy["settings"] == {"max_tokens": 512, "temperature": 0.5}
    assert read_header(out / noisy["folder"]).settings["temperature"] == 0.5


@pytest.mark.parametrize(
    ("cell", "flags"),
    [
        ("oracle--oracle-assisted", ["-m", "oracle", "--mode", "oracle-assisted"]),
        ("noisy-3--production-parity", ["-m", "noisy:3", "--temperature", "0.5"]),
    ],
)
def test_a_cell_equals_an_ordinary_run(swept: Path, cell: str, flags: list[str], tmp_path: Path) -> None:
    argv = ["run", "-s", "starter", "-s", "genomics-simple", "--limit", "2", "--max-tokens", "512"]
    argv += ["--concurrency", "2", "--progress", "quiet", "--out", str(tmp_path / "run"), *flags]
    assert main(argv) == 0
    cell_dir = swept / "out" / "cells" / cell
    assert verdicts(cell_dir) == verdicts(tmp_path / "run")
    assert len(verdicts(cell_dir)) == 4
    ours = read_header(cell_dir).options["config"]
    theirs = read_header(tmp_path / "run").options["config"]
    assert {**ours, "out_dir": None} == {**theirs, "out_dir": None}


def test_noisy_fails_somewhere_and_oracle_nowhere(swept: Path) -> None:
    """The two models differ: the matrix is not one figure repeated."""
    cells = swept / "out" / "cells"
    oracle = verdicts(cells / "oracle--production-parity")
    noisy = verdicts(cells / "noisy-3--production-parity")
    assert all(v["native-function-contract"] for v in oracle.values())
    assert not all(v["native-function-contract"] for v in noisy.values())


def test_show_prints_the_matrix(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(swept / "out")
    assert main(["show", out, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    contract = [r for r in rows if r["tier"] == "native-function-contract"]
    assert len(contract) == 8  # 2 models × 2 suites × 2 modes, never pooled
    assert {(r["label"], r["suite"], r["harness_mode"]) for r in contract} == {
        (m, s, mode)
        for m in ("oracle", "noisy:3")
        for s in ("starter", "genomics-simple")
        for mode in ("production-parity", "oracle-assisted")
    }
    assert all(r["n"] == "2" for r in contract)
    oracle = [r for r in contract if r["label"] == "oracle"]
    assert all(r["accuracy"] == "1.0" and r["errors"] == "0" for r in oracle)

    md = render_markdown(sweep_matrix(Path(out)))  # what --format md prints
    assert "### native-function-contract" in md and "state-match (diagnostic" in md
    assert "| oracle | 100.0% n=2 [" in md
    assert (
        "starter · production-parity | genomics-simple · production-parity | starter · oracle-assisted" in md
    )

    payload = json.loads(render_json(sweep_matrix(Path(out))))  # what --format json prints
    assert payload["sweep"] == "tiny" and len(payload["columns"]) == 4

    assert main(["show", out]) == 0
    table = capsys.readouterr().out
    assert "sweep tiny" in table and "native-function-contract" in table and "n=2" in table


def test_report_ranks_within_each_mode(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = swept / "out"
    assert main(["report", str(out), "--format", "md"]) == 0
    md = capsys.readouterr().out
    board = md.split("**Leaderboard**")[1].split("Rank = ")[0]
    rows = [line.split("|") for line in board.splitlines() if line.startswith("| ") and "Run" not in line]
    contract = [[cell.strip() for cell in row] for row in rows if "native-function-contract" in row[3]]
    assert len(contract) == 4
    for mode in ("production-parity", "oracle-assisted"):
        ranks = {row[2].split(" ")[0]: row[1] for row in contract if row[4] == mode}
        assert ranks.keys() == {"oracle", "noisy:3"}  # each mode ranks its own two runs
    assert main(["report", str(out), "-o", str(swept / "r.html")]) == 0
    assert "4 run(s)" in capsys.readouterr().out
    assert (swept / "r.html").stat().st_size > 10_000


def test_resume_finishes_only_what_is_missing(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = swept / "resumed"
    shutil.copytree(swept / "out", out)
    cells = out / "cells"
    (cells / "oracle--oracle-assisted" / "records.jsonl").unlink()  # a cell killed before its records
    errored = cells / "noisy-3--production-parity" / "records.jsonl"
    lines = errored.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])  # an infrastructure failure in place of a completed record
    first.update(status="error", verdicts={}, error={"type": "TransientProviderError", "message": "503"})
    errored.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    untouched = (cells / "oracle--production-parity" / "records.jsonl").read_bytes()
    capsys.readouterr()

    assert main(["sweep", "--resume", str(out), "--progress", "quiet"]) == 0
    said = capsys.readouterr().out
    assert "cell 2/4 oracle--oracle-assisted" in said and "cell 3/4 noisy-3--production-parity" in said
    assert "cell 1/4" not in said and "cell 4/4" not in said
    assert (cells / "oracle--production-parity" / "records.jsonl").read_bytes() == untouched
    assert not read_header(cells / "oracle--production-parity").resumes
    assert len(read_records(cells / "oracle--oracle-assisted")) == 4
    # the error record is re-run: one more record, and the latest of each case is completed
    assert len(read_records(cells / "noisy-3--production-parity")) == 5
    assert verdicts(cells / "noisy-3--production-parity") == verdicts(
        swept / "out" / "cells" / "noisy-3--production-parity"
    )
    index = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [c["status"] for c in index["cells"]] == ["done"] * 4


def test_resume_refuses_a_changed_cell_and_takes_new_pacing(swept: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(swept / "out", out)
    changed = tmp_path / "changed.yaml"
    changed.write_text(SWEEP.replace("temperature: 0.5", "temperature: 0.7"), encoding="utf-8")
    from callbench.errors import UserError
    from callbench.harness.sweep.runner import reopen_folder
    from callbench.harness.sweep.spec import read_sweep

    with pytest.raises(
        UserError, match="cell 'noisy-3--production-parity': settings.temperature was 0.5, now 0.7"
    ):
        reopen_folder(read_sweep(changed), out)
    changed.write_text(SWEEP.replace("limit: 2", "limit: 3"), encoding="utf-8")
    with pytest.raises(UserError, match="cell 'oracle--production-parity': options.limit was 2, now 3"):
        reopen_folder(read_sweep(changed), out)
    changed.write_text(SWEEP.replace("  - oracle\n", ""), encoding="utf-8")
    with pytest.raises(UserError, match="cell 'oracle--production-parity' is no longer in the sweep file"):
        reopen_folder(read_sweep(changed), out)
    changed.write_text(SWEEP.replace("concurrency: 2", "concurrency: 1"), encoding="utf-8")
    reopen_folder(read_sweep(changed), out)  # pacing is not a cell's identity
    assert "concurrency: 1" in (out / "sweep.yaml").read_text(encoding="utf-8")


def test_a_failed_cell_is_recorded_and_the_sweep_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = "vllm:m@http://127.0.0.1:9/v1"  # nothing listens on port 9: the run stops before run.json
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"models: ['{down}', oracle]\nsuites: [starter]\nlimit: 1\n", encoding="utf-8")
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--progress", "quiet"]) == 1
    err = capsys.readouterr().err
    index = json.loads((tmp_path / "out" / "sweep.json").read_text(encoding="utf-8"))
    failed, done = index["cells"]
    assert failed["status"] == "failed" and "127.0.0.1:9" in failed["error"]
    assert done["status"] == "done" and done["n_records"] == 1
    assert f"callbench: cell {failed['id']}: failed: " in err
    assert len([line for line in err.splitlines() if line.startswith("callbench: cell")]) == 1
    assert "callbench: error: 1 of 2 cell(s) did not finish cleanly; callbench sweep --resume" in err


def test_an_existing_sweep_is_not_overwritten(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(swept / "tiny.yaml"), "--out", str(swept / "out")]) == 2
    assert "already holds a sweep; pass --resume" in capsys.readouterr().err
