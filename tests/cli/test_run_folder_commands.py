"""``show``, ``compare``, ``report``, ``score``, ``view`` and ``load_records`` on a schema-1 run folder,
and scorer tables (data in the summary) rendered as a terminal table and as Markdown."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import urllib.request
from pathlib import Path

import pytest

from callbench.cli.common import print_summary
from callbench.cli.main import main
from callbench.harness.runfolder import read_records
from callbench.report.payload import unpack_details
from callbench.types.summary import ScorerAggregate, Summary, Table

FIXTURE = Path(__file__).parents[1] / "harness" / "fixtures" / "run_schema1"


def test_show_table_of_a_schema_1_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"state-match\s+│\s+10 │\s+0 │\s+0\.0% │\s+2 │\s+91\.7%", out)
    assert "22 completed, 2 error records" in out and "retrieval recall 100.0%" in out


def test_show_md_csv_json_of_a_schema_1_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(FIXTURE), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### flaky-noisy (run_schema1)")
    assert "| state-match | production-parity | all | 10 |" in md
    assert main(["show", str(FIXTURE), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    overall = {r["tier"]: r for r in rows if r["group"] == "all"}
    contract = overall["native-function-contract"]
    assert contract["n"] == "22" and contract["trials"] == "2"
    assert main(["show", str(FIXTURE), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    stored = json.loads((FIXTURE / "summary.json").read_text(encoding="utf-8"))
    assert shown == stored | {"schema_version": 2}  # the stored summary, migrated


def test_compare_a_schema_1_run_against_itself(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(FIXTURE), str(FIXTURE)]) == 0
    text = capsys.readouterr().out
    board, pairs = text.split("## Paired comparisons")
    assert board.count("| =1 | flaky-noisy | run_schema1 |") == 6  # against itself: tied in each tier...
    # ...but state-match, with 5 shared cases, which no test can decide
    assert board.count("| too few shared cases to rank | flaky-noisy | run_schema1 | state-match |") == 2
    rows = [ln for ln in pairs.splitlines() if ln.startswith("| flaky-noisy")]
    assert len(rows) == 4 and all("| 0.0 | 0.0 – 0.0 | 1 | 0 / 0 |" in r for r in rows)


def test_report_of_a_schema_1_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(FIXTURE), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="cb-data">(.*?)</script>', page, re.DOTALL)
    assert data is not None
    payload = json.loads(data.group(1))
    run = payload["runs"][0]
    assert len(run["records"]) == 24 and run["header"]["run_id"] == "run-schema1"
    stored = json.loads((FIXTURE / "summary.json").read_text(encoding="utf-8"))["statistics"]
    assert run["statistics"] == stored
    first = json.loads((FIXTURE / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    details = unpack_details(payload, 0)  # the whole records, as the case panel loads them
    assert details[0]["verdicts"] == first["verdicts"]
    assert details[0]["expected"] == first["expected"]


def test_load_records_of_a_schema_1_run() -> None:
    pytest.importorskip("pandas")
    import callbench

    df = callbench.load_records(FIXTURE)
    assert len(df) == 24 and set(df["run"]) == {"run_schema1"}
    assert list(df.loc[df["status"] == "error", "error_type"]) == ["TransientProviderError"] * 2
    assert df["native-function-contract.passed"].sum() == 2


def test_score_a_schema_1_run_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = Path(shutil.copytree(FIXTURE, tmp_path / "run"))
    before = {r.record_id: r.verdicts for r in read_records(run)}
    assert main(["score", str(run)]) == 0
    assert {r.record_id: r.verdicts for r in read_records(run)} == before
    assert "22 completed, 2 error records" in capsys.readouterr().out
    assert json.loads((run / "summary.json").read_text(encoding="utf-8"))["schema_version"] == 2


def test_view_serves_a_schema_1_run() -> None:
    from callbench.report.live import LiveServer

    server = LiveServer(FIXTURE, port=0)
    server.start_background()
    try:
        with urllib.request.urlopen(server.url + "api/update?offset=0", timeout=5) as resp:
            body = json.loads(resp.read())
    finally:
        server.close()
    assert len(body["records"]) == 24 and body["offset"] == (FIXTURE / "records.jsonl").stat().st_size
    assert {s["tier"] for s in body["statistics"]["strata"]} >= {"state-match", "real-tool-execution"}


DAG_TABLE = Table(
    columns=["setting", "arm", "n", "success", "95% CI"],
    align=["left", "left", "right", "right", "right"],
    rows=[
        ["c5-d1-conn0-dis5", "plain", "1", "1.00", "[0.21,1.00]"],
        ["c5-d1-conn0-dis5", "restate", "1", "0.00", "[0.00,0.79]"],
    ],
    notes=["restatement effect over 1 paired tasks: -1.000"],
)
CFB_TABLE = Table(title="faithful", columns=["mode"], rows=[["[bold]x|y"]])


def _summary_with_tables() -> Summary:
    aggregates = {
        "dag": ScorerAggregate.model_validate({"rows": [], "tables": [DAG_TABLE]}),
        "complexeval": ScorerAggregate.model_validate({"tables": [CFB_TABLE]}),
    }
    return Summary(
        schema_version=2,
        run_id="r",
        model="m",
        harness_mode="production-parity",
        scorer_aggregates=aggregates,
    )


def test_scorer_tables_print_as_a_terminal_table(capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(_summary_with_tables())
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "dag" in lines and "complexeval" in lines and "faithful" in lines
    head = next(ln for ln in lines if ln.lstrip().startswith("setting"))
    assert head.split() == ["setting", "arm", "n", "success", "95%", "CI"]
    assert any(ln.split() == ["c5-d1-conn0-dis5", "restate", "1", "0.00", "[0.00,0.79]"] for ln in lines)
    assert "restatement effect over 1 paired tasks: -1.000" in lines
    assert "[bold]x|y" in out  # cells are text, never console markup


def test_scorer_tables_in_show_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = Path(shutil.copytree(FIXTURE, tmp_path / "run"))
    (run / "summary.json").write_text(json.dumps(_summary_with_tables().to_json_dict()), encoding="utf-8")
    assert main(["show", str(run), "--format", "md"]) == 0
    md = capsys.readouterr().out
    dag = md.split("#### dag\n\n")[1].split("####")[0]
    assert dag.splitlines()[:4] == [
        "| setting | arm | n | success | 95% CI |",
        "|---|---|---:|---:|---:|",
        "| c5-d1-conn0-dis5 | plain | 1 | 1.00 | [0.21,1.00] |",
        "| c5-d1-conn0-dis5 | restate | 1 | 0.00 | [0.00,0.79] |",
    ]
    assert "restatement effect over 1 paired tasks: -1.000" in dag
    assert "#### complexeval\n\n**faithful**\n\n| mode |\n|---|\n| [bold]x\\|y |" in md


def test_schema_1_text_table_prints_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    text = "setting          arm        n\nc5-d1-conn0-dis5 plain      1"
    print_summary({"schema_version": 1, "model": "m", "scorer_aggregates": {"dag": {"table": text}}})
    assert text in capsys.readouterr().out
