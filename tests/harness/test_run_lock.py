"""One writer per run folder (issue 33, item 6): while a run writes its folder, ``score``, ``--resume``
and review writes are refused with one line, and nothing it wrote is lost; a lock left by a killed run
is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import callbench
from callbench.harness.runlock import LOCK_FILE, RunFolderBusy, acquire, read_holder
from callbench.review.store import append_review, new_entry

CASES = 8
# 1.5 s between cases: the refused commands (each a fresh CLI process, seconds on a loaded machine)
# must all run while the writer still holds the folder (0.6 s let it finish first under load).
SLOW_RUN = ["run", "--suite", "starter", "--model", "oracle", "--limit", str(CASES), "--delay", "1.5"]


def callbench_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", *args], capture_output=True, text=True, timeout=120
    )


def start_slow_run(run: Path) -> subprocess.Popen[str]:
    """``callbench run`` of eight starter cases, one every 1.5 s, into ``run`` (stderr kept)."""
    return subprocess.Popen(
        [sys.executable, "-m", "callbench.cli.main", *SLOW_RUN, "-o", str(run), "--progress", "quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def wait_for(condition, timeout_s: float = 60.0) -> None:  # noqa: ANN001 - a test helper
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_a_live_run_refuses_score_resume_and_reviews_and_loses_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    live = start_slow_run(run)
    try:
        wait_for(lambda: lines(run / "records.jsonl") >= 1)
        holder = read_holder(run)
        assert holder is not None and holder.pid == live.pid and holder.purpose == "run"
        # Both writers start at once: on a loaded machine two CLI start-ups in a row took longer than
        # the rest of the live run, which then finished before the second was refused.
        with ThreadPoolExecutor(2) as pool:
            attempts = [
                pool.submit(callbench_cli, "score", str(run)),
                pool.submit(callbench_cli, *SLOW_RUN, "--resume", str(run), "--progress", "quiet"),
            ]
            results = [attempt.result() for attempt in attempts]
        assert live.poll() is None, "the live run ended before the refused writers ran: the test says nothing"
        for refused in results:
            assert refused.returncode == 2, refused.stderr
            message = refused.stderr.strip().splitlines()
            assert len(message) == 1 and "a live process is writing this run" in message[0], refused.stderr
            assert f"pid {live.pid}" in message[0] and "Traceback" not in refused.stderr
        key = json.loads((run / "records.jsonl").read_text().splitlines()[0])["key"]
        with pytest.raises(RunFolderBusy, match="a live process is writing this run"):
            append_review(run, new_entry(run, "ann", key, 1, "task-completion-execution", "agree"))
    finally:
        _, err = live.communicate(timeout=120)
    assert live.returncode == 0, err
    assert lines(run / "records.jsonl") == CASES  # the refused writers took nothing away
    assert not (run / LOCK_FILE).exists()  # released when the run ended
    assert callbench_cli("score", str(run)).returncode == 0  # and the finished run can be re-scored


def test_a_lock_left_by_a_killed_run_is_taken_over_and_resume_completes_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    live = start_slow_run(run)
    wait_for(lambda: lines(run / "records.jsonl") >= 2)
    os.kill(live.pid, signal.SIGKILL)
    live.wait(timeout=30)
    assert read_holder(run) is not None  # the killed run could not remove its lock
    resumed = callbench.run("starter", "oracle", limit=CASES, out_dir=run, resume=True, progress="quiet")
    assert len(resumed.records) == CASES and resumed.summary["n_completed"] == CASES
    assert not (run / LOCK_FILE).exists()


def test_a_lock_of_another_host_is_honoured_and_says_how_to_remove_it(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).write_text(
        json.dumps(
            {
                "pid": 1,
                "host": socket.gethostname() + "-elsewhere",
                "since": "2026-12-06T05:00:00+00:00",
                "purpose": "run",
            }
        )
    )
    with pytest.raises(RunFolderBusy, match="runs on another host; if it is gone, delete"):
        acquire(tmp_path, "score")


def test_one_process_cannot_take_a_lock_it_already_holds(tmp_path: Path) -> None:
    held = acquire(tmp_path, "run")
    with pytest.raises(RunFolderBusy):
        acquire(tmp_path, "score")
    held.release()
    acquire(tmp_path, "score").release()
    assert not (tmp_path / LOCK_FILE).exists()
