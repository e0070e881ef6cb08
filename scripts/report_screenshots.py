"""Screenshots of the report for the docs: the first screen of a three-run genomics report, a failing
case opened (tool results and state diff), and the paired-comparison view.

    python scripts/report_screenshots.py [--out docs/img]

Runs the built-in agents (oracle, noisy:3, baseline) on the genomics pack, writes the report and
photographs it in headless Chromium at 1440x900 (the system browser, as the report tests use).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "report"))

MODELS = ("oracle", "noisy:3", "baseline")


def make_runs(root: Path) -> list[Path]:
    """One genomics run per built-in agent."""
    runs = []
    for model in MODELS:
        out = root / model.replace(":", "-")
        cmd = [
            "callbench",
            "run",
            "--model",
            model,
            "--suite",
            "genomics",
            "-o",
            str(out),
            "--progress",
            "quiet",
        ]
        subprocess.run(cmd, check=True, capture_output=True)
        runs.append(out)
    return runs


def shoot(report: Path, out: Path) -> None:
    """The three screenshots, each at 1440x900."""
    from browser import browser_page

    with browser_page(1440, 900) as (page, console):
        page.goto(report.as_uri())
        page.wait_for_selector("[data-testid=grid]")
        page.screenshot(path=str(out / "report-first-screen.png"))
        page.locator("[data-testid=comparison]").first.scroll_into_view_if_needed()
        page.screenshot(path=str(out / "report-comparison.png"))
        open_failing_case_with_results(page, report)
        page.locator("[data-testid=call-list]").first.scroll_into_view_if_needed()
        page.screenshot(path=str(out / "report-failing-case.png"))
        page.locator("[data-testid=state-diff]").first.scroll_into_view_if_needed()
        page.screenshot(path=str(out / "report-state-diff.png"))
        if console.errors:
            raise SystemExit(f"console errors: {console.errors}")


def open_failing_case_with_results(page: Any, report: Path) -> None:
    """Open, in the noisy run, the first state-match failure whose panel shows call results."""
    page.goto(report.as_uri() + "#")
    page.select_option("#f-run", "1")
    page.select_option("#f-tier", "state-match")
    page.select_option("#f-outcome", "fail")
    rows = page.locator("[data-testid=case-row]")
    for i in range(min(rows.count(), 60)):
        rows.nth(i).click()
        panel = page.locator("[data-testid=case-panel]").first
        panel.wait_for()
        if (
            panel.locator("[data-testid=call-result]").count()
            and panel.locator("[data-testid=state-diff]").count()
        ):
            return
        rows.nth(i).click()  # close it and try the next
    raise SystemExit("no failing case with call results and a state diff in the noisy run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cb-shots-") as tmp:
        runs = make_runs(Path(tmp))
        report = Path(tmp) / "report.html"
        subprocess.run(["callbench", "report", *map(str, runs), "-o", str(report)], check=True)
        shoot(report, args.out)
    print(f"screenshots in {args.out}")


if __name__ == "__main__":
    main()
