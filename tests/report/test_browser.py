"""The report in a real browser: figures, filters, round cards, escaping, scale."""

from __future__ import annotations

import json

import pytest
from browser import ARTIFACTS
from synth import make_records, write_run

from callbench.report.html import write_report

PAYLOADS = [
    '<script>window.__pwned = "script"</script>',
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "javascript:window.__pwned='link'",
    '"></pre><svg onload="window.__pwned=\'svg\'">',
]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    recs = make_records(60, trials=2, error_rate=0.05)
    hostile = make_records(8, seed=7, suite="hostile", payload=" ".join(PAYLOADS))
    run = write_run(root / "run-a", recs + hostile)
    out = write_report([run], root / "report.html")
    return out, json.loads((run / "summary.json").read_text())["statistics"], recs + hostile


def test_summary_cards_equal_summary_json(report, browser):
    path, stats, _ = report
    page, console = browser
    page.goto(path.as_uri())
    cards = page.locator("[data-testid=card]")
    assert cards.count() == len(stats["strata"])
    for stratum in stats["strata"]:
        card = page.locator(
            f"[data-testid=card][data-tier='{stratum['tier']}'][data-mode='{stratum['harness_mode']}']"
        )
        acc = stratum["accuracy"]
        assert float(card.locator(".acc").get_attribute("data-value")) == pytest.approx(acc["estimate"])
        assert card.locator(".acc").inner_text() == f"{100 * acc['estimate']:.1f}%"
        assert f"{100 * acc['low']:.1f}%" in card.locator(".ci").inner_text()
        assert card.locator(".n").inner_text() == str(stratum["n"])
        assert card.locator(".errors").inner_text() == str(stratum["errors"])
    assert console.errors == []


def test_filters_change_visible_rows_and_panel_shows_rounds(report, browser):
    path, _stats, recs = report
    page, console = browser
    page.goto(path.as_uri())
    rows = page.locator("[data-testid=case-row]")
    assert page.locator("#f-count").inner_text() == f"{len(recs)} of {len(recs)} records"
    page.select_option("#f-tier", "native-function-contract")
    page.select_option("#f-outcome", "fail")
    fails = sum(
        1
        for r in recs
        if r["status"] == "completed" and not r["verdicts"]["native-function-contract"]["passed"]
    )
    assert page.locator("#f-count").inner_text() == f"{fails} of {len(recs)} records"
    assert rows.count() == min(fails, 150)
    page.select_option("#f-outcome", "")
    page.select_option("#f-tier", "")
    page.select_option("#f-category", "edit")
    edits = sum(1 for r in recs if r["category"] == "edit")
    assert rows.count() == edits < len(recs)
    page.fill("#f-search", "demo:case-00005")
    page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length === 2")
    rows.first.click()
    panel = page.locator("[data-testid=case-panel]")
    expected_rounds = len(
        next(r for r in recs if r["key"] == "demo:case-00005" and r["status"] == "completed")["trace"][
            "rounds"
        ]
    )
    panel.locator("[data-testid=round-card]").first.wait_for()  # drawn once its record is inflated
    assert panel.locator("[data-testid=round-card]").count() == expected_rounds
    assert panel.locator(".badge.warn").count() >= 1  # the closing round has no tool call
    assert panel.locator("[data-testid=arg-diff]").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    panel.screenshot(path=str(ARTIFACTS / "report-case.png"))
    assert console.errors == []


def test_model_output_never_executes(report, browser):
    path, _stats, _recs = report
    page, console = browser
    page.goto(path.as_uri())
    page.select_option("#f-suite", "hostile")
    rows = page.locator("[data-testid=case-row]")
    assert rows.count() == 8
    for i in range(rows.count()):
        rows.nth(i).click()
    final = page.locator("[data-testid=final-text]").first
    assert final.inner_text() == " ".join(PAYLOADS)  # shown verbatim, as text
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img, main a[href^='javascript']").count() == 0
    assert console.dialogs == [] and console.errors == []


def test_ten_thousand_cases_render_lazily(tmp_path, browser):
    run = write_run(tmp_path / "big", make_records(10_000, seed=11), summary=False)
    out = write_report([run], tmp_path / "big.html")
    page, console = browser
    page.goto(out.as_uri())
    rows = page.locator("[data-testid=case-row]")
    assert page.locator("#f-count").inner_text() == "10000 of 10000 records"
    assert rows.count() == 150  # only the first page is in the DOM
    page.locator("#sentinel").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length > 150")
    page.fill("#f-search", "case-09999")
    page.wait_for_function("document.querySelectorAll('[data-testid=case-row]').length === 1")
    assert console.errors == []


def test_argument_diff_follows_the_dsl(tmp_path, browser):
    import random

    from synth import make_record

    rec = make_record(1, rng=random.Random(0), skill=1.0)
    rec["trace"]["calls"][0]["arguments"] = {"name": "gene1", "limit": 7, "extra": True, "unit": "c"}
    rec["metadata"]["expected"] = [
        {
            "tool": rec["expected_tools"][0][0],
            "arguments": {
                "name": {"$any": True},
                "limit": 5,
                "unit": {"$one_of": ["c", "f"]},
                "species": {"$default": "human"},
                "source": {"$ref": "search.id"},
            },
        }
    ]
    out = write_report([write_run(tmp_path / "r", [rec])], tmp_path / "r.html")
    page, console = browser
    page.goto(out.as_uri())
    page.locator("[data-testid=case-row]").first.click()
    expected_side = page.locator("[data-testid=arg-diff] > div").first
    expected_side.locator(".kv").first.wait_for()  # the panel draws once its record is inflated
    states = {
        line.inner_text().split(":")[0]: line.get_attribute("data-state")
        for line in expected_side.locator(".kv").all()
    }
    assert states == {
        "extra": "diff",
        "limit": "diff",
        "name": "",
        "source": "missing",
        "species": "",
        "unit": "",
    }
    assert console.errors == []
