import json
import urllib.request
from types import SimpleNamespace

import pytest
from synth import make_records, write_run

from callbench.report.live import LiveServer
from callbench.report.live_state import LiveStateWriter
from callbench.types.records import CaseRecord
from callbench.types.trace import RoundInfo, TraceCall


def _get(url):
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.status, resp.read().decode()


def _append(run_dir, records, partial_tail=""):
    with (run_dir / "records.jsonl").open("a") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
        fh.write(partial_tail)


@pytest.fixture
def server(tmp_path):
    recs = make_records(30, seed=3)
    run = write_run(tmp_path / "run", recs[:10], summary=False)
    srv = LiveServer(run, port=0)
    srv.start_background()
    yield srv, run, recs
    srv.close()


def test_update_endpoint_follows_appended_records(server):
    srv, run, recs = server
    status, page = _get(srv.url)
    assert status == 200 and 'id="cb-data"' in page and '"live":true' in page
    assert srv.url.startswith("http://127.0.0.1:")
    first = json.loads(_get(srv.url + "api/update?offset=0")[1])
    assert [r["key"] for r in first["records"]] == [r["key"] for r in recs[:10]]
    assert first["statistics"]["strata"][0]["n"] == 10
    # A half-written line is not served until it is complete.
    _append(run, recs[10:15], partial_tail='{"key": "torn')
    second = json.loads(_get(srv.url + f"api/update?offset={first['offset']}")[1])
    assert [r["key"] for r in second["records"]] == [r["key"] for r in recs[10:15]]
    assert second["statistics"]["strata"][0]["n"] == 15
    with pytest.raises(urllib.error.HTTPError):
        _get(srv.url + "nope")


def test_live_state_writer_tracks_cases_in_flight(tmp_path):
    writer = LiveStateWriter(tmp_path)
    case = SimpleNamespace(suite="demo", id="c1", instruction="x")
    writer.on_run_start(SimpleNamespace(run_id="r1"), 3)
    writer.on_case_start(case, 1, ["a", "b"])
    call = TraceCall(index=0, call_id="k", round=1, tool="a", schema_valid=True, execution="ok")
    writer.on_round(case, RoundInfo(index=1, started_at=0.0), [call])
    writer._write(force=True)
    state = json.loads((tmp_path / "live.json").read_text())
    assert state["current"][0]["key"] == "demo:c1"
    assert state["current"][0]["rounds"] == [{"index": 1, "calls": [{"tool": "a", "ok": True}]}]
    record = CaseRecord(
        key="demo:c1", suite="demo", case_id="c1", category="x", trial=1, harness_mode="production-parity"
    )
    writer.on_case_end(record)
    writer.on_run_end({})
    state = json.loads((tmp_path / "live.json").read_text())
    assert state["finished"] is True and state["done"] == 1 and state["current"] == []


def test_browser_view_updates_while_run_grows(server, browser):
    srv, run, recs = server
    writer = LiveStateWriter(run)
    writer.on_run_start(SimpleNamespace(run_id="r"), 30)
    case = SimpleNamespace(suite="demo", id="in-flight")
    writer.on_case_start(case, 1, ["a"])
    writer.on_round(case, RoundInfo(index=1, started_at=0.0), [])
    writer._write(force=True)
    page, console = browser
    page.goto(srv.url)
    page.wait_for_function("document.getElementById('f-count').textContent.startsWith('10 of 10')")
    _append(run, recs[10:30])
    page.wait_for_function(
        "document.getElementById('f-count').textContent.startsWith('30 of 30')", timeout=10_000
    )
    n = page.locator("[data-testid=card] .n").first.inner_text()
    assert n == "30"
    live_case = page.locator("[data-testid=live-case]")
    assert live_case.inner_text().startswith("demo:in-flight")
    assert live_case.locator(".badge.warn").inner_text() == "R1 no call"
    assert console.errors == []


def test_view_starts_before_the_run_writes_anything(tmp_path):
    srv = LiveServer(tmp_path, port=0)
    srv.start_background()
    try:
        status, page = _get(srv.url)
        body = json.loads(_get(srv.url + "api/update?offset=0")[1])
    finally:
        srv.close()
    assert status == 200 and '"header":{}' in page
    assert body["records"] == [] and body["offset"] == 0 and body["statistics"]["strata"] == []
    assert body["live"] is None


def _with_state(records):
    for i, rec in enumerate(records):
        rec["trace"]["final_state"] = {"files": [f"f{i}.gb"], "cursor": i}
    return records


def test_update_sends_rows_and_record_endpoint_the_whole_record(tmp_path):
    recs = _with_state(make_records(6, seed=4))
    run = write_run(tmp_path / "run", recs, model="m-live", summary=False)
    writer = LiveStateWriter(run)
    writer.on_run_start(SimpleNamespace(run_id="run"), 9)
    srv = LiveServer(run, port=0)
    srv.start_background()
    try:
        body = json.loads(_get(srv.url + "api/update?offset=0")[1])
        rec = json.loads(_get(srv.url + f"api/record?key={recs[2]['key']}&trial=1")[1])
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get(srv.url + "api/record?key=demo:nope&trial=1")
    finally:
        srv.close()
    # Rows: the table's fields, not the rounds or arguments (those come from api/record).
    first = body["records"][0]
    assert first["key"] == recs[0]["key"] and "rounds" not in first["trace"]
    assert first["trace"]["calls"] == [{"tool": c["tool"]} for c in recs[0]["trace"]["calls"]]
    assert body["run"] == {"label": "m-live (run)", "model": "m-live", "exists": True}
    progress = body["progress"]
    assert progress["total"] == 9 and progress["done"] == 0 and progress["finished"] is False
    assert isinstance(progress["started_at"], float) and progress["now"] >= progress["started_at"]
    assert rec["trace"]["final_state"] == {"files": ["f2.gb"], "cursor": 2}
    assert rec["trace"]["calls"] == recs[2]["trace"]["calls"] and rec["verdicts"] == recs[2]["verdicts"]
    assert missing.value.code == 404


def test_live_panel_loads_the_record_from_the_server(server, browser):
    srv, run, recs = server
    page, console = browser
    page.goto(srv.url)
    page.wait_for_function("document.getElementById('f-count').textContent.startsWith('10 of 10')")
    got = page.evaluate("() => window.callbenchData.loadRecord(0, 3)")
    assert got["key"] == recs[3]["key"] and got["trace"]["rounds"] == recs[3]["trace"]["rounds"]
    page.locator("[data-testid=case-row]").first.click()
    panel = page.locator("[data-testid=case-panel]").first
    panel.locator("[data-testid=round-card]").first.wait_for()
    key = page.locator("[data-testid=case-row]").first.get_attribute("data-key")
    line = next(r for r in recs if r["key"] == key)
    assert panel.locator("[data-testid=round-card]").count() == len(line["trace"]["rounds"])
    assert panel.locator("[data-testid=final-text]").inner_text() == line["trace"]["final_text"]
    assert console.errors == []


def test_update_carries_breakdowns_of_the_records_so_far(server, monkeypatch):
    import callbench.report.live as live

    srv, run, recs = server
    first = json.loads(_get(srv.url + "api/update?offset=0")[1])
    assert first["breakdowns"]["runs"][0]["records"] == 10
    _append(run, recs[10:15])
    monkeypatch.setattr(live, "BREAKDOWN_INTERVAL_S", 3600.0)  # within the interval: the cached tables
    held = json.loads(_get(srv.url + f"api/update?offset={first['offset']}")[1])
    assert held["breakdowns"]["runs"][0]["records"] == 10 and len(held["records"]) == 5
    monkeypatch.setattr(live, "BREAKDOWN_INTERVAL_S", 0.0)
    fresh = json.loads(_get(srv.url + f"api/update?offset={held['offset']}")[1])
    assert fresh["breakdowns"]["runs"][0]["records"] == 15
    tools = {row["tool"]: row["cells"][0]["calls"] for row in fresh["breakdowns"]["tools"]["rows"]}
    calls = {}
    for rec in recs[:15]:
        if rec.get("status") != "error":
            for call in rec["trace"]["calls"]:
                if call.get("known_tool", True):
                    calls[call["tool"]] = calls.get(call["tool"], 0) + 1
    assert tools == calls
