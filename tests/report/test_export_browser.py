"""Export from the page: CSV of every table and SVG of every chart, downloaded in Chromium.

The browser here enforces the page's Content-Security-Policy (no ``bypass_csp``): the downloads are
Blob URLs clicked from the page opened from disk, as a user would.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from browser import Console
from synth import make_records, write_run

from callbench.report.html import write_report

PAYLOAD = "=cmd|' /C calc'!A0"
FORMULA_START = ("=", "+", "-", "@")


@pytest.fixture(scope="module")
def csp_browser():
    """A headless Chromium that enforces the page's CSP and accepts downloads."""
    from browser import browser_context

    with browser_context(1440, 900, enforce_csp=True) as ctx:
        yield ctx


@pytest.fixture
def page(csp_browser):
    page = csp_browser.new_page()
    console = Console()
    console.attach(page)
    page.console = console
    yield page
    page.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Two runs; run b's suite name carries a spreadsheet-formula payload into every key."""
    root = tmp_path_factory.mktemp("export")
    a = write_run(root / "a", make_records(300, seed=2, skill=0.3), model="m-a")
    b = write_run(root / "b", make_records(300, seed=7, skill=0.5, suite=PAYLOAD), model="m-b")
    out = write_report([a, b], root / "report.html")
    return out, [a, b]


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]


def _download(page, selector: str) -> tuple[str, str]:
    with page.expect_download() as info:
        page.locator(selector).click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes().decode("utf-8")


def _parse_csv(text: str) -> list[list[str]]:
    assert text.endswith("\r\n")  # RFC 4180 line ends
    return list(csv.reader(io.StringIO(text, newline="")))


def _guarded(text: str) -> str:
    """What the export must write for a cell: a leading ' on a formula-looking text."""
    try:
        float(text.rstrip("%"))
        return text
    except ValueError:
        return "'" + text if text.startswith(FORMULA_START) else text


def _dom_table(page, selector: str) -> list[list[str]]:
    return page.eval_on_selector(
        selector,
        # A cell spanning n columns is its text then n - 1 empty cells, so the columns line up.
        """t => Array.from(t.rows).filter(r => !r.classList.contains('detail')).map(r =>
            Array.from(r.cells).flatMap(c => {
              let s = c.textContent;
              for (const d of c.querySelectorAll('.arrow,[aria-hidden=true]'))
                s = s.replace(d.textContent, '');
              return [s.replace(/\\s+/g, ' ').trim(), ...Array(c.colSpan - 1).fill('')];
            }))""",
    )


def test_case_table_csv_has_every_filtered_row_and_is_formula_safe(page, report):
    out, runs = report
    page.goto(out.as_uri())
    page.locator("[data-testid=case-row]").first.wait_for()
    page.select_option("#f-outcome", "fail")
    # Failing records, computed here from records.jsonl: completed and some tier not passed.
    expected = [
        (run_index, r["key"])
        for run_index, run in enumerate(runs)
        for r in _records(run)
        if r["status"] != "error" and any(not v["passed"] for v in r["verdicts"].values())
    ]
    page.locator("#f-count").filter(has_text=f"{len(expected)} of 600").wait_for()
    rendered = page.locator("#rows tr.row").count()
    assert 0 < rendered < len(expected)  # the table is lazy: fewer rows drawn than filtered

    buttons = page.locator("button.export-btn[data-export-for=cases]")
    assert buttons.count() == 1
    name, text = _download(page, "button.export-btn[data-export-for=cases]")
    assert name == "cases.csv"
    rows = _parse_csv(text)
    head = [c.strip() for c in _dom_table(page, "table.cases")[0]]
    assert rows[0] == head and rows[0][:2] == ["Run", "Case"]
    body = rows[1:]
    assert len(body) == len(expected) > rendered
    assert sorted(row[1] for row in body) == sorted(_guarded(key) for _run, key in expected)
    # The payload key is neutralised, never written as a formula.
    payload_cells = [row[1] for row in body if PAYLOAD in row[1]]
    assert payload_cells and all(c.startswith("'=cmd|") for c in payload_cells)
    assert not any(cell.startswith(("=", "@")) for row in body for cell in row)
    # Rows drawn in the DOM and the CSV agree cell for cell (the verdict pills aside: the CSV
    # separates them with "; ").
    dom = _dom_table(page, "#rows")
    by_key = {(row[0], row[1], row[2]): row for row in body}
    for cells in dom[:50]:
        got = by_key[(_guarded(cells[0]), _guarded(cells[1]), cells[2])]
        assert [got[i] for i in (2, 3, 5, 6, 7)] == [cells[i] for i in (2, 3, 5, 6, 7)]
        assert got[4].replace("; ", "") == cells[4]
    assert page.console.errors == []


def test_every_marked_table_exports_its_cells(page, report):
    out, runs = report
    page.goto(out.as_uri())
    page.locator("[data-testid=case-row]").first.wait_for()
    tables = page.locator("table[data-export]")
    # Tables in a hidden section (repeated trials of a one-trial run) have a button nobody sees.
    shown = [tables.nth(i) for i in range(tables.count()) if tables.nth(i).is_visible()]
    names = [t.get_attribute("data-export") for t in shown]
    assert "cases" in names and len(names) >= 3, names
    for name in names:
        if name == "cases":
            continue
        selector = f"table[data-export='{name}']"
        file_name, text = _download(page, f"button.export-btn[data-export-for='{name}']")
        assert file_name.endswith(".csv")
        dom = [[_guarded(c) for c in row] for row in _dom_table(page, selector)]
        assert _parse_csv(text) == dom, name
    assert page.console.errors == []


def test_overview_csv_holds_the_summary_figures(page, report):
    out, runs = report
    page.goto(out.as_uri())
    page.locator("table[data-export]").first.wait_for()
    overview = page.locator("#slot-overview table[data-export]").first
    name = overview.get_attribute("data-export")
    _file, text = _download(page, f"button.export-btn[data-export-for='{name}']")
    cells = {c for row in _parse_csv(text) for c in row}
    joined = "\n".join(",".join(row) for row in _parse_csv(text))
    # Strict accuracy of every (run, tier) from summary.json, as the page rounds it (one decimal).
    for run in runs:
        strata = json.loads((run / "summary.json").read_text())["statistics"]["strata"]
        for s in strata:
            figure = f"{100 * s['accuracy']['estimate']:.1f}"
            assert figure in joined, (run.name, s["tier"], figure, cells)
    assert page.console.errors == []


def test_svg_export_is_standalone_xml(page, report):
    out, _runs = report
    page.goto(out.as_uri())
    page.locator("svg[data-export]").first.wait_for()
    charts = page.locator("svg[data-export]")
    count = charts.count()
    assert count >= 1
    assert page.locator("button.export-btn[data-testid=export-svg]").count() == count
    name = charts.first.get_attribute("data-export")
    file_name, text = _download(page, f"button.export-btn[data-export-for='{name}']")
    assert file_name == f"{''.join(c if c.isalnum() or c in '._-' else '_' for c in name)}.svg"
    root = ET.fromstring(text.split("\n", 1)[1] if text.startswith("<?xml") else text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert float(root.get("width")) > 0 and float(root.get("height")) > 0
    styled = [e for e in root.iter() if "fill:" in (e.get("style") or "")]
    assert len(styled) == len(list(root.iter()))  # every element carries its computed style
    texts = [e.text for e in root.iter("{http://www.w3.org/2000/svg}text") if e.text]
    dom_texts = page.eval_on_selector(
        "svg[data-export]",
        "s => Array.from(s.querySelectorAll('text')).map(t => t.textContent).filter(Boolean)",
    )
    assert texts == dom_texts
    assert page.console.errors == []
