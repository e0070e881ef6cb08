"""The case table and the case panel in Chromium at 1440×900 (issue 16, items 5, 6, 7, 11, 12).

Expected values come from ``records.jsonl`` (or the synthetic records), computed here, never by
the page's own functions.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from browser import ARTIFACTS
from shared_runs import shared_run
from synth import make_record, make_records, write_run

from callbench.report.html import render_html, write_report
from callbench.report.payload import build_payload

WIDTH, HEIGHT = 1440, 900
ROWS = "document.querySelectorAll('[data-testid=case-row]').length"
PANELS = "document.querySelectorAll('[data-testid=case-panel]').length"
OPEN_ALL = "() => { for (const r of document.querySelectorAll('tr.row[aria-expanded=false]')) r.click(); }"
DURATIONS = "() => [...document.querySelectorAll('[data-testid=case-row] td.num')].map((t) => +t.textContent)"


def _callbench(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(["callbench", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out


def _cases(ids: list[str]) -> list[str]:
    return [arg for case in ids for arg in ("--case", case)]


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def genomics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The genomics suite run by the oracle (every case; the run is shared with the other browser
    modules, ``shared_runs``) and by noisy:2 (a few state-changing cases)."""
    root = tmp_path_factory.mktemp("genomics")
    noisy = _cases(["simple/nav_region", "simple/nav_goto_position", "complex/cds_translate_mw"])
    running = _callbench(
        "run", "--model", "noisy:2", "--suite", "genomics", *noisy, "--out", str(root / "noisy")
    )
    oracle = shared_run(tmp_path_factory, "--model", "oracle", "--suite", "genomics")
    _wait(running)
    _wait(
        _callbench("report", str(oracle), "-o", str(root / "oracle.html")),
        _callbench("report", str(root / "noisy"), "-o", str(root / "noisy.html")),
    )
    return {
        "oracle": root / "oracle.html",
        "oracle_records": _records(oracle),
        "noisy": root / "noisy.html",
        "noisy_records": _records(root / "noisy"),
    }


def _page(browser: Any) -> tuple[Any, Any]:
    page, console = browser
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    return page, console


def _row_ids(page: Any, n: int | None = None) -> list[tuple[str, str, str]]:
    ids = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=case-row]')].map("
        "(r) => [r.dataset.run, r.dataset.key, r.dataset.trial])"
    )
    return [tuple(x) for x in (ids if n is None else ids[:n])]


def _open_row(page: Any, key: str) -> Any:
    """Open the first row of ``key`` and return its panel once the record has loaded."""
    page.fill("#f-search", key)
    page.wait_for_function(
        "k => [...document.querySelectorAll('[data-testid=case-row]')].some((r) => r.dataset.key === k)",
        arg=key,
    )
    page.locator(f"[data-testid=case-row][data-key='{key}']").first.click()
    panel = page.locator(f"[data-testid=case-panel][data-key='{key}']").first
    panel.wait_for()
    return panel


# ---- item 6: long values wrap ----------------------------------------------------------------
def _overflowing(page: Any) -> list[str]:
    return page.evaluate(
        """() => {
          const out = [];
          for (const e of document.querySelectorAll('body *')) {
            const r = e.getBoundingClientRect();
            if (r.width && r.right > innerWidth + 0.5)
              out.push(`${e.tagName}.${e.className} right=${Math.round(r.right)}`);
          }
          for (const td of document.querySelectorAll('table.cases > tbody > tr.row > td'))
            if (td.scrollWidth > td.clientWidth + 1)
              out.push(`cell ${td.textContent.slice(0, 40)} ${td.scrollWidth}>${td.clientWidth}`);
          return out.slice(0, 10);
        }"""
    )


def test_no_horizontal_overflow_with_every_panel_open(genomics: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    recs = genomics["oracle_records"]
    page.goto(genomics["oracle"].as_uri())
    assert page.locator("#f-count").inner_text() == f"{len(recs)} of {len(recs)} records"
    # Open every row (rendering the lazy pages as they come), then unfold every long value.
    while True:
        page.evaluate(OPEN_ALL)
        if page.locator("[data-testid=case-row]").count() >= len(recs):
            break
        before = page.locator("[data-testid=case-row]").count()
        page.locator("#sentinel").scroll_into_view_if_needed()
        page.wait_for_function(f"n => {ROWS} > n", arg=before)
    page.evaluate(OPEN_ALL)
    page.wait_for_function(f"n => {PANELS} === n", arg=len(recs))
    strings = [
        (v, r["key"])
        for r in recs
        for c in r["trace"]["calls"]
        for v in (c["arguments"] or {}).values()
        if isinstance(v, str)
    ]
    value, key = max(strings, key=lambda x: len(x[0]))
    assert len(value) > 1500  # a sequence argument (complex/cds_translate_mw's is 1,836 characters)
    assert page.locator(f"[data-testid=case-panel][data-key='{key}']").count() == 1
    page.evaluate("() => { for (const b of document.querySelectorAll('[data-testid=show-all]')) b.click(); }")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert page.evaluate("innerWidth") == WIDTH
    assert _overflowing(page) == []
    # The longest argument is on the page, unfolded, and still inside the viewport's width.
    box = page.locator("pre", has_text=value[:200]).first.bounding_box()
    assert box is not None and box["x"] + box["width"] <= WIDTH
    assert console.errors == []


# ---- item 5: tool results and $ref values --------------------------------------------------------
def test_panel_shows_each_result_and_resolves_refs(genomics: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    rec = next(r for r in genomics["oracle_records"] if r["key"] == "genomics:complex/cds_translate_mw")
    calls = rec["trace"]["calls"]
    assert len(calls) >= 3
    page.goto(genomics["oracle"].as_uri())
    panel = _open_row(page, rec["key"])
    items = panel.locator("[data-testid=call]")
    assert items.count() == len(calls)
    for i, call in enumerate(calls):
        item = items.nth(i)
        assert item.get_attribute("data-tool") == call["tool"]
        for button in item.locator("[data-testid=show-all]").all():
            button.click()
        assert json.loads(item.locator("[data-testid=call-arguments]").inner_text()) == call["arguments"]
        assert json.loads(item.locator("[data-testid=call-result]").inner_text()) == call["result"]
    # translate_dna's dna is {"$ref": "get_coding_sequence.codingSequence"}: shown with its value.
    ref = panel.locator("[data-testid=ref-value][data-ref='get_coding_sequence.codingSequence']").first
    assert ref.get_attribute("data-resolved") == "true"
    first_result = next(c for c in calls if c["tool"] == "get_coding_sequence")["result"]
    assert json.dumps(first_result["codingSequence"])[:200] in ref.inner_text()
    assert "result of call 1" in ref.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    panel.screenshot(path=str(ARTIFACTS / "case-panel-results.png"))
    assert console.errors == []


# ---- item 5: state diff -----------------------------------------------------------------------
Leaf = tuple[str, str, Any, Any]


def _by_id(items: list[Any]) -> dict[str, Any] | None:
    """Records with unique string/number ids, by id (lists of such records are paired by id)."""
    ids: dict[str, Any] = {}
    for item in items:
        ident = item.get("id") if isinstance(item, dict) else None
        if isinstance(ident, bool) or not isinstance(ident, (str, int, float)) or str(ident) in ids:
            return None
        ids[str(ident)] = item
    return ids or None


def _diff(gold: Any, actual: Any, path: str, out: list[Leaf]) -> list[Leaf]:
    """The differing leaves, written independently of panel.js (same path notation)."""
    if gold == actual and type(gold) is type(actual):
        return out
    if isinstance(gold, dict) and isinstance(actual, dict):
        for k in gold:
            if k not in actual:
                out.append((f"{path}.{k}", "missing", gold[k], None))
            else:
                _diff(gold[k], actual[k], f"{path}.{k}", out)
        out.extend((f"{path}.{k}", "extra", None, actual[k]) for k in actual if k not in gold)
    elif isinstance(gold, list) and isinstance(actual, list) and _by_id(gold) and _by_id(actual):
        g, a = _by_id(gold), _by_id(actual)
        assert g is not None and a is not None
        for key, item in g.items():
            if key not in a:
                out.append((f"{path}[id={key}]", "missing", item, None))
            else:
                _diff(item, a[key], f"{path}[id={key}]", out)
        out.extend((f"{path}[id={key}]", "extra", None, item) for key, item in a.items() if key not in g)
    elif isinstance(gold, list) and isinstance(actual, list):
        for i in range(max(len(gold), len(actual))):
            if i >= len(actual):
                out.append((f"{path}[{i}]", "missing", gold[i], None))
            elif i >= len(gold):
                out.append((f"{path}[{i}]", "extra", None, actual[i]))
            else:
                _diff(gold[i], actual[i], f"{path}[{i}]", out)
    else:
        out.append((path, "changed", gold, actual))
    return out


def test_state_match_failure_shows_a_recursive_state_diff(genomics: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    failing = [
        r
        for r in genomics["noisy_records"]
        if "state-match" in r["verdicts"] and r["verdicts"]["state-match"]["details"].get("differing")
    ]
    assert failing, "noisy:2 left no state-match failure among the chosen cases"
    rec = failing[0]
    differing = rec["verdicts"]["state-match"]["details"]["differing"]
    page.goto(genomics["noisy"].as_uri())
    panel = _open_row(page, rec["key"])
    block = panel.locator("[data-testid=state-diff][data-tier='state-match']")
    assert block.count() == 1
    parts = block.locator("[data-testid=state-part]")
    assert sorted(p.get_attribute("data-part") for p in parts.all()) == sorted(differing)
    for part, values in differing.items():
        expected = _diff(values["gold"], values["actual"], part, [])
        assert expected, part
        rows = block.locator(f"[data-testid=state-part][data-part='{part}'] [data-testid=state-diff-row]")
        seen = []
        for row in rows.all():
            cells = row.locator("td").all()
            gold_text, actual_text = cells[2].inner_text(), cells[3].inner_text()
            seen.append(
                (
                    row.get_attribute("data-path"),
                    row.get_attribute("data-kind"),
                    None if gold_text == "(absent)" else json.loads(gold_text),
                    None if actual_text == "(absent)" else json.loads(actual_text),
                )
            )
        assert seen == expected
    # Changed leaves are highlighted on both sides; the whole values stay one click away.
    leaves = [d for part, v in differing.items() for d in _diff(v["gold"], v["actual"], part, [])]
    changed = sum(d[1] == "changed" for d in leaves)
    assert block.locator("[data-kind=changed] td.kv.diff").count() == 2 * changed
    ARTIFACTS.mkdir(exist_ok=True)
    panel.screenshot(path=str(ARTIFACTS / "case-panel-state-diff.png"))
    assert console.errors == []


# ---- synthetic reports -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("cases")
    rng = random.Random(5)
    recs = make_records(120, seed=3, trials=2)
    for r in recs:  # distinct durations (ties would make the expected order depend on the rule for ties)
        r["duration_ms"] = round(rng.uniform(10, 5000), 3)
    # A key that is a prefix of another key: selecting it must not show the other.
    twin = copy.deepcopy(next(r for r in recs if r["key"] == "demo:case-00001" and r["trial"] == 1))
    twin["key"], twin["case_id"] = "demo:case-00001_save", "case-00001_save"
    recs.append(twin)
    # A call to a tool that is not in the registry.
    unknown = make_record(500, rng=random.Random(1), skill=1.0)
    call = unknown["trace"]["calls"][0]
    call.update(
        tool="no_such_tool",
        known_tool=False,
        schema_valid=False,
        execution="rejected",
        result=None,
        error="unknown tool 'no_such_tool'",
        schema_errors=[],
    )
    recs.append(unknown)
    run = write_run(root / "run", recs)
    out = write_report([run], root / "report.html")
    return {"path": out, "records": recs}


def _goto_with(page: Any, path: Path, **params: str) -> None:
    page.goto(path.as_uri() + "#" + urllib.parse.urlencode(params))


# ---- item 7: exact selection -----------------------------------------------------------------
def test_exact_selection_chip_and_clear(synthetic: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    recs = synthetic["records"]
    sel = {"label": "case one", "keys": [[0, "demo:case-00001", None]]}
    _goto_with(page, synthetic["path"], sel=json.dumps(sel))
    wanted = sorted(("0", r["key"], str(r["trial"])) for r in recs if r["key"] == "demo:case-00001")
    assert len(wanted) == 2
    assert sorted(_row_ids(page)) == wanted  # not demo:case-00001_save, not demo:case-00010...
    chip = page.locator("[data-testid=selection-chip]")
    assert chip.is_visible()
    assert chip.inner_text().startswith("showing 2 selected cases: case one")
    # One trial only.
    sel_one = {"label": "trial 2", "keys": [[0, "demo:case-00001_save", 1], [0, "demo:case-00002", 2]]}
    page.evaluate("h => { location.hash = h; }", "#" + urllib.parse.urlencode({"sel": json.dumps(sel_one)}))
    page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length === 2")
    assert sorted(_row_ids(page)) == [("0", "demo:case-00001_save", "1"), ("0", "demo:case-00002", "2")]
    # The selection combines with the filters.
    page.select_option("#f-category", "edit")  # case-00001 is "edit" (i % 4 == 1); case-00002 is not
    assert _row_ids(page) == [("0", "demo:case-00001_save", "1")]
    assert "showing 1 of 2 selected cases" in chip.inner_text()
    page.locator("[data-testid=selection-clear]").click()
    assert chip.is_hidden()
    edits = sum(1 for r in recs if r["category"] == "edit")
    assert page.locator("#f-count").inner_text() == f"{edits} of {len(recs)} records"
    assert "sel=" not in page.url and "f_category=edit" in page.url
    assert console.errors == []


# ---- item 12: URL state and keyboard ---------------------------------------------------------
def test_url_round_trip_and_keyboard(synthetic: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    recs = synthetic["records"]
    page.goto(synthetic["path"].as_uri())
    page.select_option("#f-category", "lookup")
    page.select_option("#f-outcome", "fail")
    page.locator("[data-testid=sort-ms]").click()
    page.locator("[data-testid=sort-ms]").click()  # again: descending
    assert page.locator("th[data-col=ms]").get_attribute("aria-sort") == "descending"
    assert page.locator("th[data-col=case]").get_attribute("aria-sort") == "none"
    page.fill("#f-search", "case-000")
    page.wait_for_function("location.hash.includes('f_search=')")
    want = [
        r
        for r in recs
        if r["category"] == "lookup"
        and r["status"] == "completed"
        and "case-000" in r["key"]
        and any(not v["passed"] for v in r["verdicts"].values())
    ]
    want.sort(key=lambda r: -r["duration_ms"])
    assert len(want) >= 4
    assert page.locator("#f-count").inner_text() == f"{len(want)} of {len(recs)} records"
    assert [k for _, k, _ in _row_ids(page)] == [r["key"] for r in want]
    # Keyboard: focus the first row, Enter opens it, ArrowDown moves, Space opens the second.
    page.locator("[data-testid=case-row]").first.focus()
    page.keyboard.press("Enter")
    page.locator("[data-testid=case-panel]").first.wait_for()
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("[document.activeElement.dataset.key, document.activeElement.dataset.trial]")
    assert focused == [want[1]["key"], str(want[1]["trial"])]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.keyboard.press(" ")
    page.wait_for_function("document.querySelectorAll('[data-testid=case-panel]').length === 2")
    page.keyboard.press("Enter")  # closes the second again
    page.wait_for_function("document.querySelectorAll('[data-testid=case-panel]').length === 1")
    url = page.url
    shown = _row_ids(page)
    with_panel = page.evaluate(
        "() => [...document.querySelectorAll('tr.row[aria-expanded=true]')].map((r) => r.dataset.key)"
    )
    assert with_panel == [want[0]["key"]]
    # The same link in a new page: the same filters, rows, sort and open panel.
    other = page.context.new_page()
    try:
        other.set_viewport_size({"width": WIDTH, "height": HEIGHT})
        errors: list[str] = []
        other.on("pageerror", lambda e: errors.append(str(e)))
        other.goto(url)
        other.locator("[data-testid=case-panel]").first.wait_for()
        assert other.locator("#f-count").inner_text() == page.locator("#f-count").inner_text()
        assert _row_ids(other) == shown
        assert other.input_value("#f-search") == "case-000"
        assert other.input_value("#f-category") == "lookup" and other.input_value("#f-outcome") == "fail"
        assert other.locator("th[data-col=ms]").get_attribute("aria-sort") == "descending"
        assert (
            other.evaluate(
                "() => [...document.querySelectorAll('tr.row[aria-expanded=true]')].map((r) => r.dataset.key)"
            )
            == with_panel
        )
        assert other.locator(f"[data-testid=case-panel][data-key='{want[0]['key']}']").count() == 1
        assert errors == []
    finally:
        other.close()
    assert console.errors == []


def test_arrow_down_past_the_drawn_rows_draws_the_next_step(synthetic: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    recs = synthetic["records"]
    assert len(recs) > 150
    page.goto(synthetic["path"].as_uri())
    assert page.locator("[data-testid=case-row]").count() == 150
    page.locator("[data-testid=case-row]").nth(149).focus()
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("[document.activeElement.dataset.key, document.activeElement.dataset.trial]")
    assert focused == [recs[150]["key"], str(recs[150]["trial"])]
    assert page.locator("[data-testid=case-row]").count() == min(300, len(recs))
    assert console.errors == []


# ---- item 11: unknown-tool badge -------------------------------------------------------------
def test_unknown_tool_badge(synthetic: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    page.goto(synthetic["path"].as_uri())
    panel = _open_row(page, "demo:case-00500")
    badge = panel.locator("[data-testid=round-card] [data-testid=call-badge]").first
    assert badge.inner_text() == "no_such_tool · unknown tool"
    assert "schema-invalid" not in panel.inner_text()
    assert panel.locator("[data-testid=call] [data-testid=call-status]").first.inner_text() == "unknown tool"
    assert panel.locator("[data-testid=call-error]").first.inner_text() == "unknown tool 'no_such_tool'"
    assert console.errors == []


# ---- item 12: sorting ------------------------------------------------------------------------------
def test_sort_by_duration_and_case_id(synthetic: dict[str, Any], browser: Any) -> None:
    page, console = _page(browser)
    recs = synthetic["records"]
    page.goto(synthetic["path"].as_uri())
    natural = [("0", r["key"], str(r["trial"])) for r in recs]
    assert _row_ids(page) == natural[:150]
    page.locator("[data-testid=sort-ms]").click()
    by_ms = sorted(recs, key=lambda r: r["duration_ms"])
    assert _row_ids(page, 150) == [("0", r["key"], str(r["trial"])) for r in by_ms][:150]
    shown = page.evaluate(DURATIONS)
    assert shown == [int(r["duration_ms"] + 0.5) for r in by_ms][: len(shown)]
    page.locator("[data-testid=sort-case]").click()
    assert page.locator("th[data-col=case]").get_attribute("aria-sort") == "ascending"
    assert page.locator("th[data-col=ms]").get_attribute("aria-sort") == "none"
    by_key = sorted(recs, key=lambda r: r["key"])  # stable: trials keep the file's order
    assert _row_ids(page, 150) == [("0", r["key"], str(r["trial"])) for r in by_key][:150]
    page.locator("[data-testid=sort-case]").click()
    by_key_desc = sorted(recs, key=lambda r: r["key"], reverse=True)
    assert _row_ids(page, 150) == [("0", r["key"], str(r["trial"])) for r in by_key_desc][:150]
    assert page.locator("th[data-col=case]").get_attribute("aria-sort") == "descending"
    assert console.errors == []


def test_sorting_thirty_thousand_rows_is_fast(tmp_path: Path, browser: Any) -> None:
    # 3 runs × 1,000 records, each run's rows repeated ten times in the payload: 30,000 table rows
    # (the panel is not opened, so the repeated rows need no records of their own).
    from callbench.harness.runfolder import read_run

    runs = [write_run(tmp_path / f"r{i}", make_records(1000, seed=i), model=f"m{i}") for i in (0, 1, 2)]

    payload = build_payload([read_run(r) for r in runs])
    for run in payload["runs"]:
        run["records"] = run["records"] * 10
    out = tmp_path / "big.html"
    out.write_text(render_html(payload), encoding="utf-8")
    page, console = _page(browser)
    page.goto(out.as_uri())
    assert page.locator("#f-count").inner_text() == "30000 of 30000 records"
    timings = {}
    for col in ("ms", "case", "verdicts", "reasons"):
        timings[col] = page.evaluate(
            "c => { const t = performance.now(); document.querySelector(`[data-testid=sort-${c}]`).click();"
            " return performance.now() - t; }",
            col,
        )
    assert page.locator("[data-testid=case-row]").count() == 150  # still lazy
    page.locator("[data-testid=sort-ms]").click()
    durations = page.evaluate(DURATIONS)
    assert durations == sorted(durations) and len(durations) == 150
    print("sort timings at 30,000 rows (ms):", {k: round(v, 1) for k, v in timings.items()})
    assert max(timings.values()) < 1000, timings
    assert console.errors == []


# ---- live view: new records enter a sorted table in place --------------------------------------
def test_live_records_enter_the_sorted_table_without_duplicates(tmp_path: Path, browser: Any) -> None:
    from callbench.report.live import LiveServer

    recs = make_records(30, seed=3)
    run = write_run(tmp_path / "run", recs[:10], summary=False)
    srv = LiveServer(run, port=0)
    srv.start_background()
    try:
        page, console = _page(browser)
        page.goto(srv.url + "#sort=-ms")
        page.wait_for_function("document.getElementById('f-count').textContent.startsWith('10 of 10')")
        first = sorted(recs[:10], key=lambda r: r["duration_ms"], reverse=True)[0]
        page.locator("[data-testid=case-row]").first.click()
        page.locator(f"[data-testid=case-panel][data-key='{first['key']}']").wait_for()
        with (run / "records.jsonl").open("a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in recs[10:])
        page.wait_for_function(
            "document.getElementById('f-count').textContent.startsWith('30 of 30')", timeout=10_000
        )
        page.wait_for_function(f"{ROWS} === 30")
        want = sorted(recs, key=lambda r: r["duration_ms"], reverse=True)  # stable: ties keep arrival order
        assert [k for _, k, _ in _row_ids(page)] == [r["key"] for r in want]
        page.locator(f"[data-testid=case-panel][data-key='{first['key']}']").wait_for()
        assert page.locator("[data-testid=case-panel]").count() == 1
        assert console.errors == []
    finally:
        srv.close()


def test_state_diff_pairs_records_by_id_and_names_missing_and_extra(tmp_path: Path, browser: Any) -> None:
    rec = make_record(7, rng=random.Random(0), skill=1.0)
    differing = {
        "tabs": {
            "gold": [{"id": "a", "x": 1}, {"id": "b", "x": 2}],
            "actual": [{"id": "c", "x": 0}, {"id": "a", "x": 1}, {"id": "b", "x": 3}],
        },
        "settings": {"gold": {"theme": "dark", "n": 1}, "actual": {"theme": "light", "extra": True}},
        "count": {"gold": 3, "actual": 4},
    }
    rec["verdicts"]["state-match"] = {
        "scorer": "state-match",
        "passed": False,
        "partial": 0.5,
        "reasons": [{"code": "state_mismatch", "message": f"state '{k}' differs"} for k in differing],
        "rationale": "final state differs",
        "details": {"applicable": True, "gold_changes_state": True, "differing": differing},
    }
    out = write_report([write_run(tmp_path / "r", [rec])], tmp_path / "r.html")
    page, console = _page(browser)
    page.goto(out.as_uri())
    page.locator("[data-testid=case-row]").first.click()
    rows = page.locator("[data-testid=state-diff-row]")
    rows.first.wait_for()
    seen = {(r.get_attribute("data-path"), r.get_attribute("data-kind")) for r in rows.all()}
    assert seen == {
        ("tabs[id=b].x", "changed"),
        ("tabs[id=c]", "extra"),
        ("settings.theme", "changed"),
        ("settings.n", "missing"),
        ("settings.extra", "extra"),
        ("count", "changed"),
    }
    leaves = [d for part, v in differing.items() for d in _diff(v["gold"], v["actual"], part, [])]
    assert {(d[0], d[1]) for d in leaves} == seen
    row = page.locator("[data-testid=state-diff-row][data-path='tabs[id=b].x'] td")
    assert [row.nth(2).inner_text(), row.nth(3).inner_text()] == ["2", "3"]
    assert console.errors == []
