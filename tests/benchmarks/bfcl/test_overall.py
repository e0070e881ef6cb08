"""BFCL's overall score: the formula against bfcl-eval's own leaderboard aggregation (constructed
per-category results, run in the reference venv), the scorer's aggregate and table, pooling several
runs, and a run exported as BFCL result files that ``bfcl evaluate`` gives the same overall."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from bfcl_model import MODEL

from callbench.benchmarks.bfcl.aggregate import summarise
from callbench.benchmarks.bfcl.data import read_jsonl
from callbench.benchmarks.bfcl.overall import CATEGORY_SIZES, LIVE_AST, SCORING, WEIGHTS, overall_score
from callbench.benchmarks.bfcl.overall_runs import overall_rows, pool_runs
from callbench.benchmarks.bfcl.scorer import BfclScorer
from callbench.cli.main import main
from callbench.plugin import UserError, Verdict
from callbench.types.records import CaseRecord


def _constructed() -> dict[str, dict[str, dict[str, float | int]]]:
    """Per-category results of five registered models (names without "_"): complete, partial with
    partial counts, live categories missing, single-turn only, nothing."""
    rng = random.Random(30)

    def item(category: str, count: int | None = None) -> dict[str, float | int]:
        total = count or CATEGORY_SIZES[category]
        return {"accuracy": rng.randint(0, total) / total, "total_count": total}

    return {
        "gpt-4.1-2025-04-14-FC": {name: item(name) for name in SCORING},
        "gpt-4.1-2025-04-14": {
            **{name: item(name, 7) for name in SCORING if not name.startswith(("memory", "web_search_no"))},
            "live_simple": item("live_simple", 3),
        },
        "gpt-4o-2024-11-20-FC": {
            name: item(name)
            for name in SCORING
            if name not in ("live_multiple", "live_parallel", "memory_kv")
        },
        "gpt-4o-2024-11-20": {
            name: item(name, 10) for name in SCORING if "_turn" not in name and "mem" not in name
        },
        "gpt-4o-mini-2024-07-18-FC": {},
    }


def test_category_sizes_match_the_data(bfcl_folder):
    for category, size in CATEGORY_SIZES.items():
        if category.startswith("web_search"):
            source = "web_search"
        elif category.startswith("memory"):
            source = "memory"
        else:
            source = category
        assert len(read_jsonl(bfcl_folder / f"BFCL_v4_{source}.json")) == size, category
    assert len(SCORING) == 21 and sum(WEIGHTS.values()) == 100


def test_overall_equals_bfcl_leaderboard(tmp_path, reference_python):
    """bfcl-eval's generate_leaderboard_csv on the same per-category results: the same overall and
    parts, to the last bit."""
    table = _constructed()
    source, target = tmp_path / "in.json", tmp_path / "out.json"
    source.write_text(json.dumps(table))
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path / "root")}
    script = Path(__file__).parent / "bfcl_reference_overall.py"
    subprocess.run(
        [str(reference_python), str(script), str(source), str(target)],
        check=True,
        env=env,
        capture_output=True,
    )
    theirs = json.loads(target.read_text())
    for model, per in table.items():
        ours = overall_score(per)
        assert ours["overall"] == theirs[model]["overall"], model
        for part in WEIGHTS:
            if part == "irrelevance" and not {"irrelevance", "live_irrelevance"} <= set(per):
                assert theirs[model][part] == "N/A"  # BFCL shows no figure, but counts the part as ours
                continue
            assert ours["parts"][part] == theirs[model][part], (model, part)
        assert ours["complete"] == (len(per) == len(SCORING))
        if set(LIVE_AST) & set(per):  # the per-run summary's live mean is BFCL's too
            assert summarise(per)["live_ast"] == theirs[model]["live"], model
    # a missing live category weighs its full size in the live mean, as in BFCL
    partial = overall_score(table["gpt-4o-2024-11-20-FC"])
    kept = [name for name in LIVE_AST if name in table["gpt-4o-2024-11-20-FC"]]
    present = sum(table["gpt-4o-2024-11-20-FC"][n]["accuracy"] * CATEGORY_SIZES[n] for n in kept)
    assert partial["parts"]["live"] == pytest.approx(present / sum(CATEGORY_SIZES[n] for n in LIVE_AST))


def _record(category: str, number: int, passed: bool) -> CaseRecord:
    return CaseRecord(
        key=f"bfcl:{category}_{number}",
        suite="bfcl",
        case_id=f"{category}_{number}",
        category=category,
        harness_mode="production-parity",
        verdicts={"bfcl": Verdict(scorer="bfcl", passed=passed, details={"bfcl": {"category": category}})},
    )


def test_scorer_aggregate_shows_the_overall():
    records = [_record("simple_python", n, n % 2 == 0) for n in range(10)]
    records += [_record("multi_turn_base", n, n < 3) for n in range(4)]
    aggregate = BfclScorer().aggregate(records)
    result = aggregate.figures["overall"]
    assert result["parts"]["multi_turn"] == pytest.approx(0.75 / 4)
    assert result["overall"] == pytest.approx(0.1 * 0.5 / 3 / 4 + 0.3 * 0.75 / 4)
    assert not result["complete"] and "memory_kv" in result["missing"]
    (table,) = aggregate.tables or []
    assert table.rows[-1][0] == "Overall (incomplete)" and table.rows[-1][3] == "2/21"
    assert any(note.startswith("incomplete: missing simple_java") for note in table.notes)


def _run_folder(folder: Path, model: str, mode: str, categories: dict[str, dict]) -> Path:
    folder.mkdir(parents=True)
    summary = {
        "model": model,
        "harness_mode": "production-parity",
        "scorer_aggregates": {"bfcl": {"categories": categories, "settings": {"mode": mode}}},
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_runs_are_pooled_per_model_and_mode(tmp_path, capsys):
    table = _constructed()["gpt-4.1-2025-04-14-FC"]
    single = {name: table[name] for name in SCORING[:12]}
    rest = {name: table[name] for name in SCORING[12:]}
    runs = [
        _run_folder(tmp_path / "a", "m", "faithful", single),
        _run_folder(tmp_path / "b", "m", "faithful", rest),
        _run_folder(tmp_path / "c", "m", "improved", single),
    ]
    pools = pool_runs(runs)
    assert [(p.model, p.mode, len(p.categories)) for p in pools] == [
        ("m", "faithful", 21),
        ("m", "improved", 12),
    ]
    rows, shown = overall_rows(pools)
    assert rows[0]["overall"] == overall_score(table)["overall"] and rows[0]["complete"]
    assert shown.rows[1][1].endswith("*") and any("m (improved): incomplete" in note for note in shown.notes)
    assert main(["bfcl", "overall", *map(str, runs), "--json"]) == 0
    assert '"overall"' in capsys.readouterr().out
    twice = _run_folder(tmp_path / "d", "m", "faithful", {"multi_turn_base": table["multi_turn_base"]})
    with pytest.raises(UserError, match="multi_turn_base of m"):
        pool_runs([runs[1], twice])


def _csv_value(path: Path, column: str) -> str:
    with path.open() as handle:
        (row,) = list(csv.DictReader(handle))
    return row[column]


def test_exported_run_gets_the_same_overall_from_bfcl_evaluate(tmp_path, bfcl_folder, reference_python):
    """A noisy run of every single- and multi-turn category, exported as BFCL result files: `bfcl
    evaluate` computes the overall and its parts callbench's run summary holds (to BFCL's two decimals)."""
    run = tmp_path / "run"
    argv = ["run", "--suite", "bfcl:single_turn,multi_turn", "--model", "noisy:3", "--option", "limit=3"]
    argv += ["--data", str(bfcl_folder), "--out", str(run), "--progress", "quiet"]
    assert main(argv) == 0
    assert main(["export", "bfcl", str(run), "--out", str(tmp_path / "result")]) == 0
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path), "OPENAI_API_KEY": "unused"}
    command = [str(reference_python.parent / "bfcl"), "evaluate", "--model", MODEL, "--partial-eval"]
    subprocess.run(command + ["--test-category", "all"], env=env, capture_output=True, text=True, check=True)
    ours = json.loads((run / "summary.json").read_text())["scorer_aggregates"]["bfcl"]["overall"]
    score = tmp_path / "score"

    def percent(value: float) -> str:
        return f"{value * 100:.2f}%"

    assert _csv_value(score / "data_overall.csv", "Overall Acc") == percent(ours["overall"])
    assert _csv_value(score / "data_non_live.csv", "Non-Live Overall Acc") == percent(
        ours["parts"]["non_live"]
    )
    assert _csv_value(score / "data_live.csv", "Live Overall Acc") == percent(ours["parts"]["live"])
    assert _csv_value(score / "data_multi_turn.csv", "Multi Turn Overall Acc") == percent(
        ours["parts"]["multi_turn"]
    )
    assert 0 < ours["overall"] < 0.6 and not ours["complete"]  # no agentic category in this run
