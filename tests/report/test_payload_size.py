"""Report size (issue 16 item 14): records without final_state, packed rows and gzipped details,
within a byte budget, and the page's loadRecord giving back the whole record in Chromium."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from synth import make_records, write_run

from callbench.harness.runfolder import read_run
from callbench.report.html import script_json, write_report
from callbench.report.payload import (
    DETAIL_CHUNK,
    build_payload,
    record_detail,
    unpack_details,
    unpack_rows,
)
from callbench.types.records import CaseRecord

BYTES_PER_RECORD = 280
"""Budget for a record's share of rows + details + shared parts + tables, on the records of
:func:`_records` (measured: 214 B; the same records are 3,700 B as JSON lines). The realistic
genomics records of ``bench/report_scale.py``: 1,050 B per record for the whole page (of it about
700 B rows, records and shared parts, 310 B the overview's comparisons) vs 8,850 B inline."""


def _records(n: int, seed: int, *, state_bytes: int = 2000) -> list[dict[str, Any]]:
    """Synthetic records with a big final_state (as real executors write) and a longer trace."""
    rng = random.Random(seed)
    records = make_records(n, seed=seed)
    for i, rec in enumerate(records):
        if rec["status"] != "completed":
            continue
        rec["offered_tools"] = [f"tool_{j:02d}" for j in range(12)]
        # Random letters do not compress: if final_state reached the page the budget would burst.
        noise = "".join(rng.choice("acgt") for _ in range(state_bytes))
        rec["trace"]["final_state"] = {"sequence": noise, "case": i}
    return records


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x]


def _without_state(line: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(line))
    out["trace"].pop("final_state", None)
    return out


def test_record_detail_drops_final_state_only(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", _records(3, seed=1))
    line = _lines(run)[0]
    assert "final_state" in line["trace"]
    detail = record_detail(CaseRecord.model_validate(line))
    assert "final_state" not in detail["trace"]
    assert detail == _without_state(line)


def test_packed_payload_round_trips_and_stays_under_budget(tmp_path: Path) -> None:
    n = 600
    dirs = [write_run(tmp_path / f"r{i}", _records(n, seed=i + 1), model=f"m{i}") for i in range(3)]
    runs = [read_run(d) for d in dirs]
    payload = build_payload(runs)
    for i, d in enumerate(dirs):
        lines = _lines(d)
        assert unpack_details(payload, i) == [_without_state(x) for x in lines]
        rows = unpack_rows(payload, i)
        assert [r["key"] for r in rows] == [x["key"] for x in lines]
        assert [r["instruction"] for r in rows] == [x["instruction"] for x in lines]
        assert [{t: v["passed"] for t, v in r["verdicts"].items()} for r in rows] == [
            {t: v["passed"] for t, v in x["verdicts"].items()} for x in lines
        ]
        assert [[c["tool"] for c in r["trace"]["calls"]] for r in rows] == [
            [c["tool"] for c in x["trace"]["calls"]] for x in lines
        ]
        assert len(payload["runs"][i]["details"]["chunks"]) == -(-n // DETAIL_CHUNK)
    # Every case is the same in the three runs: its shared parts are stored once.
    assert len(unpack_details_shared(payload)) == n
    per_record = sum(
        len(script_json(payload["runs"][i][k]).encode()) for i in range(3) for k in ("records", "details")
    )
    per_record += len(script_json(payload["packed"]).encode())
    assert per_record / (3 * n) <= BYTES_PER_RECORD
    inline = sum(len(json.dumps(x)) for d in dirs for x in _lines(d))
    assert per_record * 8 < inline


def unpack_details_shared(payload: dict[str, Any]) -> list[Any]:
    from callbench.report.payload import unpack_chunks

    return unpack_chunks(payload["packed"]["shared"])


def test_load_record_in_chromium_gives_the_record_without_final_state(tmp_path: Path, browser: Any) -> None:
    n = DETAIL_CHUNK + 20  # two chunks per run
    dirs = [
        write_run(tmp_path / f"r{i}", _records(n, seed=i + 5, state_bytes=200), model=f"m{i}")
        for i in range(2)
    ]
    out = write_report(dirs, tmp_path / "report.html")
    page, console = browser
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(out.as_uri())
    page.wait_for_function("document.getElementById('f-count').textContent.length > 0")
    for run_index, d in enumerate(dirs):
        lines = _lines(d)
        for index in (0, DETAIL_CHUNK - 1, DETAIL_CHUNK, n - 1):
            got = page.evaluate("([r, i]) => window.callbenchData.loadRecord(r, i)", [run_index, index])
            assert got == _without_state(lines[index]), (run_index, index)
    # The panel shows the inflated record (instruction and final text of the first row).
    first = page.locator("[data-testid=case-row]").first
    key = first.get_attribute("data-key")
    first.click()
    panel = page.locator("[data-testid=case-panel]").first
    panel.wait_for()
    line = next(x for x in _lines(dirs[0]) if x["key"] == key)
    assert line["instruction"] in panel.inner_text()
    assert panel.locator("[data-testid=final-text]").inner_text() == line["trace"]["final_text"]
    assert console.errors == []
