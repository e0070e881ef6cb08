"""``callbench show RUN --failures``: the constructed run's failures grouped into the right signatures
(table, md, csv, json), ``--tier`` and ``--top``, one line for a run without failures, and one-line
errors with exit status 2 (a typo'd option, a missing run folder, an unknown tier)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from fingerprint_run import EXPECTED, FAILED, NFC, RTE, SERVER, write_fingerprint_run
from synth import make_records, write_run

from callbench.cli.main import main
from callbench.harness.runfolder import read_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fingerprint_run(tmp_path_factory.mktemp("show-failures") / "run")


def test_json_lines_are_the_expected_signatures_with_their_records(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(run_dir), "--failures", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    records = read_run(run_dir).records
    assert shown["run"] == "run" and [s["tier"] for s in shown["sections"]] == [NFC, RTE, "error records"]
    for section in shown["sections"]:
        assert section["failed"] == FAILED[section["tier"]]
        got = {
            (ln["class"], ln["tool"], ln["server"], ln["signature"]): [
                records[i].key + ("" if records[i].trial == 1 else f"#{records[i].trial}")
                for i in ln["records"]
            ]
            for ln in section["lines"]
        }
        assert got == EXPECTED[section["tier"]]
        counts = [ln["count"] for ln in section["lines"]]
        assert counts == sorted(counts, reverse=True)  # by count


def test_the_terminal_table_md_and_csv(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(run_dir), "--failures"]) == 0
    out = capsys.readouterr().out
    assert "real-tool-execution · oracle-assisted: 13 failed of 14 judged records" in out
    assert "error records (infrastructure, excluded from every tier): 4 of 18 records" in out
    assert "HTTP 503" in out and "HTTP 429" in out  # signatures wrap on a narrow terminal

    assert main(["show", str(run_dir), "--failures", "--tier", RTE, "-f", "md"]) == 0
    md = capsys.readouterr().out
    assert NFC not in md  # only the tier asked for, and the error records beside it
    row = (
        f"| tool error | execution_failed | read_file | {SERVER} | expected call did not execute "
        "successfully: ToolError: no such file <path> (request <id>) | 4 | 30.8% | "
        "demo:case-00000 demo:case-00001 demo:case-00002 |"
    )
    assert row in md
    errors = "| infrastructure | TransientProviderError | (no tool) | – | HTTP 503 after <n> retries "
    assert errors + "(request id <id>) | 2 | 50.0% |" in md

    assert main(["show", str(run_dir), "--failures", "-f", "csv", "--top", "1"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["tier"], r["count"]) for r in rows] == [(NFC, "4"), (RTE, "4"), ("error records", "2")]
    assert rows[0]["signature"] == "parameter 'name' expected <str>, received <str>"
    assert rows[0]["codes"] == "argument_mismatch=4" and rows[0]["share"] == "0.5714"


def test_top_says_how_many_lines_are_left_out(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(run_dir), "--failures", "--tier", RTE, "--top", "2", "-f", "md"]) == 0
    assert "… 4 more lines (--top 0 shows all)" in capsys.readouterr().out


def test_a_run_without_failures_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = write_run(tmp_path / "clean", make_records(6, skill=1.0)[1:])  # case 0 fails a tier
    for fmt in ("table", "md"):
        assert main(["show", str(clean), "--failures", "-f", fmt]) == 0
        out = capsys.readouterr().out
        assert out.strip().splitlines() == [
            "no failures in clean: 10 judged verdicts passed and no error record"
        ]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--failure"], "No such option: --failure"),
        (
            ["--failures", "--tier", "nope"],
            "--tier 'nope': the run has no such scorer (it has native-function",
        ),
        (["--failures", "--top", "-1"], "--top must be 0 (every line) or more, not -1"),
        (["--failures", "-f", "xml"], "--format must be table, md, csv or json, not 'xml'"),
        (["--top", "3"], "--tier and --top go with --failures"),
    ],
)
def test_mistakes_are_one_clear_error(
    run_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert main(["show", str(run_dir), *argv]) == 2
    captured = capsys.readouterr()
    assert says in captured.err and "Traceback" not in captured.err
    if not says.startswith("No such option"):  # click adds its usage line to a usage error
        assert len(captured.err.strip().splitlines()) == 1


def test_a_missing_run_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(tmp_path / "nowhere"), "--failures"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"callbench: error: no such run folder: {tmp_path / 'nowhere'}"]
