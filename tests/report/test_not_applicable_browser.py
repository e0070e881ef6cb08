"""A verdict that judged nothing (a manual case's) reads "n/a" in the report, never "fail", and the
pass/fail filters leave it out."""

from __future__ import annotations

import subprocess

from callbench.report.html import write_report


def test_manual_cases_show_n_a_and_are_neither_pass_nor_fail(tmp_path, browser):
    run = tmp_path / "manual"
    cmd = [
        "callbench",
        "run",
        "--model",
        "refuse",
        "--suite",
        "genomics-manual",
        "--limit",
        "3",
        "-o",
        str(run),
    ]
    done = subprocess.run([*cmd, "--progress", "quiet"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page, console = browser
    page.goto(write_report([run], tmp_path / "r.html").as_uri())
    rows = page.locator("[data-testid=case-row]")
    assert rows.count() == 3
    pills = rows.locator(".pill").all_inner_texts()
    assert pills and all(p.endswith(": n/a") for p in pills)
    for outcome in ("fail", "pass"):
        page.select_option("#f-outcome", outcome)
        assert page.locator("#f-count").inner_text().startswith("0 of 3")
    page.select_option("#f-outcome", "")
    rows.first.click()
    panel = page.locator("[data-testid=case-panel]").first
    panel.wait_for()  # drawn once its record is inflated (asynchronously): all_inner_texts does not wait
    verdicts = panel.locator(".pill.na").all_inner_texts()
    assert verdicts and all(v.endswith(": n/a") for v in verdicts)
    assert console.errors == []
