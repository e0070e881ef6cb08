"""Modes never pooled, offline re-scoring reproduces verdicts, resume after a kill, error records."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import callbench
from callbench.errors import PoolingError, UserError
from callbench.harness.runfolder import read_records
from callbench.harness.summary import build_summary, ensure_single_mode


def test_oracle_assisted_mode_recorded_and_never_pooled(tmp_path):
    a = callbench.run("starter", "oracle", "all", out_dir=tmp_path / "a", progress="quiet")
    b = callbench.run(
        "starter", "oracle", "all", out_dir=tmp_path / "b", progress="quiet", harness_mode="oracle-assisted"
    )
    assert {r.harness_mode for r in a.records} == {"production-parity"}
    assert {r.harness_mode for r in b.records} == {"oracle-assisted"}
    assert b.records[0].harness_assistance["step_count_disclosed"] is True
    assert a.records[0].harness_assistance == {"step_count_disclosed": False, "round_budget": 10}
    with pytest.raises(PoolingError):
        ensure_single_mode(a.records + b.records)
    from callbench.harness.runfolder import read_header

    with pytest.raises(PoolingError):
        build_summary(read_header(a.run_dir), a.records + b.records)


def test_oracle_assisted_nudges_after_an_early_stop(tmp_path):
    result = callbench.run(
        "starter",
        "noisy:1:early_stop",
        "all",
        out_dir=tmp_path / "r",
        progress="quiet",
        harness_mode="oracle-assisted",
        case_ids=["email_after_lookup"],
    )
    rounds = result.records[0].trace.rounds
    assert any(r.nudge and "1 of 2 requested steps" in r.nudge for r in rounds)


def test_production_parity_appends_guidance_and_budget_ten(tmp_path):
    from callbench.harness.modes import CONTINUATION_GUIDANCE, ModePolicy

    assert ModePolicy("production-parity").round_budget(3, None) == 10
    assert ModePolicy("oracle-assisted").round_budget(3, None) == 7
    assert "remaining steps" in CONTINUATION_GUIDANCE


def test_score_reproduces_original_verdicts(tmp_path):
    result = callbench.run("starter", "noisy:2", "all", out_dir=tmp_path / "r", progress="quiet")
    before = {r.key: {k: v.model_dump() for k, v in r.verdicts.items()} for r in result.records}
    summary = callbench.score_run(result.run_dir, "all")
    after = {r.key: {k: v.model_dump() for k, v in r.verdicts.items()} for r in read_records(result.run_dir)}
    assert before == after
    assert summary["tiers"] == result.summary["tiers"]


def test_score_under_a_single_tier_without_model(tmp_path):
    result = callbench.run(
        "starter", "oracle", "native-function-contract", out_dir=tmp_path / "r", progress="quiet"
    )
    summary = callbench.score_run(result.run_dir, "task-completion-execution")
    assert summary["tiers"]["task-completion-execution"]["accuracy"] == 1.0


SLOW_RUN = """
import asyncio, sys
import callbench
from callbench.providers.agents import oracle
original = oracle.PlanPlayer.generate
async def slow(self, *a, **k):
    await asyncio.sleep(0.15)
    return await original(self, *a, **k)
oracle.PlanPlayer.generate = slow
callbench.run("starter", "oracle", "all", out_dir=sys.argv[1], progress="quiet", concurrency=1)
"""


def test_resume_after_kill_loses_at_most_cases_in_flight(tmp_path):
    run_dir = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(run_dir)])
    records = run_dir / "records.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline:
        if records.exists() and len(records.read_text().splitlines()) >= 4:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = {json.loads(line)["key"] for line in records.read_text().splitlines() if line.strip()}
    assert 4 <= len(done_before) < 16
    resumed = callbench.run(
        resume=True, out_dir=run_dir, suite="starter", model="oracle", tier="all", progress="quiet"
    )
    keys = [r.key for r in read_records(run_dir)]
    assert len(keys) == len(set(keys)) == 16
    assert resumed.summary["tiers"]["real-tool-execution"]["accuracy"] == 1.0


def test_resume_refuses_a_changed_model(tmp_path):
    callbench.run("starter", "oracle", "all", out_dir=tmp_path / "r", progress="quiet", limit=1)
    with pytest.raises(UserError, match="cannot resume"):
        callbench.run("starter", "refuse", "all", out_dir=tmp_path / "r", progress="quiet", resume=True)


def test_existing_run_folder_is_not_overwritten(tmp_path):
    callbench.run("starter", "oracle", "all", out_dir=tmp_path / "r", progress="quiet", limit=1)
    with pytest.raises(UserError, match="already holds a run"):
        callbench.run("starter", "oracle", "all", out_dir=tmp_path / "r", progress="quiet", limit=1)


def test_executor_failure_is_recorded_not_fatal(tmp_path):
    from callbench.catalog import catalog
    from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn

    script = ScriptedProvider([tool_call_turn("delete_event", {"event_id": "evt_404"}), text_turn("done")])
    catalog().providers.register("script-exec-failure", lambda spec: script, replace=True)
    result = callbench.run(
        "starter",
        "script-exec-failure",
        "all",
        out_dir=tmp_path / "r",
        progress="quiet",
        case_ids=["create_and_delete"],
    )
    record = result.records[0]
    assert record.status == "completed"
    failed = [c for c in record.trace.calls if c.execution == "error"]
    assert failed and "no event" in failed[0].error
    assert "execution_failed" in record.verdicts["real-tool-execution"].codes
    # the model was told about the failure in the tool message
    tool_messages = [m for m in script.history[-1]["messages"] if m.role == "tool"]
    assert "no event" in tool_messages[0].content


def test_malformed_model_output_is_scored_not_a_crash(tmp_path):
    from callbench.catalog import catalog
    from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn

    script = ScriptedProvider(
        [tool_call_turn("get_weather", '{"city": "Par'), tool_call_turn("no_such_tool", {}), text_turn("")]
    )
    catalog().providers.register("script-malformed", lambda spec: script, replace=True)
    result = callbench.run(
        "starter",
        "script-malformed",
        "all",
        out_dir=tmp_path / "r",
        progress="quiet",
        case_ids=["weather_paris"],
    )
    record = result.records[0]
    assert record.status == "completed"
    assert [c.execution for c in record.trace.calls] == ["rejected", "rejected"]
    codes = record.verdicts["native-function-contract"].codes
    assert "malformed_arguments" in codes and "unknown_tool" in codes
