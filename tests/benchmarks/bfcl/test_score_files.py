"""Item 19: per-entry output of ``bfcl score-results``: BFCL-style score files and callbench records."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from bfcl_model import MODEL
from results_helpers import dotted_entries, gold_rows, write_result

from callbench.cli.main import main
from callbench.harness.runfolder import read_header, read_records, read_summary

RESULT = "BFCL_v4_simple_python_result.json"


def _results(tmp_path, bfcl_folder):
    """Three correct entries, one kept-dots call (wrong for this model), one free-text answer.

    Plus one inference error.
    """
    entries = dotted_entries(bfcl_folder, "simple_python", 6)
    rows = gold_rows(entries[:3], underscored=True) + gold_rows(entries[3:4], underscored=False)
    rows.append({"id": entries[4]["id"], "result": "I would call a function here."})
    rows.append({"id": entries[5]["id"], "result": "Error during inference: 500 Internal Server Error"})
    write_result(tmp_path / "result" / MODEL / "non_live" / RESULT, rows)
    return [row["id"] for row in rows]


def test_score_files_and_records_for_every_entry(tmp_path, bfcl_folder):
    ids = _results(tmp_path, bfcl_folder)
    out = tmp_path / "scores"
    assert (
        main(
            [
                "bfcl",
                "score-results",
                str(tmp_path / "result"),
                "--data",
                str(bfcl_folder),
                "--score-dir",
                str(out),
            ]
        )
        == 0
    )
    lines = [
        json.loads(line)
        for line in (out / MODEL / "non_live" / "BFCL_v4_simple_python_score.json").read_text().splitlines()
    ]
    assert lines[0] == {"accuracy": 0.5, "correct_count": 3, "total_count": 6}
    failed = {line["id"]: line for line in lines[1:]}
    assert list(failed) == ids[3:]  # BFCL's score files list the failed entries only
    assert failed[ids[3]]["error_type"] == "simple_function_checker:wrong_func_name"
    assert failed[ids[4]]["error_type"] == "ast_decoder:decoder_failed"
    assert all(line["valid"] is False and line["error"] and line["model_name"] == MODEL for line in lines[1:])

    run = out / MODEL
    records = {record.case_id: record for record in read_records(run)}
    assert set(records) == set(ids)  # every entry, passed or not
    assert records[ids[0]].verdicts["bfcl"].passed
    assert records[ids[3]].verdicts["bfcl"].codes == ["simple_function_checker:wrong_func_name"]
    assert records[ids[3]].trace.calls[0].tool.count(".") >= 1  # the call as the model made it
    error = records[ids[5]]
    assert (
        error.status == "error" and error.error.type == "bfcl_inference_error"
    )  # infrastructure, not the model
    header = read_header(run)
    assert header.model == MODEL and header.options["bfcl"]["name_convention"]["underscore_to_dot"] is True
    assert header.options["bfcl"]["bfcl_eval_version"] == "2026.3.23"
    summary = read_summary(run)
    assert summary.tiers["bfcl"].passed == 3 and summary.n_error == 1
    assert main(["show", str(run)]) == 0
    # Re-scoring these records from their traces would lose BFCL's name convention: refused in one line.
    assert main(["score", str(run)]) == 2


def test_improved_score_files_name_the_fixes(tmp_path, bfcl_folder):
    row = {
        "id": "live_multiple_964-207-0",
        "result": [
            {
                "transfer_to_human_agent": json.dumps(
                    {"statement": "Can you tell me what is the minimum package arrival time?"}
                )
            }
        ],
    }
    write_result(tmp_path / "result" / MODEL / "live" / "BFCL_v4_live_multiple_result.json", [row])
    out = tmp_path / "scores"
    assert (
        main(
            [
                "bfcl",
                "score-results",
                str(tmp_path / "result"),
                "--data",
                str(bfcl_folder),
                "--mode",
                "improved",
                "--score-dir",
                str(out),
            ]
        )
        == 0
    )
    record = read_records(out / MODEL)[0]
    details = record.verdicts["bfcl"].details["bfcl"]
    assert record.verdicts["bfcl"].passed and details["faithful_passed"] is False
    assert details["answer_fixes"] == ["renamed_answer_params"]


def test_default_score_dir_sits_beside_the_result_dir(tmp_path, bfcl_folder):
    _results(tmp_path, bfcl_folder)
    assert main(["bfcl", "score-results", str(tmp_path / "result"), "--data", str(bfcl_folder)]) == 0
    assert (tmp_path / "score-callbench" / MODEL / "non_live" / "BFCL_v4_simple_python_score.json").is_file()
    assert (
        main(
            [
                "bfcl",
                "score-results",
                str(tmp_path / "result" / MODEL),
                "--data",
                str(bfcl_folder),
                "--mode",
                "improved",
            ]
        )
        == 0
    )
    assert (tmp_path / "score-callbench-improved" / MODEL / "records.jsonl").is_file()


SECOND_MODEL = "gpt-4o-mini-2024-07-18-FC"
"""Another registered FC model with ``underscore_to_dot``, the convention of MODEL: the mixed outputs
are scored under its name, so that one ``bfcl evaluate`` (one import of bfcl-eval, ~8 s of CPU, nearly
all of the command's cost) scores both result sets below, each model folder on its own."""


def _mixed_results(root, bfcl_folder):
    """One perturbed output per entry (every 4th entry of every single-turn category, dotted names
    included), under SECOND_MODEL."""
    import zlib

    from perturb import build_outputs

    from callbench.benchmarks.bfcl.outputs import group_of

    by_id: dict[str, list[dict]] = {}
    for row in build_outputs(bfcl_folder, stride=4):
        by_id.setdefault(row["id"], []).append(row)
    chosen = [rows[zlib.crc32(entry_id.encode()) % len(rows)] for entry_id, rows in by_id.items()]
    for category in {row["category"] for row in chosen}:
        lines = [{"id": row["id"], "result": row["result"]} for row in chosen if row["category"] == category]
        write_result(
            root / "result" / SECOND_MODEL / group_of(category) / f"BFCL_v4_{category}_result.json", lines
        )


@pytest.fixture(scope="module")
def bfcl_evaluated(tmp_path_factory, bfcl_folder, reference_python):
    """A BFCL project root holding two models' results, scored by ``bfcl evaluate`` in one process:
    MODEL, the six entries of :func:`_results`; SECOND_MODEL, the mixed outputs."""
    root = tmp_path_factory.mktemp("bfcl-evaluate")
    _results(root, bfcl_folder)
    _mixed_results(root, bfcl_folder)
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(root), "OPENAI_API_KEY": "unused"}
    subprocess.run(
        [
            str(reference_python.parent / "bfcl"),
            "evaluate",
            "--model",
            f"{MODEL},{SECOND_MODEL}",
            "--test-category",
            "single_turn",
            "--partial-eval",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(p.name for p in (root / "score").iterdir() if p.is_dir()) == sorted([MODEL, SECOND_MODEL])
    return root


def test_failed_entries_match_bfcl_score_files(tmp_path, bfcl_evaluated):
    """Entry by entry, the failed ids and error types equal those of BFCL's own score files."""
    result = bfcl_evaluated / "result" / MODEL
    assert main(["bfcl", "score-results", str(result), "--score-dir", str(tmp_path / "ours")]) == 0

    def failures(root):
        (path,) = root.rglob("BFCL_v4_simple_python_score.json")
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        return lines[0]["correct_count"], [(line["id"], line["error_type"]) for line in lines[1:]]

    ours, theirs = failures(tmp_path / "ours"), failures(bfcl_evaluated / "score" / MODEL)
    assert ours == theirs and theirs[0] == 3 and len(theirs[1]) == 3


def test_mixed_outputs_agree_with_bfcl_evaluate_entry_by_entry(tmp_path, bfcl_evaluated):
    """One perturbed output per entry, scored by `bfcl evaluate` and by `callbench bfcl
    score-results`: same failed ids, same error types."""
    result = bfcl_evaluated / "result" / SECOND_MODEL
    assert main(["bfcl", "score-results", str(result), "--score-dir", str(tmp_path / "ours")]) == 0

    def verdicts(root):
        out = {}
        for path in root.rglob("BFCL_v4_*_score.json"):
            lines = [json.loads(line) for line in path.read_text().splitlines()]
            out[path.name] = (
                lines[0]["correct_count"],
                sorted((x["id"], x["error_type"]) for x in lines[1:]),
            )
        return out

    theirs, ours = (
        verdicts(bfcl_evaluated / "score" / SECOND_MODEL),
        verdicts(tmp_path / "ours" / SECOND_MODEL),
    )
    assert len(theirs) == 13 and ours == theirs
    assert sum(len(failed) for _, failed in ours.values()) > 300  # failures of many kinds, not only passes
