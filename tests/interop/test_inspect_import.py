"""`callbench import inspect`: inspect logs written with inspect_ai's own writer (as inspect_evals'
bfcl task writes them; built from inspect_ai's classes and written with ``write_eval_log`` in
inspect_ai's venv, through inspect_reference.py: conftest.py) and callbench's own exports, read into run
folders that callbench scores.

inspect_ai writes a ``.eval`` zstd-compressed, which callbench reads only with inspect_ai installed (the
``inspect`` extra, not in the test environment): each log is also written as inspect's JSON log, which
callbench reads itself, and the ``.eval`` is imported too (the same run with inspect_ai, the missing
extra in one line without it)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from callbench.cli.main import main
from callbench.errors import MissingExtraError, UserError
from callbench.harness.runfolder import read_run
from callbench.interop.inspect_import import import_inspect
from callbench.interop.inspect_log import export_inspect

# The EvalLog, EvalSpec, EvalSample... of each log, as JSON (inspect_reference.py validates them into
# inspect_ai's classes: ChatMessageSystem/User/Assistant by ``role``, ToolCall, Score, ModelUsage).


def _spec(task: str, n: int) -> dict[str, Any]:
    return {
        "created": "2026-11-01T10:00:00+00:00",
        "task": task,
        "dataset": {"name": "BFCL", "samples": n},
        "model": "openai/gpt-4o-mini",
        "config": {},
    }


def _log(task: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "status": "success",
        "eval": _spec(task, len(samples)),
        "samples": samples,
        "results": {"total_samples": len(samples), "completed_samples": len(samples)},
    }


def _write(inspect_write, tmp_path: Path, name: str, task: str, samples: list) -> tuple[Path, Path]:
    """The log as inspect_ai writes ``NAME.eval`` (zstd) and ``NAME.json``, in one writer process."""
    both = (tmp_path / f"{name}.eval", tmp_path / f"{name}.json")
    inspect_write({path: _log(task, samples) for path in both})
    return both


def _sample(sid: str, category: str, calls: list[tuple[str, dict]], value: str, **kw) -> dict[str, Any]:
    question = [
        {"role": "system", "content": "You are a function-calling model."},
        {"role": "user", "content": "q"},
    ]
    answer = {
        "role": "assistant",
        "content": "",
        "model": "gpt-4o-mini-2024-07-18",
        "tool_calls": [{"id": f"call_{i}", "function": f, "arguments": a} for i, (f, a) in enumerate(calls)],
    }
    return {
        "id": sid,
        "epoch": 1,
        "input": question,
        "target": "[]",
        "messages": [*question, answer],
        "scores": {"bfcl_scorer": {"value": value}},
        "metadata": {"category_name": category, "scorer": "simple"},
        "model_usage": {"openai/gpt-4o-mini": {"input_tokens": 90, "output_tokens": 12, "total_tokens": 112}},
        **kw,
    }


def _import_zstd(log: Path, out: Path, as_the_json_log: Callable[[Path, Path], None]) -> None:
    """The ``.eval`` inspect_ai wrote (zstd): with inspect_ai installed, callbench reads it with
    inspect_ai's reader and ``as_the_json_log`` checks the outcome the JSON log had; without it (the
    test environment), the missing extra in one line and nothing written."""
    try:  # the test callbench's reader makes (inspect_import.read_log)
        import inspect_ai.log  # noqa: F401
    except ImportError:
        with pytest.raises(
            MissingExtraError,
            match=r"zstd-compressed\) needs the module 'inspect_ai', which is not installed: "
            r"pip install 'callbench\[inspect\]'",
        ):
            import_inspect(log, out)
        assert not out.exists()
        return
    as_the_json_log(log, out)


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


def test_bfcl_log_is_scored_by_callbench(bfcl_cases, tmp_path, inspect_write):
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
    zstd, log = _write(inspect_write, tmp_path, "bfcl", "inspect_evals/bfcl", samples)
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

    def same_run(eval_log: Path, out: Path) -> None:
        other = import_inspect(eval_log, out)
        assert (other.suites, other.records, other.skipped, other.passed, other.agreement) == (
            report.suites,
            report.records,
            report.skipped,
            report.passed,
            report.agreement,
        )
        verdicts = {r.case_id: r.verdicts["bfcl"].passed for r in read_run(out).records}
        assert verdicts == {right.id: True, second.id: False}

    _import_zstd(zstd, tmp_path / "from-eval", same_run)


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


def test_another_task_is_refused_in_one_line(tmp_path, capsys, inspect_write):
    sample = {"id": 1, "epoch": 1, "input": "What is 2+2?", "target": "4", "messages": []}
    zstd, log = _write(inspect_write, tmp_path, "gsm8k", "inspect_evals/gsm8k", [sample])

    def refused(log: Path, out: Path) -> None:
        with pytest.raises(
            UserError, match="task 'inspect_evals/gsm8k' is not one callbench can import; supported"
        ):
            import_inspect(log, out)
        assert not out.exists()

    refused(log, tmp_path / "run")
    assert main(["import", "inspect", str(log), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("callbench: error:") and "bfcl" in err[0]
    _import_zstd(zstd, tmp_path / "from-eval", refused)


def test_refuses_a_folder_holding_a_run_and_a_non_log(oracle_run, tmp_path):
    log = export_inspect(oracle_run, tmp_path / "o.eval").path
    with pytest.raises(UserError, match="already holds a run"):
        import_inspect(log, oracle_run)
    junk = tmp_path / "junk.eval"
    junk.write_text(json.dumps({"not": "a log"}))
    with pytest.raises(UserError, match="junk.eval"):
        import_inspect(junk, tmp_path / "run")


def test_without_inspect_ai_a_deflate_log_still_reads(oracle_run, tmp_path, monkeypatch, inspect_read):
    """callbench's own reader (inspect_ai not installed) reads the zip `export inspect` writes as
    inspect_ai's reader does."""
    import builtins

    from callbench.interop.inspect_import import read_log

    log = export_inspect(oracle_run, tmp_path / "o.eval").path
    (read,) = inspect_read(log)
    with_inspect = read.log
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
