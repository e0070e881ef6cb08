"""Item 8 of the report issue on real runs: a `genomics` run and a `genomics-simple` run hold the same
simple cases under different keys (`genomics:simple/x` vs `genomics-simple:x`); the report pairs them
by content, and its disagreeing-case buttons select each case under its own key in both runs.

The `genomics` run is the oracle's, shared with the other browser modules (``shared_runs``: built once
per test run); the `genomics-simple` run is noisy:3's, so the two disagree on some cases."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from shared_runs import shared_run

from callbench.report.html import write_report

TIER = "native-function-contract"


def _start(root: Path, model: str, suite: str) -> tuple[Path, subprocess.Popen[str]]:
    out = root / f"{model.replace(':', '-')}-{suite}"
    cmd = ["callbench", "run", "--model", model, "--suite", suite, "-o", str(out), "--progress", "quiet"]
    return out, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _passes(run: Path) -> dict[str, bool]:
    records = map(json.loads, (run / "records.jsonl").read_text().splitlines())
    return {r["case_id"].removeprefix("simple/"): r["verdicts"][TIER]["passed"] for r in records}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("aliases")
    simple, running = _start(root, "noisy:3", "genomics-simple")  # runs while the shared run is got
    whole = shared_run(tmp_path_factory, "--model", "oracle", "--suite", "genomics")
    out, _ = running.communicate(timeout=300)
    assert running.returncode == 0, out
    return write_report([whole, simple], root / "report.html"), _passes(whole), _passes(simple)


def test_genomics_and_genomics_simple_runs_pair_by_content(report, browser):
    path, whole, simple = report
    shared = set(whole) & set(simple)  # the simple cases, under both keys
    assert len(shared) == len(simple) > 100
    differ = sorted(cid for cid in shared if whole[cid] != simple[cid])
    assert differ, "noisy:3 against the oracle must disagree somewhere"
    assert any(not simple[cid] for cid in differ) and all(whole.values())  # the oracle's run is A
    page, console = browser
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(path.as_uri())
    row = page.locator(f"[data-testid=comparison][data-tier='{TIER}']").first
    assert row.locator("td").nth(4).inner_text() == str(len(shared))  # shared cases: every simple case
    assert page.locator("[data-testid=comparison-note]").count() == 0  # nothing unpaired to explain
    shown = row.locator("[data-testid=disagree]")
    first = shown.first
    cid = differ[0]
    assert first.get_attribute("data-key") == f"genomics:simple/{cid}"
    assert first.get_attribute("data-b-key") == f"genomics-simple:{cid}"
    assert first.get_attribute("data-winner") == ("a" if whole[cid] else "b")
    first.click()
    keys = page.locator("[data-testid=case-row]").evaluate_all("rows => rows.map((r) => r.dataset.key)")
    assert sorted(keys) == sorted([f"genomics:simple/{cid}", f"genomics-simple:{cid}"])
    assert console.errors == []
