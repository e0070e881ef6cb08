"""An exported run opened in `inspect view` (inspect_ai's own log viewer, served on 127.0.0.1) in a
real headless Chromium: every case is in the samples list, every tier and diagnostic has its column.
`inspect view` runs from inspect_ai's venv (conftest.py: ``inspect_python``), not callbench's
environment."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from callbench.harness.runfolder import read_run
from callbench.interop.inspect_log import export_inspect

ARTIFACT = "inspect-view.png"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _inspect_command(python: Path) -> list[str]:
    """inspect_ai's command line (what its `inspect` script runs) in the reference venv."""
    return [str(python), "-m", "inspect_ai._cli.main"]


def _wait(url: str, process: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"inspect view exited with {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"inspect view did not answer on {url}")


def test_exported_run_opens_in_inspect_view(noisy_run, tmp_path, inspect_python):
    from browser import ARTIFACTS, browser_context, new_page

    logs = tmp_path / "logs"
    done = export_inspect(noisy_run, logs / "noisy.eval")
    records = read_run(noisy_run).records
    port = _free_port()
    command = [
        *_inspect_command(inspect_python),
        "view",
        "--log-dir",
        str(logs),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait(url, process)
        with browser_context(1600, 2400) as ctx, new_page(ctx) as (page, console):
            page.goto(url)
            # the log list opens the only log; its samples grid lists the cases
            page.get_by_text(records[-1].case_id, exact=True).first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / ARTIFACT))
            missing = [r.case_id for r in records if page.get_by_text(r.case_id, exact=True).count() == 0]
            assert not missing, f"cases not in the samples list: {missing}"
            for scorer in done.scorers:  # one column per tier, diagnostics and partial credit apart
                assert scorer.upper() in body, f"no column for {scorer}"
            assert "callbench/starter" in body
            page_errors = [e for e in console.errors if e.startswith("pageerror")]
            assert not page_errors, page_errors
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
