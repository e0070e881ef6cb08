"""``callbench view DIR`` before DIR exists: it waits, serves the page and picks the run up."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from synth import make_records, write_run

from callbench.errors import UserError
from callbench.report.live import LiveServer


def _update(srv: LiveServer) -> dict[str, Any]:
    with urllib.request.urlopen(srv.url + "api/update?offset=0", timeout=5) as resp:
        return json.loads(resp.read())


def test_server_waits_for_the_folder_then_follows_it(tmp_path: Path) -> None:
    run = tmp_path / "later"
    srv = LiveServer(run, port=0)
    srv.start_background()
    try:
        assert srv.waiting
        with urllib.request.urlopen(srv.url, timeout=5) as resp:
            assert resp.status == 200 and 'id="cb-data"' in resp.read().decode()
        before = _update(srv)
        recs = make_records(4, seed=2)
        write_run(run, recs, model="late-model", summary=False)
        after = _update(srv)
    finally:
        srv.close()
    assert before["records"] == [] and before["header"] == {} and before["progress"] is None
    assert before["run"] == {"label": "later", "model": None, "exists": False}
    assert [r["key"] for r in after["records"]] == [r["key"] for r in recs]
    assert after["header"]["model"] == "late-model"
    assert after["run"] == {"label": "late-model (later)", "model": "late-model", "exists": True}
    assert after["statistics"]["strata"][0]["n"] == 4


def test_a_file_or_a_foreign_folder_is_still_refused(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(UserError, match="a file"):
        LiveServer(file, port=0)
    with pytest.raises(UserError, match="not a run folder"):
        LiveServer(tmp_path, port=0)  # holds notes.txt, nothing a run writes
    empty = tmp_path / "empty"
    empty.mkdir()
    srv = LiveServer(empty, port=0)  # an empty folder: the run may be about to write into it
    srv.close()
    assert not srv.waiting


def test_cli_prints_one_waiting_line(tmp_path: Path) -> None:
    code = "from callbench.cli.main import main; raise SystemExit(main())"
    missing = tmp_path / "not-yet"
    cmd = [sys.executable, "-c", code, "view", str(missing), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert line.startswith(f"waiting for {missing} to appear… (serving at http://127.0.0.1:")


def test_page_opened_before_the_folder_shows_the_run_once_it_appears(tmp_path: Path, browser: Any) -> None:
    run = tmp_path / "later"
    srv = LiveServer(run, port=0)
    srv.start_background()
    try:
        page, console = browser
        page.goto(srv.url)
        page.wait_for_function("document.getElementById('f-count').textContent.startsWith('0 of 0')")
        write_run(run, make_records(7, seed=5), model="late-model", summary=False)
        page.wait_for_function(
            "document.getElementById('f-count').textContent.startsWith('7 of 7')", timeout=10_000
        )
        assert console.errors == []
    finally:
        srv.close()
