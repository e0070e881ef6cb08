"""End to end through the CLI and the catalog: suite, executor, scorer and planner by name."""

from __future__ import annotations

import json
from pathlib import Path

from callbench.cli.main import main


def test_run_planner_on_a_generated_grid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    spec = "dag:n_core=5,10;depth=1,4;n_conn=0,5;n_dis=5;seeds=1;restate=both"
    assert main(["run", "--suite", spec, "--model", "planner", "--k", "all", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    table = summary["scorer_aggregates"]["dag"]
    assert len(table["rows"]) == 16  # 8 settings x 2 arms
    assert all(r["success_rate"] == 1.0 and r["efficiency"] == 1.0 for r in table["rows"])
    assert table["restatement"]["n_pairs"] == 8
    # Stored runs re-score offline to the same figures.
    assert main(["score", str(out)]) == 0
    again = json.loads((out / "summary.json").read_text())["scorer_aggregates"]["dag"]
    assert again["rows"] == table["rows"]
