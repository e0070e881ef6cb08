"""The overview in Chromium at 1440×900: grid = summary.json, tie-aware leaderboard, neutral
colour when not significant, cost and speed, config warning, exact selection, trial notes.
Expected values are computed here from the run folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synth import make_records, write_run

from callbench.report.html import write_report

NFC, RTE, DIAG = "native-function-contract", "real-tool-execution", "state-match"
TIERS = (NFC, RTE, DIAG)


def _header(run_dir: Path, **fields: Any) -> None:
    header = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps(header | fields))


def _rename(records: list[dict[str, Any]], index: int, case_id: str) -> None:
    for rec in records:
        if rec["case_id"] == f"case-{index:05d}":
            rec["case_id"], rec["key"] = case_id, f"demo:{case_id}"


def _force(records: list[dict[str, Any]], case_id: str, passed: bool) -> None:
    for rec in records:
        if rec["case_id"] == case_id:
            for v in rec["verdicts"].values():
                v["passed"] = passed


def _runs(root: Path) -> list[Path]:
    good = make_records(120, skill=0.97, seed=3, tiers=TIERS)
    noisy = make_records(120, skill=0.45, seed=6, tiers=TIERS)
    base = make_records(120, skill=0.45, seed=106, tiers=TIERS)
    parity = make_records(40, skill=0.6, seed=9, tiers=TIERS, harness_mode="production-parity")
    for recs in (good, noisy, base, parity):
        _rename(recs, 10, "a-edit")  # "demo:a-edit" is a prefix of "demo:a-edit_save"
        _rename(recs, 11, "a-edit_save")
    for cid in ("a-edit", "a-edit_save"):
        _force(good, cid, True)
        _force(noisy, cid, False)
    for i, rec in enumerate(good):
        for j, rnd in enumerate(rec["trace"]["rounds"]):
            rnd["usage"] = {
                "input_tokens": 200 + i,
                "output_tokens": 20 + j,
                "reasoning_tokens": 0,
                "cached_tokens": 0,
            }
            rnd["latency_ms"] = 40.0 + 3 * i + j
    dirs = []
    for name, recs in (("good", good), ("noisy", noisy), ("base", base), ("parity", parity)):
        run_dir = write_run(root / name, recs, model=f"m-{name}")
        _header(run_dir, diagnostic_scorers=[DIAG], **({"retrieval_k": 5} if name == "good" else {}))
        dirs.append(run_dir)
    return dirs


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("overview")
    dirs = _runs(root)
    return write_report(dirs, root / "report.html"), dirs


def _open(page: Any, path: Path) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=grid]")


def test_grid_equals_summary_json_with_diagnostics_apart(report, browser):
    out, dirs = report
    page, console = browser
    _open(page, out)
    assert page.locator("[data-testid=grid-row]").count() == 4  # one row per run (and mode)
    order = page.eval_on_selector_all("table.grid th.tier", "ths => ths.map((t) => t.dataset.tier)")
    assert order == [NFC, RTE, DIAG]  # strict tiers first, diagnostic last
    assert page.locator("[data-testid=diagnostic-group]").inner_text() == "diagnostic — not a pass criterion"
    for i, run_dir in enumerate(dirs):
        strata = json.loads((run_dir / "summary.json").read_text())["statistics"]["strata"]
        for s in strata:
            cell = page.locator(
                f"[data-testid=card][data-run=run{i}][data-tier='{s['tier']}'][data-mode='{s['harness_mode']}']"
            )
            a = s["accuracy"]
            assert float(cell.get_attribute("data-value")) == pytest.approx(a["estimate"])
            assert float(cell.get_attribute("data-low")) == pytest.approx(a["low"])
            assert float(cell.get_attribute("data-high")) == pytest.approx(a["high"])
            assert cell.locator(".acc").inner_text() == f"{100 * a['estimate']:.1f}%"
            assert f"{100 * a['high']:.1f}%" in cell.locator(".ci").inner_text()
            assert cell.locator(".n").inner_text() == str(s["n"])
            assert cell.get_attribute("data-diagnostic") == ("true" if s["tier"] == DIAG else "false")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    page.screenshot(path=str(out.parent / "overview-first-screen.png"))
    assert console.errors == []


def test_leaderboard_ties_and_neutral_comparison_colour(report, browser):
    out, _dirs = report
    page, console = browser
    _open(page, out)
    ranks = {
        row.get_attribute("data-run"): row.locator(".rank").inner_text()
        for row in page.locator(f"[data-testid=leader][data-tier='{NFC}'][data-mode=oracle-assisted]").all()
    }
    assert ranks == {"run0": "1", "run1": "=2", "run2": "=2"}
    assert "significantly better" in page.locator("#rank-rule").inner_text()
    tie = page.locator(f"[data-testid=comparison][data-a='1'][data-b='2'][data-tier='{NFC}']")
    diff = tie.locator("[data-testid=diff]")
    assert "not significant" in diff.inner_text() and diff.get_attribute("class").split()[-1] == "neutral"
    win = page.locator(
        f"[data-testid=comparison][data-a='0'][data-b='1'][data-tier='{NFC}'] [data-testid=diff]"
    )
    assert "good" in win.get_attribute("class").split() and "not significant" not in win.inner_text()
    assert console.errors == []


def test_cost_speed_and_config_warning(report, browser):
    out, dirs = report
    page, console = browser
    _open(page, out)
    records = [json.loads(line) for line in (dirs[0] / "records.jsonl").read_text().splitlines()]
    rounds = [r for rec in records for r in rec["trace"]["rounds"]]
    row = page.locator("[data-testid=cost-row][data-run=run0]")
    assert int(row.locator(".input").get_attribute("data-value")) == sum(
        r["usage"]["input_tokens"] for r in rounds
    )
    assert int(row.locator(".output").get_attribute("data-value")) == sum(
        r["usage"]["output_tokens"] for r in rounds
    )
    p50 = float(np.percentile([r["latency_ms"] for r in rounds], 50))
    assert float(row.locator(".p50").get_attribute("data-value")) == pytest.approx(p50)
    assert row.locator(".cost").inner_text().startswith("– (no price table entry")
    other = page.locator("[data-testid=cost-row][data-run=run1] .input").inner_text()
    assert other == "– (no token counts reported)"
    warning = page.locator("[data-testid=config-warning]")
    assert "k: 5 vs suite default" in warning.inner_text()
    assert "harness mode: oracle-assisted vs production-parity" in warning.inner_text()
    assert console.errors == []


def _shown_keys(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "[data-testid=case-row]", "rows => rows.map((r) => [r.children[0].textContent, r.dataset.key])"
    )


def test_exact_selection_from_a_comparison(report, browser):
    out, dirs = report
    page, console = browser
    _open(page, out)
    row = page.locator(f"[data-testid=comparison][data-a='0'][data-b='1'][data-tier='{NFC}']")
    button = row.locator("[data-testid=disagree][data-key='demo:a-edit']")
    assert button.get_attribute("data-winner") == "a" and "win-a" in button.get_attribute("class")
    assert row.locator("[data-testid=disagree][data-key='demo:a-edit_save']").count() == 1
    button.click()
    page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length === 2")
    assert sorted(_shown_keys(page)) == [["m-good (good)", "demo:a-edit"], ["m-noisy (noisy)", "demo:a-edit"]]
    # "… N more" selects every disagreeing case of the comparison, in both runs.
    want = _disagreeing(dirs[0], dirs[1], NFC)
    assert len(want) > 30
    more = row.locator("[data-testid=disagree-more]")
    assert more.inner_text().startswith(f"… {len(want) - 30} more")
    more.click()
    page.wait_for_function(
        "n => document.getElementById('f-count').textContent.startsWith(n + ' of')", arg=2 * len(want)
    )
    assert console.errors == []


def _disagreeing(a: Path, b: Path, tier: str) -> set[str]:
    def passes(run_dir: Path) -> dict[str, bool]:
        lines = (run_dir / "records.jsonl").read_text().splitlines()
        return {
            r["key"]: r["verdicts"][tier]["passed"] for r in map(json.loads, lines) if r["status"] != "error"
        }

    pa, pb = passes(a), passes(b)
    return {k for k in pa if k in pb and pa[k] != pb[k]}


def test_trials_with_an_error_record_explained_and_flips_selectable(tmp_path, browser):
    recs = make_records(20, trials=3, skill=0.5, seed=4)
    victim = next(r for r in recs if r["key"] == "demo:case-00002" and r["trial"] == 2)
    victim.update(status="error", error={"type": "TransientProviderError", "message": "503"}, verdicts={})
    run_dir = write_run(tmp_path / "trials", recs)
    _header(run_dir, trials=3)
    out = write_report([run_dir], tmp_path / "report.html")
    page, console = browser
    _open(page, out)
    note = page.locator("[data-testid=trial-note]")
    assert "pass@3 not shown: 1 case has error records" in note.inner_text()
    assert page.locator(".trials-k").first.inner_text() == "2"
    flips = page.locator("[data-testid=flip]")
    key = flips.first.get_attribute("data-key")
    want = sum(1 for r in recs if r["key"] == key)
    flips.first.click()
    page.wait_for_function(
        "([n, key]) => { const rows = [...document.querySelectorAll('[data-testid=case-row]')];"
        " return rows.length === n && rows.every((r) => r.dataset.key === key); }",
        arg=[want, key],
    )
    assert console.errors == []
