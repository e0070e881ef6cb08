"""A round's reasoning and its text as received (issue 25, items 2 and 6) are in the report's case
panel, collapsed: a reasoning model's rounds and a server that left its calls in the text."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from doctor_server import REASONING, DoctorServer

import callbench
from callbench.report.html import write_report


def _report(tmp_path: Path, *faults: str) -> Path:
    out = tmp_path / ("run-" + "-".join(faults or ("healthy",)))
    with DoctorServer(*faults) as server, ThreadPoolExecutor(1) as pool:
        # In a thread: Playwright's sync API keeps an event loop running in this one.
        pool.submit(
            callbench.run, "starter", server.model(), out_dir=out, case_ids=["weather_paris"], cache=False
        ).result()
    return write_report([out], tmp_path / f"{out.name}.html")


def _open_case(page: Any, report: Path) -> Any:
    page.goto(report.as_uri())
    page.locator("[data-testid=case-row]").first.click()
    return page.locator("[data-testid=round-card]").first


def test_reasoning_is_shown_per_round_collapsed(tmp_path: Path, browser: Any) -> None:
    page, console = browser
    card = _open_case(page, _report(tmp_path))
    reasoning = card.locator("[data-testid=round-reasoning]")
    assert reasoning.get_attribute("open") is None  # collapsed
    assert reasoning.locator("summary").inner_text() == f"reasoning ({len(REASONING)} chars)"
    assert reasoning.locator("pre").text_content() == REASONING
    assert card.locator("[data-testid=round-raw-text]").count() == 0  # native call: nothing to show
    assert not console.errors


def test_a_call_left_in_the_text_shows_the_text_as_received(tmp_path: Path, browser: Any) -> None:
    page, console = browser
    card = _open_case(page, _report(tmp_path, "raw_text_calls"))
    raw = card.locator("[data-testid=round-raw-text]")
    assert raw.get_attribute("open") is None
    assert "call the server did not parse" in raw.locator("summary").inner_text()
    assert "<tool_call>" in (raw.locator("pre").text_content() or "")
    assert not console.errors
