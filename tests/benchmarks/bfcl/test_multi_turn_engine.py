"""Multi-turn BFCL through the full engine and CLI: run, re-score, export, bfcl evaluate."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from bfcl_model import MODEL
from gold_agent import register_gold_provider

from callbench.cli.main import main

CATEGORIES = "multi_turn_base,multi_turn_miss_func,multi_turn_miss_param,multi_turn_long_context"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, bfcl_folder):
    register_gold_provider()
    out = tmp_path_factory.mktemp("mt") / "run"
    assert (
        main(
            [
                "run",
                "--suite",
                f"bfcl:{CATEGORIES}",
                "--model",
                "bfcl-gold",
                "--option",
                "limit=2",
                "--data",
                str(bfcl_folder),
                "--out",
                str(out),
                "--progress",
                "quiet",
            ]
        )
        == 0
    )
    return out


def _bfcl_figures(run_dir):
    summary = json.loads((run_dir / "summary.json").read_text())
    return summary["scorer_aggregates"]["bfcl"]["categories"]


def test_gold_agent_passes_through_the_engine_and_rescoring(run_dir):
    figures = _bfcl_figures(run_dir)
    assert {name: row["correct_count"] for name, row in figures.items()} == {
        name: 2 for name in CATEGORIES.split(",")
    }
    assert main(["score", str(run_dir)]) == 0  # re-scored from stored traces alone
    assert _bfcl_figures(run_dir) == figures


def test_multi_turn_export_scores_the_same_in_bfcl(run_dir, tmp_path, reference_python):
    python = reference_python
    assert main(["export", "bfcl", str(run_dir), "--out", str(tmp_path / "result")]) == 0
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path), "OPENAI_API_KEY": "unused"}
    subprocess.run(
        [
            str(python.parent / "bfcl"),
            "evaluate",
            "--model",
            MODEL,
            "--test-category",
            CATEGORIES,
            "--partial-eval",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    scores = sorted((tmp_path / "score").rglob("*_score.json"))
    assert len(scores) == 4
    for path in scores:
        assert json.loads(path.read_text().splitlines()[0])["correct_count"] == 2, path.name
