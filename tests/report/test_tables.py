import csv
import io
import json

import pytest
from synth import make_records, write_run

from callbench.errors import ConfigError, UserError
from callbench.report.tables import render_compare, render_show


@pytest.fixture
def runs(tmp_path):
    a = write_run(tmp_path / "a", make_records(80, skill=0.85, seed=1, trials=2), model="model-a")
    b = write_run(tmp_path / "b", make_records(80, skill=0.4, seed=2), model="model-b")
    return a, b


def test_show_json_matches_summary(runs):
    a, _ = runs
    out = json.loads(render_show(a, "json"))
    stored = json.loads((a / "summary.json").read_text())["statistics"]
    assert out["statistics"] == stored


def test_show_csv_has_one_row_per_stratum_and_category(runs):
    a, _ = runs
    rows = list(csv.DictReader(io.StringIO(render_show(a, "csv"))))
    overall = [r for r in rows if r["group"] == "all"]
    assert {r["tier"] for r in overall} == {"native-function-contract", "real-tool-execution"}
    stored = json.loads((a / "summary.json").read_text())["statistics"]["strata"]
    for r in overall:
        s = next(x for x in stored if x["tier"] == r["tier"])
        assert float(r["accuracy"]) == pytest.approx(s["accuracy"]["estimate"], abs=1e-4)
        assert int(r["n"]) == s["n"] and r["trials"] == "2" and r["flip_rate"] != ""
    assert any(r["group"].startswith("category:") for r in rows)


def test_show_markdown_table(runs):
    a, _ = runs
    text = render_show(a, "md")
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert lines[0].startswith("| Tier | Harness mode | Group")
    assert all(ln.count("|") == lines[0].count("|") for ln in lines)
    with pytest.raises(ConfigError):
        render_show(a, "xml")


def test_compare_markdown_ranks_and_pairs(runs):
    a, b = runs
    text = render_compare([b, a], "md")
    board = text.split("## Paired comparisons")[0]
    first_row = next(ln for ln in board.splitlines() if ln.startswith("| 1 "))
    assert "model-a" in first_row  # the stronger run ranks first in its tier
    assert "## Paired comparisons" in text and "McNemar p" in text


def test_compare_csv(runs):
    a, b = runs
    text = render_compare([a, b], "csv")
    board, pairs = text.split("\n\n")
    assert len(list(csv.DictReader(io.StringIO(board)))) == 4
    pair_rows = list(csv.DictReader(io.StringIO(pairs)))
    assert len(pair_rows) == 2 and float(pair_rows[0]["diff"]) > 0


def test_bad_run_dir_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such run directory"):
        render_show(tmp_path / "missing", "md")
    run = write_run(tmp_path / "r", make_records(1), summary=False)
    with (run / "records.jsonl").open("a") as fh:
        fh.write("not json\n")
    with pytest.raises(UserError, match=r"records.jsonl:2: invalid record"):
        render_show(run, "md")
    (run / "records.jsonl").write_text('{"key": "a"}\n')
    with pytest.raises(UserError, match=r"records.jsonl:1: invalid record: suite: Field required"):
        render_show(run, "md")
    (run / "run.json").write_text("{}")
    with pytest.raises(UserError, match=r"run.json: invalid run header: run_id: Field required"):
        render_show(run, "md")


def test_resumed_records_count_once(tmp_path):
    recs = make_records(10, seed=6)
    errored = dict(
        recs[0], status="error", error={"type": "TransientProviderError", "message": "503"}, verdicts={}
    )
    run = write_run(tmp_path / "r", [errored, *recs], summary=False)
    out = json.loads(render_show(run, "json"))["statistics"]["strata"][0]
    assert out["n"] == 10 and out["errors"] == 0


def test_one_rounding_rule_for_every_printed_percentage():
    from callbench.report.terminal import percent, tenths

    assert percent(9 / 44) == "20.5%"  # 20.4545...: rounding to 0.2045 first once printed 20.4%
    assert percent(0.2045) == "20.5%"  # 100 * 0.2045 is 20.449999... in binary: halves go up
    assert percent(0.20449) == "20.4%" and percent(1.0) == "100.0%" and percent(0.0) == "0.0%"
    assert percent(-0.00001) == "0.0%"  # never "-0.0%"
    assert tenths(-47.727) == "-47.7" and tenths(75) == "75.0"


def test_markdown_cells_are_percentages_and_points_with_one_decimal(runs):
    from callbench.report.tables import _md_cell

    row = {
        "accuracy": 9 / 44,
        "ci_low": 0.1,
        "ci_high": 0.36789,
        "partial_diagnostic": 0.75,
        "flip_rate": 0.125,
        "diff": 75.0,
        "mcnemar_p": 0.0123456,
    }
    assert _md_cell(row, "accuracy") == "20.5%"
    assert _md_cell(row, "ci") == "10.0–36.8%"
    assert _md_cell(row, "partial_diagnostic") == "75.0%" and _md_cell(row, "flip_rate") == "12.5%"
    assert _md_cell(row, "diff") == "75.0"  # points, not 75.000
    assert _md_cell(row, "mcnemar_p") == "0.0123"
    a, b = runs
    pairs = render_compare([a, b], "md").split("## Paired comparisons")[1]
    assert ".000" not in pairs
    # CSV keeps fractions, rounded once, to four decimals
    rows = list(csv.DictReader(io.StringIO(render_compare([a, b], "csv").split("\n\n")[0])))
    assert all(len(r["accuracy"].split(".")[1]) <= 4 for r in rows)


def test_compare_does_not_rank_runs_no_test_separates(tmp_path):
    # Two runs of the same skill on the same cases: their paired interval spans 0, so they share
    # rank 1 (shown "=1"); a much weaker run ranks after both of them, alone.
    a = write_run(tmp_path / "a", make_records(60, skill=0.7, seed=3), model="model-a")
    b = write_run(tmp_path / "b", make_records(60, skill=0.7, seed=4), model="model-b")
    weak = write_run(tmp_path / "w", make_records(60, skill=0.05, seed=5), model="model-weak")
    rows = list(csv.DictReader(io.StringIO(render_compare([a, b, weak], "csv", pairs=False))))
    tier = [r for r in rows if r["tier"] == "native-function-contract"]
    ranks = {r["model"]: (r["rank"], r["tied"]) for r in tier}
    assert ranks["model-a"] == ranks["model-b"] == ("1", "True")
    assert ranks["model-weak"] == ("3", "False")
    text = render_compare([a, b, weak], "md", pairs=False)
    assert sum(1 for ln in text.splitlines() if ln.startswith("| =1 ")) == 4  # two tiers × two runs
