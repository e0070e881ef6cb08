"""`callbench export inspect`: the .eval log read back with inspect_ai's own reader (``read_eval_log``
in inspect_ai's venv, through inspect_reference.py: conftest.py)."""

from __future__ import annotations

import json
import tomllib
import zipfile
from pathlib import Path

import pytest

from callbench.harness.runfolder import read_run
from callbench.interop.inspect_log import export_inspect

STRICT = ["native-function-contract", "real-tool-execution", "task-completion-execution"]


@pytest.fixture(scope="module")
def exported(oracle_run, noisy_run, live_like_run, tmp_path_factory, inspect_read):
    """The oracle, noisy and live-like runs exported, each with its log as inspect_ai reads it (one
    reader process for the three): ``name -> (export result, {"log", "summaries"})``."""
    out = tmp_path_factory.mktemp("inspect-export")
    runs = {"oracle": oracle_run, "noisy": noisy_run, "live": live_like_run}
    done = {name: export_inspect(run, out / f"{name}.eval") for name, run in runs.items()}
    read = inspect_read(*(result.path for result in done.values()))
    return {name: (done[name], line) for name, line in zip(done, read, strict=True)}


def test_the_reference_venv_pins_the_extras_release(inspect_version):
    """The venv the tests read logs with has the release users get with `callbench[inspect]`."""
    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    assert extras["optional-dependencies"]["inspect"] == [f"inspect_ai=={inspect_version}"]
    assert not any(r.startswith("inspect_ai") for r in extras["optional-dependencies"]["test"])


def test_layout_and_reader(oracle_run, exported):
    done, read = exported["oracle"]
    with zipfile.ZipFile(done.path) as archive:
        names = set(archive.namelist())
        start = json.loads(archive.read("_journal/start.json"))
    assert {"header.json", "summaries.json", "reductions.json", "_journal/start.json"} <= names
    assert "_journal/summaries/1.json" in names
    assert start["version"] == 2 and start["eval"]["task"] == "callbench/starter"

    run = read_run(oracle_run)
    log = read.log
    assert log.version == 2 and log.status == "success"
    # one sample per case and trial: the trial is the epoch
    assert len(log.samples) == len(run.records) == 32
    assert {(s.id, s.epoch) for s in log.samples} == {(r.case_id, r.trial) for r in run.records}
    assert all(f"samples/{s.id}_epoch_{s.epoch}.json" in names for s in log.samples)
    # the samples list inspect view shows is read from the summaries
    assert sorted((s.id, s.epoch) for s in read.summaries) == sorted((s.id, s.epoch) for s in log.samples)
    assert log.eval.config.epochs == 2
    # the run's configuration and hashes in the eval spec
    meta = log.eval.metadata["callbench"]
    suite = run.header.suites[0]
    assert meta["suites"][0]["hash"] == suite.hash
    assert meta["suites"][0]["registry_hash"] == suite.registry_hash
    assert meta["suites"][0]["prompt_template_hash"] == suite.prompt_template_hash
    assert meta["run_id"] == run.header.run_id and meta["harness_mode"] == "production-parity"
    assert log.eval.task_args["suites"] == ["starter"]
    assert log.eval.model_generate_config.temperature == 0.0
    assert log.eval.packages["callbench"] == run.header.callbench_version


def test_messages_calls_and_results(oracle_run, exported):
    log = exported["oracle"][1].log
    records = {(r.case_id, r.trial): r for r in read_run(oracle_run).records}
    for sample in log.samples:
        record = records[(sample.id, sample.epoch)]
        assert sample.input == record.instruction
        assert sample.messages[0].role == "user" and sample.messages[0].text == record.instruction
        calls = [c for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
        assert [(c.id, c.function, c.arguments) for c in calls] == [
            (c.call_id, c.tool, c.arguments) for c in record.trace.calls
        ]
        results = {m.tool_call_id: m for m in sample.messages if m.role == "tool"}
        for call in record.trace.calls:
            if call.execution == "ok":
                assert json.loads(results[call.call_id].text) == call.result
        assert sample.output.completion == record.trace.final_text
        assert sample.metadata["callbench"]["key"] == record.key


def test_one_scorer_per_tier_never_merged(noisy_run, exported):
    log = exported["noisy"][1].log
    run = read_run(noisy_run)
    scorers = [s.name for s in log.results.scores]
    assert scorers == [
        "native-function-contract",
        "native-function-contract.partial",
        "real-tool-execution",
        "real-tool-execution.partial",
        "task-completion-execution",
        "task-completion-execution.partial",
        "state-match",
        "state-match.partial",
    ]
    by_name = {s.name: s for s in log.results.scores}
    assert by_name["state-match"].metadata["diagnostic"] is True
    assert all(by_name[t].metadata["diagnostic"] is False for t in STRICT)
    assert all(by_name[t + ".partial"].metadata["diagnostic"] is True for t in STRICT)
    summary = run.summary
    assert summary is not None
    for tier in [*STRICT, "state-match"]:
        metrics = by_name[tier].metrics
        assert metrics["accuracy"].value == pytest.approx(summary.tiers[tier].accuracy)
        stratum = next(s for s in summary.statistics.strata if s.tier == tier)
        assert metrics["ci_low"].value == pytest.approx(stratum.accuracy.low)
        assert metrics["ci_high"].value == pytest.approx(stratum.accuracy.high)
    records = {r.case_id: r for r in run.records}
    for sample in log.samples:
        record = records[sample.id]
        for tier in [*STRICT, "state-match"]:
            verdict = record.verdicts[tier]
            assert sample.scores[tier].value == ("C" if verdict.passed else "I")
            assert sample.scores[tier + ".partial"].value == pytest.approx(verdict.partial)
            assert [r["code"] for r in sample.scores[tier].metadata["reasons"]] == verdict.codes
    # reductions: each scorer's mean per case over its trials
    reductions = {r.scorer: r for r in log.reductions}
    assert set(reductions) == set(scorers)


def test_usage_reasoning_errors_and_unparsed_calls(live_like_run, exported):
    done, read = exported["live"]
    assert done.errors == 1
    log = read.log
    assert log.eval.model == "openai/gpt-5-mini"
    errored = [s for s in log.samples if s.error is not None]
    assert len(errored) == 1 and "HTTP 503" in errored[0].error.message and not errored[0].scores
    sample = next(s for s in log.samples if s.error is None and s.messages[1].role == "assistant")
    answer = sample.messages[1]
    assert answer.content[0].type == "reasoning" and answer.content[0].reasoning.startswith("Thinking")
    usage = sample.model_usage["gpt-5-mini"]
    rounds = sum(1 for m in sample.messages if m.role == "assistant")
    assert usage.input_tokens == (1200 - 400) * rounds  # inspect counts cached input apart
    assert usage.input_tokens_cache_read == 400 * rounds
    assert usage.reasoning_tokens == 30 * rounds
    broken = next(r for r in read_run(live_like_run).records if any(c.parse_error for c in r.trace.calls))
    refused = next(s for s in log.samples if s.id == broken.case_id)
    call = next(c for m in refused.messages if m.role == "assistant" for c in (m.tool_calls or []))
    assert call.arguments == {} and call.parse_error == "unterminated JSON"
    tool = next(m for m in refused.messages if m.role == "tool")
    assert tool.error is not None and "refused" in tool.text
