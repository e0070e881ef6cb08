"""`callbench import inspect`: inspect logs written with inspect_ai's own writer (as inspect_evals'
bfcl task writes them) and callbench's own exports, read into run folders that callbench scores."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from callbench.cli.main import main
from callbench.errors import UserError
from callbench.harness.runfolder import read_run
from callbench.interop.inspect_import import import_inspect
from callbench.interop.inspect_log import export_inspect

log_api = pytest.importorskip("inspect_ai.log", reason="inspect_ai is in the test extra")
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ModelUsage  # noqa: E402
from inspect_ai.scorer import Score  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402


def _spec(task: str, n: int) -> log_api.EvalSpec:
    return log_api.EvalSpec(
        created="2026-11-01T10:00:00+00:00",
        task=task,
        dataset=log_api.EvalDataset(name="BFCL", samples=n),
        model="openai/gpt-4o-mini",
        config=log_api.EvalConfig(),
    )


def _write(path: Path, task: str, samples: list) -> Path:
    log = log_api.EvalLog(
        status="success",
        eval=_spec(task, len(samples)),
        samples=samples,
        results=log_api.EvalResults(total_samples=len(samples), completed_samples=len(samples)),
    )
    log_api.write_eval_log(log, str(path))
    return path


def _sample(sid: str, category: str, calls: list[tuple[str, dict]], value: str, **kw) -> log_api.EvalSample:
    question = [ChatMessageSystem(content="You are a function-calling model."), ChatMessageUser(content="q")]
    answer = ChatMessageAssistant(
        content="",
        model="gpt-4o-mini-2024-07-18",
        tool_calls=[ToolCall(id=f"call_{i}", function=f, arguments=a) for i, (f, a) in enumerate(calls)],
    )
    return log_api.EvalSample(
        id=sid,
        epoch=1,
        input=question,
        target="[]",
        messages=[*question, answer],
        scores={"bfcl_scorer": Score(value=value)},
        metadata={"category_name": category, "scorer": "simple"},
        model_usage={"openai/gpt-4o-mini": ModelUsage(input_tokens=90, output_tokens=12, total_tokens=112)},
        **kw,
    )


@pytest.fixture(scope="module")
def bfcl_cases():
    from callbench.suites.resolve import load_suite

    try:
        suite = load_suite("bfcl:simple_python", limit=2)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"bfcl-eval's data is needed: {exc}")
        pytest.skip(f"bfcl-eval's data is not installed: {exc}")
    return suite.cases


def test_bfcl_log_is_scored_by_callbench(bfcl_cases, tmp_path):
    right, second = bfcl_cases
    gold = [(s.tool, s.arguments) for s in right.expected]
    tool = second.expected[0].tool
    assert isinstance(tool, str) and "." in tool  # BFCL's dotted name, which APIs rewrite
    wrong = [(tool.replace(".", "_"), {k: "not-this" for k in second.expected[0].arguments})]
    samples = [
        _sample(right.id, "simple_python", gold, "C"),
        _sample(second.id, "simple_python", wrong, "I"),
        _sample("multi_turn_base_0", "multi_turn_base", [], "I"),
        _sample("exec_simple_0", "exec_simple", [], "I"),
    ]
    log = _write(tmp_path / "bfcl.eval", "inspect_evals/bfcl", samples)
    report = import_inspect(log, tmp_path / "run")
    assert report.suites == ["bfcl"] and report.records == 2
    assert report.skipped == {
        "category not in callbench's bfcl: exec_simple": 1,
        "needs its executor's state (multi_turn_base)": 1,
    }
    assert report.passed == {"bfcl": (1, 2)} and report.agreement == (2, 2)
    run = read_run(tmp_path / "run")
    assert run.header is not None and run.header.harness_mode == "inspect-log"
    assert run.header.options["inspect_log"]["task"] == "inspect_evals/bfcl"
    records = {r.case_id: r for r in run.records}
    assert records[right.id].verdicts["bfcl"].passed
    missed = records[second.id]
    assert not missed.verdicts["bfcl"].passed
    call = missed.trace.calls[0]
    assert call.tool == tool and call.annotations["inspect_function"] == tool.replace(".", "_")
    assert call.known_tool  # checked against the case's contracts after the name was mapped back
    assert missed.trace.rounds[-1].usage is not None and missed.trace.rounds[-1].usage.input_tokens == 90
    # the folder is an ordinary run: `callbench score` re-scores it to the same verdicts
    assert main(["score", str(tmp_path / "run")]) == 0
    again = {r.case_id: r.verdicts["bfcl"].passed for r in read_run(tmp_path / "run").records}
    assert again == {right.id: True, second.id: False}


def test_callbench_log_round_trip(noisy_run, tmp_path):
    """A run exported as an inspect log and imported again gets the same verdicts, tier by tier."""
    log = export_inspect(noisy_run, tmp_path / "noisy.eval").path
    report = import_inspect(log, tmp_path / "back")
    assert report.task == "callbench/starter" and not report.skipped
    before = {(r.key, r.trial): r for r in read_run(noisy_run).records}
    after = {(r.key, r.trial): r for r in read_run(tmp_path / "back").records}
    assert before.keys() == after.keys()
    for key, record in before.items():
        for tier, verdict in record.verdicts.items():
            other = after[key].verdicts[tier]
            assert (other.passed, other.codes, other.partial) == (
                verdict.passed,
                verdict.codes,
                verdict.partial,
            )


def test_another_task_is_refused_in_one_line(tmp_path, capsys):
    sample = log_api.EvalSample(id=1, epoch=1, input="What is 2+2?", target="4", messages=[])
    log = _write(tmp_path / "gsm8k.eval", "inspect_evals/gsm8k", [sample])
    with pytest.raises(
        UserError, match="task 'inspect_evals/gsm8k' is not one callbench can import; supported"
    ):
        import_inspect(log, tmp_path / "run")
    assert not (tmp_path / "run").exists()
    assert main(["import", "inspect", str(log), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("callbench: error:") and "bfcl" in err[0]


def test_refuses_a_folder_holding_a_run_and_a_non_log(oracle_run, tmp_path):
    log = export_inspect(oracle_run, tmp_path / "o.eval").path
    with pytest.raises(UserError, match="already holds a run"):
        import_inspect(log, oracle_run)
    junk = tmp_path / "junk.eval"
    junk.write_text(json.dumps({"not": "a log"}))
    with pytest.raises(UserError, match="junk.eval"):
        import_inspect(junk, tmp_path / "run")


def test_without_inspect_ai_a_deflate_log_still_reads(oracle_run, tmp_path, monkeypatch):
    """callbench's own reader (inspect_ai not installed) reads the zip `export inspect` writes."""
    import builtins

    from callbench.interop.inspect_import import read_log

    log = export_inspect(oracle_run, tmp_path / "o.eval").path
    with_inspect = read_log(log)
    real = builtins.__import__

    def hidden(name, *args, **kwargs):
        if name == "inspect_ai" or name.startswith("inspect_ai."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", hidden)
    plain = read_log(log)
    assert plain["eval"]["task"] == with_inspect["eval"]["task"] == "callbench/starter"
    key = lambda s: (str(s["id"]), s["epoch"])  # noqa: E731
    assert sorted(map(key, plain["samples"])) == sorted(map(key, with_inspect["samples"]))
    report = import_inspect(log, tmp_path / "plain")
    assert report.records == 32 and report.passed["native-function-contract"] == (32, 32)
