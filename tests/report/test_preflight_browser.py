"""The report's preflight panel (issue 25, item 5): a run made with ``--preflight`` shows doctor's table
under its run line, opened when a check failed, every cell as text."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from doctor_server import DoctorServer

import callbench
from callbench.harness.doctor import CHECKS
from callbench.report.html import write_report


def _report(tmp_path: Path, *faults: str, preflight: bool = True) -> Path:
    out = tmp_path / ("run-" + "-".join(faults or ("healthy",)) + ("" if preflight else "-plain"))
    with DoctorServer(*faults) as server, ThreadPoolExecutor(1) as pool:
        # In a thread: Playwright's sync API keeps an event loop running in this one.
        pool.submit(
            callbench.run,
            "starter",
            server.model(),
            out_dir=out,
            case_ids=["weather_paris"],
            cache=False,
            preflight=preflight,
        ).result()
    return write_report([out], tmp_path / f"{out.name}.html")


def test_a_failed_preflight_is_shown_open_with_the_failed_check(tmp_path: Path, browser: Any) -> None:
    page, console = browser
    page.goto(_report(tmp_path, "special_tokens").as_uri())
    panel = page.locator("[data-testid=preflight]")
    panel.wait_for()
    assert panel.get_attribute("open") is not None  # a failure is not hidden behind a click
    assert "1 failed (no leaked tokens)" in panel.locator("summary").inner_text()
    rows = panel.locator("[data-testid=preflight-check]")
    assert rows.count() == len(CHECKS)
    failed = panel.locator("[data-testid=preflight-check][data-status=failed]")
    assert failed.get_attribute("data-check") == "no_leaked_tokens"
    assert "<|im_end|>" in failed.inner_text()  # the leaked token, as text (not markup)
    assert not console.errors


def test_a_clean_preflight_is_collapsed_and_a_run_without_one_has_no_panel(
    tmp_path: Path, browser: Any
) -> None:
    page, console = browser
    page.goto(_report(tmp_path).as_uri())
    panel = page.locator("[data-testid=preflight]")
    panel.wait_for(state="attached")
    assert panel.get_attribute("open") is None and "0 failed" in panel.locator("summary").inner_text()
    page.goto(_report(tmp_path, preflight=False).as_uri())
    page.locator("[data-testid=run-info]").wait_for()
    assert page.locator("[data-testid=preflight]").count() == 0
    assert not console.errors
