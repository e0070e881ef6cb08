"""Report scale benchmark: typed read, statistics, HTML and browser open/filter at 1k and 10k cases.

Run: python bench/report_scale.py [--sizes 1000,10000] [--repeat 3] [--no-browser]
Prints medians (seconds) per size: ``read`` is the typed run-folder reader (``read_run``), ``stats``
the statistics of the records, ``html`` the whole ``write_report``; the browser part needs Debian
chromium and playwright.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS / "helpers"), str(TESTS / "report")]  # synth records; the browser helper

from synth import make_records, write_run  # noqa: E402 (found through the path above)

from callbench.harness.runfolder import read_run  # noqa: E402
from callbench.report.html import compute_statistics, write_report  # noqa: E402


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def browser_figures(html: Path, repeat: int) -> dict[str, float]:
    from browser import browser_page

    opens, filters, searches, expands = [], [], [], []
    with browser_page() as (page, _console):
        for _ in range(repeat):
            start = time.perf_counter()
            page.goto(html.as_uri())
            page.wait_for_selector("[data-testid=case-row]")
            opens.append(time.perf_counter() - start)
            start = time.perf_counter()
            page.select_option("#f-outcome", "fail")
            filters.append(time.perf_counter() - start)
            start = time.perf_counter()
            page.select_option("#f-outcome", "")
            page.fill("#f-search", "case-00077")
            page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length === 1")
            searches.append(time.perf_counter() - start)
            start = time.perf_counter()
            page.locator("[data-testid=case-row]").first.click()
            page.wait_for_selector("[data-testid=round-card]")
            expands.append(time.perf_counter() - start)
    med = statistics.median
    return {"open": med(opens), "filter": med(filters), "search": med(searches), "expand": med(expands)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    print(
        f"{'cases':>7} {'read s':>7} {'stats s':>8} {'html s':>7} {'MB':>6} {'open s':>7} {'filter s':>8} "
        f"{'search s':>8} {'expand s':>8}"
    )
    for n in (int(x) for x in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            records = make_records(n, seed=1)
            run = write_run(Path(tmp) / "run", records)
            out = Path(tmp) / "report.html"
            t_read = timed(partial(read_run, run), args.repeat)
            typed = read_run(run).records
            t_stats = timed(partial(compute_statistics, typed), args.repeat)
            t_html = timed(partial(write_report, [run], out), args.repeat)
            size = out.stat().st_size / 1e6
            b = {} if args.no_browser else browser_figures(out, args.repeat)
            cells = " ".join(
                f"{b[k]:>8.3f}" if k in b else f"{'-':>8}" for k in ("open", "filter", "search", "expand")
            )
            print(f"{n:>7} {t_read:>7.3f} {t_stats:>8.3f} {t_html:>7.3f} {size:>6.1f} {cells}")


if __name__ == "__main__":
    main()
