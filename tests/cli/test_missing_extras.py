"""A missing optional extra is one line before anything runs (issue 33, item 9): an example agent
(``cmd:`` and ``py:``), the ``hf:`` provider and ``callbench review agreement`` each name the module,
the extra and the pip command, and exit 2 like every usage error. Before, an example agent without
its extra scored a silent 0% ("0 error records"), ``hf:`` made one error record per case, and
``review agreement`` ended in a traceback.

A missing package is simulated with ``sys.modules[name] = None`` (in this process, or in a
``sitecustomize`` for the Python processes a command starts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import callbench
from callbench.cli.main import main
from callbench.review.store import append_review, current_records, new_entry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"
TIER = "native-function-contract"


def only_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_cmd_example_agent_without_its_extra_is_one_line_before_any_case_runs(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text("import sys\nsys.modules['agents'] = None\n")
    agent = f"cmd:{sys.executable} {EXAMPLES / 'agents_sdk_agent.py'} --model m"
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", "run", "--suite", "starter", "--agent", agent]
        + ["-o", str(out), "--progress", "quiet"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**_environ(), "PYTHONPATH": str(blocked)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert only_line(done.stderr) == (
        f"callbench: error: --agent {agent!r}: agents_sdk_agent.py needs the module 'agents', "
        "which is not installed: pip install 'callbench[agents]'"
    )
    assert not out.exists()  # no case ran


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_a_py_example_agent_without_its_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.delitem(sys.modules, "agents_sdk_agent", raising=False)
    monkeypatch.setitem(sys.modules, "agents", None)
    out = tmp_path / "run"
    spec = "py:agents_sdk_agent:agent"
    code = main(["run", "--suite", "starter", "--agent", spec, "-o", str(out), "--progress", "quiet"])
    assert code == 2
    assert only_line(capsys.readouterr().err) == (
        f"callbench: error: --agent {spec!r}: module 'agents_sdk_agent' needs the module 'agents', "
        "which is not installed: pip install 'callbench[agents]'"
    )
    assert not out.exists()


def test_hf_without_torch_is_one_line_before_any_case_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    monkeypatch.setitem(sys.modules, "torch", None)
    out = tmp_path / "run"
    model = f"hf:{checkpoint}"
    code = main(["run", "--suite", "starter", "--model", model, "-o", str(out), "--progress", "quiet"])
    assert code == 2
    assert only_line(capsys.readouterr().err) == (
        "callbench: error: the hf provider needs the module 'torch', which is not installed: "
        "pip install 'callbench[hf]'"
    )
    assert not out.exists()  # before: 16 error records, one per case


def test_review_agreement_without_its_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    callbench.run("starter", "noisy:2", out_dir=run, progress="quiet")
    records = current_records(run)
    for key in sorted(records)[:4]:
        for reviewer in ("ann", "bob"):
            append_review(run, new_entry(run, reviewer, key[0], key[1], TIER, "agree"))
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "statsmodels", None)
    assert main(["review", "agreement", str(run)]) == 2
    assert only_line(capsys.readouterr().err) == (
        "callbench: error: callbench review agreement needs the module 'statsmodels', which is not "
        "installed: pip install 'callbench[review]'"
    )
