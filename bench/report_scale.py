"""Report writing at scale: 3 runs × 10,000 realistic cases, written by ``callbench report``.

Run: python bench/report_scale.py [--cases 10000] [--runs 3] [--source DIR ...] [--repeat 3]
[--summary] [--no-browser] [--reference-src DIR]

The records are real ones replicated under new keys: each ``--source`` run folder (default: the
genomics oracle, noisy:3 and noisy:7 runs, made in a temporary folder with ``callbench run`` when
not given) supplies one run's records, case ``i`` of every run being the source's record
``i mod len(source)`` (so every run holds the same cases, as in a model comparison), written as
callbench writes them (compact JSON lines). Without ``--summary`` the runs have no
``summary.json``, so the report computes every run's statistics (the worst case); with it each
run gets the summary a finished run has.

Each write runs in a fresh process (``write_report``); the bench prints, medians of ``--repeat``
writes beside the targets of issue 26: wall time, CPU time, peak RSS of the writing process, page
size and bytes per record, then the open time in headless Chromium (navigation start to the first
frame with ``#f-count`` filled) and the time to open the first case panel. ``--reference-src``
names another checkout's ``src`` folder (e.g. ``mkdir before && git archive HEAD src | tar -x -C before``)
whose writer is measured on the same runs in the same sitting (the "before" row). The browser is
Debian's chromium through Playwright (``tests/report/browser.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS / "report")]  # the browser helper

MODELS = ("oracle", "noisy:3", "noisy:7")
TARGETS = {"write_s": 10.0, "rss_mb": 300.0, "open_s": 1.0}
"""Issue 26 item 4, at 3 x 10,000 records: written in <= 10 s within 300 MB, opened in < 1 s."""


def source_runs(folder: Path) -> list[Path]:
    """The genomics runs of :data:`MODELS`, made with ``callbench run`` (about 20 s each)."""
    out = []
    for model in MODELS:
        run = folder / model.replace(":", "-")
        cmd = ["callbench", "run", "--model", model, "--suite", "genomics", "--out", str(run)]
        subprocess.run(cmd, check=True, capture_output=True)
        out.append(run)
    return out


def replicate(source: Path, target: Path, cases: int, *, summary: bool = False) -> Path:
    """A run folder of ``cases`` cases: ``source``'s records (first trial) again under new keys,
    one compact JSON line each (as the run's writer writes them); with ``summary``, the
    ``summary.json`` of a finished run (``callbench score`` rebuilds it)."""
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
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    if summary:
        subprocess.run(["callbench", "score", str(target)], check=True, capture_output=True)
    return target


WRITER = """
import json, resource, sys, time
from callbench.report.html import write_report
wall, cpu = time.perf_counter(), time.process_time()
write_report(sys.argv[2:], sys.argv[1])
print(json.dumps({"write_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_once(dirs: list[Path], out: Path, src: Path | None) -> dict[str, float]:
    """One ``write_report`` in a fresh process (its own peak RSS); ``src``: a checkout's ``src``."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-c", WRITER, str(out), *map(str, dirs)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


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


def _cell(value: float | None, target: float | None = None, fmt: str = "{:.2f}") -> str:
    if value is None:
        return "-"
    text = fmt.format(value)
    return text if target is None else f"{text} ({'ok' if value <= target else 'MISS'} <= {target:g})"


def measure(name: str, dirs: list[Path], out: Path, records: int, args: Any, src: Path | None) -> None:
    """Write the report ``--repeat`` times (fresh processes) and print the medians; then open it."""
    runs = [write_once(dirs, out, src) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    size = out.stat().st_size
    b = {} if args.no_browser else browser_figures(out, args.repeat)
    cells = [
        _cell(med["write_s"], TARGETS["write_s"]),
        _cell(med["cpu_s"]),
        _cell(med["rss_mb"], TARGETS["rss_mb"], "{:.0f}"),
        f"{size / 1e6:.1f}",
        f"{size / records:.0f}",
        _cell(b.get("open"), TARGETS["open_s"]),
        _cell(b.get("panel")),
    ]
    print(f"{name:>8}  " + "  ".join(cells), flush=True)
    print(f"{'':>8}  each write: " + ", ".join(f"{r['write_s']:.1f} s / {r['rss_mb']:.0f} MB" for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--source", action="append", type=Path, help="run folder to replicate (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--summary", action="store_true", help="give each run its summary.json")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--reference-src", type=Path, help="another checkout's src: its writer, measured too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cb-report-scale-") as tmp_name:
        tmp = Path(tmp_name)
        sources = args.source or source_runs(tmp / "sources")
        dirs = [
            replicate(sources[i % len(sources)], tmp / f"run{i}", args.cases, summary=args.summary)
            for i in range(args.runs)
        ]
        records = args.cases * args.runs
        load = os.getloadavg()[0]
        print(f"{args.runs} runs × {args.cases} cases ({records} records) from {[s.name for s in sources]}")
        print(
            f"summary.json: {'yes' if args.summary else 'no (statistics computed)'}; load {load:.1f}; "
            f"medians of {args.repeat}; {time.strftime('%Y-%m-%d')}"
        )
        print(f"{'writer':>8}  write s (target)  cpu s  peak RSS MB (target)  MB  B/record  open s  panel s")
        if args.reference_src is not None:
            measure("before", dirs, tmp / "before.html", records, args, args.reference_src.resolve())
        measure("now", dirs, tmp / "report.html", records, args, None)


if __name__ == "__main__":
    main()
