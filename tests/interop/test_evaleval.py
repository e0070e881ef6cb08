"""`callbench export evaleval`: Every Eval Ever records, valid against EvalEval's eval.schema.json
v0.2.0 (tests/interop/schemas/, with where it comes from), laid out as that project lays them out."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import jsonschema
import pytest

from callbench.cli.main import main
from callbench.errors import UserError
from callbench.harness.runfolder import read_run
from callbench.interop.evaleval import export_evaleval

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "evaleval-eval-0.2.0.schema.json").read_text())
STRICT = ["native-function-contract", "real-tool-execution", "task-completion-execution"]


def _valid(path: Path) -> dict:
    data = json.loads(path.read_text())
    jsonschema.Draft7Validator(SCHEMA).validate(data)
    return data


def test_schema_layout_and_intervals(noisy_run, tmp_path):
    done = export_evaleval(noisy_run, tmp_path / "ee", organization="ACME evals")
    assert len(done.files) == 1
    path = done.files[0]
    # data/{benchmark}/{developer}/{model}/{uuid}.json
    relative = path.relative_to(tmp_path / "ee").parts
    assert relative[:4] == ("data", "starter", "callbench", "noisy_3")
    uuid.UUID(path.stem)
    data = _valid(path)
    assert data["schema_version"] == "0.2.0"
    assert data["evaluation_id"] == f"starter/callbench_noisy:3/{data['retrieved_timestamp']}"
    assert data["source_metadata"]["source_type"] == "evaluation_run"
    assert data["source_metadata"]["source_organization_name"] == "ACME evals"
    assert data["model_info"]["inference_engine"]["name"] == "callbench"
    summary = read_run(noisy_run).summary
    assert summary is not None
    results = {r["evaluation_name"]: r for r in data["evaluation_results"]}
    for tier in [*STRICT, "state-match"]:
        stratum = next(s for s in summary.statistics.strata if s.tier == tier)
        name = f"{tier} (production-parity)" + (" (diagnostic)" if tier == "state-match" else "")
        details = results[name]["score_details"]
        assert details["score"] == pytest.approx(stratum.by_suite["starter"].accuracy.estimate)
        interval = details["uncertainty"]["confidence_interval"]
        assert (interval["lower"], interval["upper"]) == pytest.approx(
            (stratum.by_suite["starter"].accuracy.low, stratum.by_suite["starter"].accuracy.high)
        )
        assert interval["confidence_level"] == 0.95 and interval["method"] == stratum.accuracy.method
        assert details["details"]["diagnostic"] is (tier == "state-match")
        # the partial credit is an entry of its own, never the tier's score
        partial = results[f"{tier} partial credit (production-parity) (diagnostic)"]["score_details"]
        assert partial["details"]["diagnostic"] is True
    assert results["state-match (production-parity) (diagnostic)"]["source_data"]["dataset_name"] == "starter"
    # exporting again rewrites the same file
    again = export_evaleval(noisy_run, tmp_path / "ee")
    assert again.files == done.files


def test_api_models_and_engines(live_like_run, tmp_path):
    data = _valid(export_evaleval(live_like_run, tmp_path / "ee").files[0])
    info = data["model_info"]
    assert info["id"] == "openai/gpt-5-mini" and info["developer"] == "openai"
    assert info["inference_platform"] == "openai" and "inference_engine" not in info
    header = json.loads((live_like_run / "run.json").read_text())
    header["model"] = "vllm:Qwen/Qwen3-8B@http://127.0.0.1:8000/v1"
    folder = tmp_path / "vllm"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(header))
    (folder / "records.jsonl").write_text((live_like_run / "records.jsonl").read_text())
    done = export_evaleval(folder, tmp_path / "ee2")
    assert done.files[0].relative_to(tmp_path / "ee2").parts[:4] == ("data", "starter", "Qwen", "Qwen3-8B")
    info = _valid(done.files[0])["model_info"]
    assert info["inference_engine"] == {"name": "vLLM"} and info["id"] == "Qwen/Qwen3-8B"


def test_cli_and_bad_relationship(oracle_run, tmp_path, capsys):
    assert (
        main(
            [
                "export",
                "evaleval",
                str(oracle_run),
                "-o",
                str(tmp_path / "x"),
                "--relationship",
                "first_party",
            ]
        )
        == 0
    )
    written = Path(capsys.readouterr().out.strip())
    assert _valid(written)["source_metadata"]["evaluator_relationship"] == "first_party"
    with pytest.raises(UserError, match="--relationship must be one of"):
        export_evaleval(oracle_run, tmp_path / "y", relationship="friend")
