"""The live page (``callbench view``) in Chromium against the real server: progress, ETA, a run
header that appears late, a run folder that does not exist yet, export buttons across re-renders."""

from __future__ import annotations

import json
import re
import time
from types import SimpleNamespace

import pytest
from synth import make_records, write_run

from callbench.report.live import LiveServer
from callbench.report.live_state import LiveStateWriter


def _append(run_dir, records):
    with (run_dir / "records.jsonl").open("a") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")


def _finish(writer, n):
    for _ in range(n):
        writer.state["done"] += 1
    writer._write(force=True)


def _eta_seconds(text: str) -> int:
    m = re.fullmatch(r"ETA (?:(\d+) min )?(\d+) s", text)
    assert m, text
    return int(m.group(1) or 0) * 60 + int(m.group(2))


@pytest.fixture
def served():
    servers = []

    def serve(path):
        srv = LiveServer(path, port=0)
        srv.start_background()
        servers.append(srv)
        return srv

    yield serve
    for srv in servers:
        srv.close()


def test_progress_and_eta_follow_the_run(tmp_path, served, browser):
    recs = make_records(20, seed=5)
    run = write_run(tmp_path / "run", recs[:4], summary=False)
    writer = LiveStateWriter(run)
    writer.on_run_start(SimpleNamespace(run_id="run"), 20)
    # The run started 40 s ago and finished 4 cases: 10 s a case, 16 left -> 160 s.
    writer.state["started_at"] = time.time() - 40
    _finish(writer, 4)
    srv = served(run)
    page, console = browser
    page.goto(srv.url)
    count, eta = page.locator("[data-testid=live-count]"), page.locator("[data-testid=live-eta]")
    count.filter(has_text="4 of 20 cases").wait_for()
    first = _eta_seconds(eta.inner_text())
    assert 150 <= first <= 185, first  # (plus the seconds the page took to open)
    assert page.locator("#f-count").inner_text().startswith("4 of 4")

    _append(run, recs[4:16])
    _finish(writer, 12)
    count.filter(has_text="16 of 20 cases").wait_for(timeout=10_000)
    second = _eta_seconds(eta.inner_text())
    # 16 cases in about 41 s: 4 left take about 10 s, far less than before.
    assert 8 <= second <= 20 and second < first, second
    page.wait_for_function("document.getElementById('f-count').textContent.startsWith('16 of 16')")
    # Export buttons stay one per table and chart after the live re-renders.
    dupes = page.evaluate(
        """() => Array.from(document.querySelectorAll('table[data-export], svg[data-export]')).filter(t => {
              const p = t.previousElementSibling; return !p || !p.classList.contains('export-btn'); }).length
              + document.querySelectorAll('.export-btn').length
              - document.querySelectorAll('table[data-export], svg[data-export]').length"""
    )
    assert dupes == 0
    assert page.locator("button.export-btn[data-export-for=cases]").count() == 1

    _append(run, recs[16:])
    writer.state["done"] = 20
    writer.on_run_end({})
    page.locator("[data-testid=live-status]").filter(has_text="Run finished.").wait_for(timeout=10_000)
    assert count.inner_text() == "20 of 20 cases" and eta.count() == 0
    assert console.errors == []


def test_header_written_after_the_page_opened(tmp_path, served, browser):
    run = tmp_path / "late"
    run.mkdir()
    srv = served(run)
    page, console = browser
    page.goto(srv.url)
    page.locator("#live").filter(has_text="Waiting for the run").wait_for()
    assert page.title() == "callbench · late"
    write_run(run, make_records(6, seed=2), model="m-late", summary=False)
    page.wait_for_function("document.title === 'callbench · m-late (late)'", timeout=10_000)
    assert page.locator("header h1").inner_text() == "callbench · m-late (late)"
    assert "m-late (late): 6 records" in page.locator("#meta").inner_text()
    options = page.locator("#f-run option").all_inner_texts()
    assert "m-late (late)" in options
    assert set(page.locator("#rows tr.row td:first-child").all_inner_texts()) == {"m-late (late)"}
    assert console.errors == []


def test_waits_for_a_run_folder_that_does_not_exist_yet(tmp_path, served, browser):
    run = tmp_path / "not-yet"
    srv = served(run)
    page, console = browser
    page.goto(srv.url)
    page.locator("[data-testid=live-status]").filter(has_text="Waiting for the run folder…").wait_for()
    write_run(run, make_records(3, seed=1), model="m-new", summary=False)
    page.wait_for_function(
        "document.getElementById('f-count').textContent.startsWith('3 of 3')", timeout=10_000
    )
    assert page.title() == "callbench · m-new (not-yet)"
    assert "Waiting for the run folder" not in page.locator("#live").inner_text()
    assert console.errors == []
