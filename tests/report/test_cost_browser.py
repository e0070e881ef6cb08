"""The report's accuracy-vs-cost chart and a case's cost, in Chromium: one point per priced run, the
Pareto front filled and joined, an unpriced run listed with its reason (never drawn at 0), and a case
panel's tokens and cost at the built-in price of its run's model. Expected values are worked out here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from synth import make_records, write_run

from callbench.report.html import write_report
from callbench.types.summary import RunUsage


def _priced(root: Path, name: str, skill: float, per_case: float, seed: int) -> Path:
    run_dir = write_run(root / name, make_records(40, skill=skill, seed=seed), model=name)
    summary = json.loads((run_dir / "summary.json").read_text())
    usage = RunUsage(cost_usd=per_case * 40, cost_per_case_mean=per_case, price_model=name, price_table="t")
    (run_dir / "summary.json").write_text(
        json.dumps(summary | {"usage": usage.model_dump(exclude_unset=True)})
    )
    return run_dir


def _with_usage(root: Path) -> Path:
    """gpt-4o-mini at the built-in price: each round 1,000 input (400 cached) + 100 output (20 reasoning)."""
    records = make_records(10, skill=0.9, seed=8, suite="priced", harness_mode="production-parity")
    for rec in records:
        for rnd in rec["trace"]["rounds"]:
            rnd["model"] = "gpt-4o-mini-2024-07-18"
            rnd["latency_ms"] = 30.0
            rnd["usage"] = {
                "input_tokens": 1000,
                "cached_tokens": 400,
                "output_tokens": 100,
                "reasoning_tokens": 20,
            }
    return write_run(root / "mini", records, model="openai:gpt-4o-mini", summary=False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: Any) -> Path:
    root = tmp_path_factory.mktemp("cost")
    dirs = [
        _priced(root, "cheap", 0.5, 0.001, 1),
        _priced(root, "mid", 0.8, 0.004, 2),
        _priced(root, "waste", 0.45, 0.03, 3),
        write_run(root / "local", make_records(40, skill=0.9, seed=5), model="local"),
        _with_usage(root),
    ]
    return write_report(dirs, root / "report.html")


def test_accuracy_vs_cost_chart_marks_the_pareto_front(report, browser):
    page, console = browser
    page.goto(report.as_uri())
    chart = page.locator(
        "[data-testid=cost-chart][data-tier=native-function-contract][data-mode=oracle-assisted]"
    )
    points = chart.locator("[data-testid=cost-point]")
    assert points.count() == 3  # the unpriced run is not drawn
    front = {p.get_attribute("data-run"): p.get_attribute("data-pareto") for p in points.all()}
    assert front == {"run0": "true", "run1": "true", "run2": "false"}  # waste: dearer and weaker than mid
    assert chart.locator("[data-testid=pareto-line]").count() == 1
    # $0.001 to $0.03 per case, more than 20 times apart: a log scale
    assert chart.locator("svg").get_attribute("data-scale") == "log"
    unpriced = chart.locator("[data-testid=cost-unpriced]").inner_text()
    assert unpriced == "Not drawn (no cost): local (local) (no token counts reported)"
    row = page.locator("[data-testid=cost-row][data-run=run4]")
    # 10 records x 2 rounds x (600 x $0.15 + 400 x $0.075 + 100 x $0.60) / 1e6
    assert float(row.locator(".cost").get_attribute("data-value")) == pytest.approx(0.0036)
    assert row.locator(".cost-per-case").inner_text() == "$0.000360"
    assert "priced as gpt-4o-mini (built-in price table (as of 2026-12-01))" in row.inner_text()
    assert console.errors == []


def test_a_case_panel_shows_the_cases_tokens_and_cost(report, browser):
    page, console = browser
    page.goto(report.as_uri())
    page.fill("#f-search", "priced:case-00003")
    page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length === 1")
    page.locator("[data-testid=case-row]").first.click()
    line = page.locator("[data-testid=case-panel] [data-testid=case-cost]")
    line.wait_for()
    assert line.inner_text() == "tokens 2,000 input (800 cached) + 200 output (40 reasoning) · cost $0.000360"
    assert float(line.get_attribute("data-cost")) == pytest.approx(360e-6)
    assert console.errors == []
