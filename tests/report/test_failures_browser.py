"""The report's "Failures by tool" table in Chromium: the constructed run's lines, and a count that
shows exactly the records behind its line in the case table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fingerprint_run import EXPECTED, RTE, SERVER, write_fingerprint_run

from callbench.report.html import write_report

MISSING_FILE = "expected call did not execute successfully: ToolError: no such file <path> (request <id>)"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("failures-page")
    return write_report([write_fingerprint_run(root / "run")], root / "report.html")


def shown_keys(page: Any) -> list[str]:
    rows = page.locator("[data-testid=case-row]")
    out = []
    for i in range(rows.count()):
        key, trial = rows.nth(i).get_attribute("data-key"), rows.nth(i).get_attribute("data-trial")
        out.append(key if trial == "1" else f"{key}#{trial}")
    return sorted(out)


def test_a_failure_line_selects_exactly_its_records(report: Path, browser: Any) -> None:
    page, console = browser
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(report.as_uri())
    page.wait_for_selector("[data-testid=failures]")
    page.select_option("#fp-tier", label=f"{RTE} · oracle-assisted")
    table = page.locator("[data-testid=fp-table]")
    assert table.locator("tbody tr").count() == len(EXPECTED[RTE])
    line = table.locator(f"tr[data-signature='{MISSING_FILE}']")
    assert (
        line.locator("td").nth(1).inner_text() == "read_file"
        and line.locator("td").nth(2).inner_text() == SERVER
    )
    line.locator("button").click()
    want = EXPECTED[RTE][("tool error", "read_file", SERVER, MISSING_FILE)]
    assert shown_keys(page) == sorted(want)
    assert page.locator("[data-testid=selection-count]").get_attribute("data-selected") == str(len(want))

    # The error records' table sits beside the tier's; its lines select error records.
    errors = page.locator("[data-testid=fp-errors-table] tbody tr")
    assert errors.count() == len(EXPECTED["error records"])
    errors.first.locator("button").click()
    assert shown_keys(page) == ["demo:case-00012", "demo:case-00013"]
    # Exported like the page's other tables.
    assert page.locator("button[data-export-for^='failures-']").count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440  # wide tables scroll in their box
    assert console.errors == []
