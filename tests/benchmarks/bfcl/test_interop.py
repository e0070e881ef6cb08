"""Interchange: callbench run -> export bfcl -> bfcl score-results (and bfcl evaluate)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from bfcl_model import MODEL

from callbench.benchmarks.bfcl.results import score_results
from callbench.cli.main import main

CATEGORIES = (
    "simple_python,simple_javascript,parallel,live_multiple,irrelevance,live_relevance,multi_turn_base"
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, bfcl_folder):
    out = tmp_path_factory.mktemp("run") / "run"
    code = main(
        [
            "run",
            "--suite",
            f"bfcl:{CATEGORIES}",
            "--model",
            "oracle",
            "--option",
            "limit=6",
            "--data",
            str(bfcl_folder),
            "--out",
            str(out),
            "--progress",
            "quiet",
        ]
    )
    assert code == 0
    return out


def test_export_then_rescore_matches_run(run_dir, bfcl_folder):
    assert main(["export", "bfcl", str(run_dir)]) == 0
    result_root = run_dir / "bfcl" / "result"
    files = sorted(p.name for p in result_root.rglob("*_result.json"))
    assert len(files) == len(CATEGORIES.split(","))
    run_summary = json.loads((run_dir / "summary.json").read_text())["scorer_aggregates"]["bfcl"][
        "categories"
    ]
    report = score_results(result_root, data=bfcl_folder)
    rescored = report["models"][MODEL]["categories"]
    for category, figures in run_summary.items():
        assert rescored[category]["correct_count"] == figures["correct_count"], category
    assert report["models"][MODEL]["name_convention"]["underscore_to_dot"] is True  # exported with '_'
    assert main(["bfcl", "score-results", str(result_root), "--data", str(bfcl_folder)]) == 0


def test_exported_files_satisfy_bfcl_evaluate(run_dir, tmp_path, reference_python):
    python = reference_python
    main(["export", "bfcl", str(run_dir), "--out", str(tmp_path / "result")])
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path), "OPENAI_API_KEY": "unused"}
    done = subprocess.run(
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
    assert "Accuracy" in done.stdout
    ours = score_results(tmp_path / "result")["models"][MODEL]["categories"]
    scores = sorted(Path(tmp_path / "score").rglob("*_score.json"))
    assert len(scores) == len(CATEGORIES.split(","))
    for path in scores:
        head = json.loads(path.read_text().splitlines()[0])
        category = path.name.removeprefix("BFCL_v4_").removesuffix("_score.json")
        assert head["correct_count"] == ours[category]["correct_count"], category


def test_improved_rescoring_lists_differences(tmp_path, bfcl_folder):
    from callbench.benchmarks.bfcl.options import BfclOptions

    folder = tmp_path / "result" / "some-model" / "non_live"
    folder.mkdir(parents=True)
    # parallel_0 expects spotify.play(artist, duration: int) twice; durations sent as numeric strings.
    result = [
        {"spotify_play": json.dumps({"artist": "Maroon 5", "duration": "15"})},
        {"spotify_play": json.dumps({"artist": "Taylor Swift", "duration": "20"})},
    ]
    (folder / "BFCL_v4_parallel_result.json").write_text(
        json.dumps({"id": "parallel_0", "result": result}) + "\n"
    )
    faithful = score_results(tmp_path / "result", data=bfcl_folder, name_convention="underscored")["models"][
        "some-model"
    ]
    improved = score_results(
        tmp_path / "result",
        data=bfcl_folder,
        options=BfclOptions(mode="improved"),
        name_convention="underscored",
    )
    figures = improved["models"]["some-model"]
    assert faithful["categories"]["parallel"]["correct_count"] == 0
    assert figures["categories"]["parallel"]["correct_count"] == 1
    assert figures["faithful_vs_improved"] == [
        {
            "id": "parallel_0",
            "faithful": "parallel_function_checker_no_order:cannot_find_match",
            "improved": "pass",
        }
    ]
