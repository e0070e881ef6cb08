"""`callbench export atif`: one ATIF v1.4 trajectory per case and trial, valid against the RFC's
schema (tests/interop/schemas/atif-v1.4.schema.json) and NVIDIA's ATIF models (nvidia-nat-atif)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from callbench.cli.main import main
from callbench.harness.runfolder import read_run
from callbench.harness.usage import estimate_cost, price_table
from callbench.interop.atif import export_atif

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "atif-v1.4.schema.json").read_text())


def _validate(path: Path) -> dict:
    data = json.loads(path.read_text())
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(data)
    steps = data["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    for step in steps:  # every observation answers a call of its own step
        calls = {c["tool_call_id"] for c in step.get("tool_calls", [])}
        for result in step.get("observation", {}).get("results", []):
            assert result["source_call_id"] in calls
        metrics = step.get("metrics", {})
        assert metrics.get("cached_tokens", 0) <= metrics.get("prompt_tokens", 0)
    final = data["final_metrics"]
    assert final["total_steps"] == len(steps)
    assert final["total_prompt_tokens"] == sum(s.get("metrics", {}).get("prompt_tokens", 0) for s in steps)
    return data


def _nat_check(data: dict) -> None:
    atif = pytest.importorskip("nat.atif", reason="nvidia-nat-atif is in the test extra")
    atif.Trajectory.model_validate(data)


def test_one_valid_trajectory_per_case_and_trial(oracle_run, tmp_path):
    done = export_atif(oracle_run, tmp_path / "atif")
    records = read_run(oracle_run).records
    assert len(done.files) == len(records) == 32
    expected = {tmp_path / "atif" / "starter" / f"{r.case_id}.trial-{r.trial}.json" for r in records}
    assert set(done.files) == expected
    for path in done.files:
        data = _validate(path)
        _nat_check(data)
        assert data["schema_version"] == "ATIF-v1.4"
        extra = data["extra"]["callbench"]
        record = next(r for r in records if r.key == extra["key"] and r.trial == extra["trial"])
        steps = data["steps"]
        assert steps[0] == {"step_id": 1, "source": "user", "message": record.instruction}
        calls = [c for s in steps for c in s.get("tool_calls", [])]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in calls] == [
            (c.call_id, c.tool, c.arguments) for c in record.trace.calls
        ]
        results = {
            r["source_call_id"]: r["content"]
            for s in steps
            for r in s.get("observation", {}).get("results", [])
        }
        for call in record.trace.calls:  # every answered call's result, a call-only step's stand-in too
            assert json.loads(results[call.call_id]) == call.result
        assert {k: v["passed"] for k, v in extra["verdicts"].items()} == {
            k: v.passed for k, v in record.verdicts.items()
        }
    # session ids are per case and trial, and stable across exports
    again = export_atif(oracle_run, tmp_path / "again")
    ids = {json.loads(p.read_text())["session_id"] for p in done.files}
    assert len(ids) == 32 and ids == {json.loads(p.read_text())["session_id"] for p in again.files}


def test_metrics_reasoning_cost_and_unparsed_calls(live_like_run, tmp_path):
    done = export_atif(live_like_run, tmp_path / "atif")
    assert done.errors == 1
    price = price_table().lookup("gpt-5-mini")
    assert price is not None
    per_round = estimate_cost({"input": 1200, "output": 80, "reasoning": 30, "cached_input": 400}, price[1])
    seen_unparsed = seen_error = False
    for path in done.files:
        data = _validate(path)
        _nat_check(data)
        agent_steps = [s for s in data["steps"] if s["source"] == "agent"]
        for step in agent_steps:
            assert step["reasoning_content"].startswith("Thinking about round")
            assert step["metrics"]["prompt_tokens"] == 1200 and step["metrics"]["cached_tokens"] == 400
            assert step["metrics"]["completion_tokens"] == 80
            assert step["metrics"]["extra"]["reasoning_tokens"] == 30
            assert step["metrics"]["cost_usd"] == pytest.approx(per_round)
            unparsed = step.get("extra", {}).get("unparsed_arguments")
            if unparsed:
                seen_unparsed = True
                call = step["tool_calls"][0]
                assert call["arguments"] == {} and unparsed[call["tool_call_id"]] == '{"expression": '
                assert step["extra"]["call_status"][call["tool_call_id"]] == "rejected"
        final = data["final_metrics"]
        if agent_steps:
            assert final["total_cost_usd"] == pytest.approx(per_round * len(agent_steps))
            assert final["total_cached_tokens"] == 400 * len(agent_steps)
        if data["extra"]["callbench"]["status"] == "error":
            seen_error = True
            assert data["extra"]["callbench"]["error"]["message"] == "HTTP 503"
    assert seen_unparsed and seen_error


def test_cli_writes_the_folder(noisy_run, tmp_path, capsys):
    assert main(["export", "atif", str(noisy_run), "-o", str(tmp_path / "t")]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == str(tmp_path / "t")
    assert "16 trajectory file(s)" in out.err
    data = _validate(next((tmp_path / "t" / "starter").glob("*.json")))
    verdicts = data["extra"]["callbench"]["verdicts"]
    assert verdicts["state-match"]["diagnostic"] is True
    assert verdicts["native-function-contract"]["diagnostic"] is False
