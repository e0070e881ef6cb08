"""Ctrl-C on ``callbench run`` (issue 33, item 9): the run keeps what it finished, writes its summary,
exits 130 (not 0) and names the folder and the command that finishes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import callbench


def test_ctrl_c_exits_130_and_names_the_resume_command(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [sys.executable, "-m", "callbench.cli.main", "run", "--suite", "starter", "--model", "oracle"]
    live = subprocess.Popen(
        # one case at a time: 16 x 0.5 s leaves seconds between the second record and the run's end,
        # so a loaded machine cannot finish the run before the signal lands (it did, at concurrency 8)
        [*command, "--delay", "0.5", "--concurrency", "1", "-o", str(run), "--progress", "quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    records = run / "records.jsonl"
    deadline = time.monotonic() + 60
    while not (records.exists() and len(records.read_text().splitlines()) >= 2):
        assert time.monotonic() < deadline and live.poll() is None
        time.sleep(0.05)
    live.send_signal(signal.SIGINT)
    _, err = live.communicate(timeout=60)
    assert live.returncode == 130, err
    kept = len(records.read_text().splitlines())
    assert 2 <= kept < 16
    line = err.strip().splitlines()[-1]
    assert line == (
        f"callbench: interrupted; {kept} records are kept in {run} (summary.json covers them); "
        f"finish the run with: callbench run --resume {run}"
    )
    assert (run / "summary.json").exists() and not (run / "run.lock").exists()
    finished = callbench.run("starter", "oracle", out_dir=run, resume=True, progress="quiet")
    assert finished.summary["n_completed"] == 16
