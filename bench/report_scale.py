"""Report size and open time at scale: 3 runs × 10,000 realistic cases, packed vs the old payload.

Run: python bench/report_scale.py [--cases 10000] [--runs 3] [--source DIR ...] [--repeat 3]
[--no-browser] [--no-before]

The records are real ones replicated under new keys: each ``--source`` run folder (default: the
genomics oracle, noisy:3 and noisy:7 runs, made in a temporary folder with ``callbench run`` when
not given) supplies one run's records, case ``i`` of every run being the source's record
``i mod len(source)`` (so every run holds the same cases, as in a model comparison). Prints, for the
report as written today (``packed``) and the old all-inline payload (``before``: every full record
in the page as JSON, :func:`old_payload`): file size, bytes per record, time to write, the open time
in headless Chromium (navigation start to the first frame with ``#f-count`` filled; median of
``--repeat``) and the time to open the first case panel. The browser is Debian's chromium through
Playwright (``tests/report/browser.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS / "report")]  # the browser helper

from callbench.harness.runfolder import RunFolder, bulk_load, read_run  # noqa: E402
from callbench.report.breakdowns import breakdowns_payload  # noqa: E402
from callbench.report.html import render_html, write_report  # noqa: E402
from callbench.report.overview import overview_payload  # noqa: E402
from callbench.report.payload import (  # noqa: E402
    _shorten,
    header_payload,
    record_payload,
    record_row,
    run_statistics,
    statistics_payload,
)

MODELS = ("oracle", "noisy:3", "noisy:7")


def source_runs(folder: Path) -> list[Path]:
    """The genomics runs of :data:`MODELS`, made with ``callbench run`` (about 20 s each)."""
    out = []
    for model in MODELS:
        run = folder / model.replace(":", "-")
        cmd = ["callbench", "run", "--model", model, "--suite", "genomics", "--out", str(run)]
        subprocess.run(cmd, check=True, capture_output=True)
        out.append(run)
    return out


def replicate(source: Path, target: Path, cases: int) -> Path:
    """A run folder of ``cases`` cases: ``source``'s records (first trial) again under new keys."""
    lines = [json.loads(x) for x in (source / "records.jsonl").read_text(encoding="utf-8").splitlines() if x]
    base = [r for r in lines if r.get("trial", 1) == 1]
    target.mkdir(parents=True)
    header = json.loads((source / "run.json").read_text(encoding="utf-8"))
    header["run_id"] = target.name
    (target / "run.json").write_text(json.dumps(header), encoding="utf-8")
    with (target / "records.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(cases):
            rec = dict(base[i % len(base)])
            copy = i // len(base)
            rec["case_id"] = f"{rec['case_id']}~{copy}"
            rec["key"] = f"{rec['suite']}:{rec['case_id']}"
            fh.write(json.dumps(rec) + "\n")
    return target


def old_payload(runs: Sequence[RunFolder]) -> dict[str, Any]:
    """The page data as it was before packing: plain rows and every full record inline as JSON."""
    stats = [run_statistics(r) for r in runs]
    with bulk_load():
        records = [[record_payload(r) for r in run.records] for run in runs]
    return {
        "generated_at": "before",
        "live": False,
        "runs": [
            {
                "id": f"run{i}",
                "label": run.label,
                "header": _shorten(header_payload(run)),
                "statistics": statistics_payload(st),
                "records": [record_row(r) for r in run.records],
                "details": details,
                "offset": run.offset,
            }
            for i, (run, st, details) in enumerate(zip(runs, stats, records, strict=True))
        ],
        **overview_payload(runs, stats),
        "breakdowns": breakdowns_payload(runs),
    }


def write_old(run_dirs: Sequence[Path], out: Path) -> Path:
    runs = [read_run(d) for d in run_dirs]
    out.write_text(render_html(old_payload(runs), "callbench report (before)"), encoding="utf-8")
    return out


OPENED = """() => {
  const n = document.getElementById('f-count');
  const rows = document.querySelector('[data-testid=case-row]');
  return n && n.textContent.length > 0 && rows ? performance.now() : false;
}"""


def browser_figures(html: Path, repeat: int) -> dict[str, float]:
    """Median open time (ms since navigation start) and first-panel time (s) over ``repeat`` loads."""
    from browser import browser_page

    opens, panels = [], []
    with browser_page(1440, 900) as (page, console):
        for _ in range(repeat):
            page.goto(html.as_uri(), wait_until="commit")
            opens.append(page.wait_for_function(OPENED, polling="raf", timeout=120_000).json_value() / 1000)
            start = time.perf_counter()
            page.locator("[data-testid=case-row]").first.click()
            page.wait_for_selector("[data-testid=round-card]", timeout=60_000)
            panels.append(time.perf_counter() - start)
        if console.errors:
            print(f"  console errors in {html.name}: {console.errors[:3]}")
    return {"open": statistics.median(opens), "panel": statistics.median(panels)}


def measure(name: str, write: Any, out: Path, records: int, repeat: int, browser: bool) -> None:
    start = time.perf_counter()
    write()
    seconds = time.perf_counter() - start
    size = out.stat().st_size
    b = browser_figures(out, repeat) if browser else {}
    cells = " ".join(f"{b[k]:>8.2f}" if k in b else f"{'-':>8}" for k in ("open", "panel"))
    print(f"{name:>8} {size / 1e6:>8.1f} {size / records:>9.0f} {seconds:>8.1f} {cells}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--source", action="append", type=Path, help="run folder to replicate (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-before", action="store_true", help="skip the old payload")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cb-report-scale-") as tmp_name:
        tmp = Path(tmp_name)
        sources = args.source or source_runs(tmp / "sources")
        dirs = [replicate(sources[i % len(sources)], tmp / f"run{i}", args.cases) for i in range(args.runs)]
        records = args.cases * args.runs
        print(f"{args.runs} runs × {args.cases} cases ({records} records) from {[s.name for s in sources]}")
        print(f"{'payload':>8} {'MB':>8} {'B/record':>9} {'write s':>8} {'open s':>8} {'panel s':>8}")
        out = tmp / "report.html"
        browser = not args.no_browser
        measure("packed", lambda: write_report(dirs, out), out, records, args.repeat, browser)
        if not args.no_before:
            old = tmp / "before.html"
            measure("before", lambda: write_old(dirs, old), old, records, args.repeat, browser)


if __name__ == "__main__":
    main()
