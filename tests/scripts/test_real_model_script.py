"""scripts/real-model.sh and scripts/real_model_figures.py without the server build (the plumbing CI runs).

The real run (a llama.cpp server built from PyPI, 10-30 minutes) is not part of CI; these tests check
that the script parses, refuses bad settings with one line, runs its plumbing mode end to end against a
real `callbench run` folder, and that the figures script reads run folders right — including the error
records, serving findings and torn lines a real server run produces.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "real-model.sh"
FIGURES = ROOT / "scripts" / "real_model_figures.py"
STEPS = (
    "native-starter native-genomics native-dag prompt-starter prompt-genomics prompt-dag "
    "agent-openai-mcp agent-agents-sdk"
).split()


def _callbench() -> str:
    beside = Path(sys.executable).parent / "callbench"
    found = str(beside) if beside.exists() else shutil.which("callbench")
    if not found:
        pytest.fail("no callbench command beside the test interpreter or on PATH (pip install -e .)")
    return found


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REAL_MODEL_")}
    env.update({"CALLBENCH": _callbench(), "XDG_CACHE_HOME": str(tmp / "cache"), **extra})
    return env


def _script(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=tmp,
        env=_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_model_figures", FIGURES)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def plumbing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One plumbing run of the script (a real `callbench run` with the embedded baseline agent)."""
    tmp = tmp_path_factory.mktemp("plumbing")
    return tmp / "out", _script(tmp, "--plumbing", "--out", str(tmp / "out"))


def test_script_parses() -> None:
    result = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_help_lists_the_settings(tmp_path: Path) -> None:
    result = _script(tmp_path, "--help")
    assert result.returncode == 0
    for name in ("--plumbing", "REAL_MODEL_VENV", "REAL_MODEL_CASE_TIMEOUT", "CALLBENCH"):
        assert name in result.stdout
    assert "set -euo" not in result.stdout


def test_plumbing_runs_callbench_and_prints_the_figures(plumbing) -> None:
    out, result = plumbing
    assert result.returncode == 0, result.stderr[-2000:]
    run = out / "plumbing-starter"
    summary = json.loads((run / "summary.json").read_text())
    tier = summary["tiers"]["native-function-contract"]
    row = (
        f"| plumbing-starter | native | starter | native-function-contract | {tier['passed']} / {tier['n']} |"
    )
    assert row in result.stdout
    assert "## Serving findings" in result.stdout and "## Wall time per run" in result.stdout
    # nothing real ran: no server venv, no server log, no run folder of a real step
    assert not (out / "server.log").exists() and not (out / "native-starter").exists()
    assert not (Path(out).parent / "cache").exists()


def test_plumbing_plans_every_step_against_one_server(plumbing) -> None:
    _, result = plumbing
    text = result.stdout
    for step in STEPS:
        assert f"plan: {step}: " in text or f"skip: {step}: " in text, step
    plans = [line for line in text.splitlines() if line.startswith("plan: ")]
    assert plans, text
    for line in plans:
        if " run " in line and "--agent" not in line:
            # long enough for a slow CPU server, one request at a time, nothing cached
            for option in ("--case-timeout 900", "--request-timeout 600", "--concurrency 1", "--no-cache"):
                assert option in line, (option, line)
            assert "@http://127.0.0.1:PORT/v1" in line
    assert any("-m prompt:llamacpp:" in line for line in plans)
    doctor = [line for line in plans if line.startswith("plan: doctor: ")]
    if doctor:  # this callbench has the command: bounded like the runs, the report as JSON
        for option in ("--json", "--request-timeout 600", "--max-tokens 256", "--context-probe 16384"):
            assert option in doctor[0], (option, doctor[0])
    assert any("dag:" in line for line in plans)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--bogus"], {}, "unknown argument '--bogus'"),
        (["--steps", "native-starter,nope"], {}, "--steps: unknown step 'nope'"),
        (["--out"], {}, "--out needs a folder"),
        ([], {"REAL_MODEL_N_CTX": "0"}, "REAL_MODEL_N_CTX must be a positive integer (got '0')"),
        ([], {"REAL_MODEL_CASE_TIMEOUT": "1.5"}, "REAL_MODEL_CASE_TIMEOUT must be a positive integer"),
        ([], {"REAL_MODEL_REQUEST_TIMEOUT": "900"}, "REAL_MODEL_REQUEST_TIMEOUT (900) must be below"),
        ([], {"REAL_MODEL_DAG": "starter"}, "REAL_MODEL_DAG must be a dag: suite spec"),
        ([], {"REAL_MODEL_DRY": "yes"}, "REAL_MODEL_DRY must be 0 or 1"),
        ([], {"CALLBENCH": "no-such-callbench"}, "no callbench command 'no-such-callbench'"),
    ],
)
def test_bad_settings_are_one_line(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    # --plumbing always: should a check ever let a bad setting through, nothing is built
    result = _script(tmp_path, "--plumbing", *args, **env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("real-model.sh: ") and message in lines[0], result.stderr
    assert not (tmp_path / "runs").exists()  # refused before any folder is made


def _copy_run(plumbing, tmp_path: Path) -> Path:
    out, result = plumbing
    assert result.returncode == 0, result.stderr[-2000:]
    target = tmp_path / "out"
    shutil.copytree(out, target)
    return target


def test_figures_count_errors_and_serving_findings(figures: ModuleType, plumbing, tmp_path: Path) -> None:
    root = _copy_run(plumbing, tmp_path)
    records_file = root / "plumbing-starter" / "records.jsonl"
    records = [json.loads(line) for line in records_file.read_text().splitlines()]
    # what a misconfigured real server leaves: an answer whose text is a call, an HTTP 500 error record
    suspect = records[0]
    suspect["trace"]["rounds"][0]["text_call_format"] = "hermes"
    suspect["trace"]["rounds"][0]["finish_reason"] = "length"
    first = next(iter(suspect["verdicts"].values()))
    first["reasons"].append({"code": "serving_parse_suspected", "message": "looks like a call"})
    error = dict(records[1], status="error", verdicts={})
    error["error"] = {
        "type": "ServerError",
        "message": "HTTP 500 from http://127.0.0.1:1/v1: Input should be a valid string",
    }
    overflow = records[2]  # a case the server's context window cut: counted apart, beside accuracy
    overflow["verdicts"]["native-function-contract"]["reasons"].append({"code": "context_overflow"})
    lines = [json.dumps(r) for r in (suspect, error, *records[2:])]
    records_file.write_text("\n".join(lines) + '\n{"key": "cut mid-wri')
    checks = [
        {"id": "one_call", "name": "one call", "status": "passed", "evidence": "get_weather(city)"},
        {
            "id": "tool_choice_required",
            "name": "tool_choice required",
            "status": "failed",
            "evidence": "HTTP 500",
            "corrupts": "runs with --tool-choice required",
        },
    ]
    (root / "doctor.json").write_text(json.dumps({"requests": 3, "checks": checks}))
    text = figures.render(root)
    assert "- 2 checks: 1 passed, 1 failed, 0 skipped; 3 request(s)" in text
    assert (
        "- tool_choice required: FAILED — HTTP 500 (would corrupt: runs with --tool-choice required)" in text
    )
    assert "| plumbing-starter | starter | ServerError | 1 | " in text
    assert "Input should be a valid string" in text
    serving = next(line for line in text.splitlines() if line.startswith("| plumbing-starter | 2 |"))
    assert "| 1 (hermes 1) |" in serving and "500 ×1" in serving and "length 1" in serving
    assert "1 unreadable line(s) in records.jsonl skipped" in text
    contract = next(line for line in text.splitlines() if "| starter | native-function-contract |" in line)
    cells = [c.strip() for c in contract.strip("|").split("|")]
    passed, n = (int(x) for x in cells[4].split(" / "))
    assert n == 3 and cells[6] == "1"  # n from summary.json (written before the edit), one case cut
    rest = passed - bool(overflow["verdicts"]["native-function-contract"]["passed"])
    assert cells[7] == f"{rest} / 2 ({50.0 * rest:.1f}%)"


def test_figures_accuracy_matches_the_summary(figures: ModuleType, plumbing) -> None:
    out, _ = plumbing
    run = figures.load_run(out / "plumbing-starter", "plumbing-starter")
    rows = figures.accuracy_rows(run)
    summary = json.loads((out / "plumbing-starter" / "summary.json").read_text())
    assert len(rows) == len(summary["tiers"])
    for row in rows:
        cell = summary["tiers"][row[3]]["by_suite"]["starter"]
        assert row[4] == f"{cell['passed']} / {cell['n']}"
    # a single run folder works as the argument too, with wall time from the records
    assert "| plumbing-starter | native | starter |" in figures.render(out / "plumbing-starter")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "no such folder"),
        (lambda p: p.write_text("x"), "not a folder"),
        (lambda p: p.mkdir(), "no run folders"),
        (
            lambda p: (p.mkdir(), (p / "r").mkdir(), (p / "r" / "run.json").write_text("{oops")),
            "run.json: not valid JSON",
        ),
        (lambda p: (p.mkdir(), (p / "run.json").write_text("[1]")), "expected a JSON object, got list"),
    ],
)
def test_figures_bad_input_is_one_line(figures: ModuleType, tmp_path: Path, capsys, setup, message) -> None:
    target = tmp_path / "target"
    setup(target)
    assert figures.main([str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("real_model_figures: ") and message in err[0], err
