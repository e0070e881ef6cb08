"""The breakdowns section and the charts in Chromium at 1440×900, checked against figures computed
here from ``records.jsonl`` (independently of report/breakdowns.py)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

import pytest
from synth import make_records, write_run

from callbench.report.html import write_report

NFC = "native-function-contract"
HOSTILE = "<img src=x onerror=\"window.__pwned='tool'\">"


def adversarial(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give a few completed records a wrong tool, an unknown tool, unparsable arguments or no call."""
    done = [r for r in records if r["status"] == "completed"]
    for r in done[0:3]:  # a wrong (offered) tool in place of the expected one
        r["trace"]["calls"][0]["tool"] = "blast" if r["expected_tools"] != [["blast"]] else "translate"
    done[3]["trace"]["calls"].append(
        done[3]["trace"]["calls"][0]
        | {"index": 1, "tool": HOSTILE, "known_tool": False, "execution": "rejected"}
    )
    done[4]["trace"]["calls"][0] |= {
        "parse_error": "Expecting value",
        "schema_valid": False,
        "execution": "rejected",
    }
    done[5]["trace"]["calls"] = []
    return records


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("breakdowns")
    runs = []
    for i, (seed, skill) in enumerate([(1, 0.8), (2, 0.5), (3, 0.3)]):
        recs = make_records(40, seed=seed, skill=skill, error_rate=0.05, trials=1 + (i == 0))
        runs.append(write_run(root / f"run-{i}", adversarial(recs) if i == 0 else recs, model=f"m{i}"))
    out = write_report(runs, root / "report.html")
    records = [[json.loads(line) for line in (r / "records.jsonl").read_text().splitlines()] for r in runs]
    return out, records


def open_page(page: Any, path: Any) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=breakdowns]")


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def test_category_and_tool_tables_equal_the_records(report, browser):
    path, runs = report
    page, console = browser
    open_page(page, path)
    assert page.locator("#bd-tier").input_value() == NFC
    table = page.locator("[data-testid=bd-category]").first
    assert table.get_attribute("data-export").startswith("category-accuracy-native-function-contract")
    for ri, recs in enumerate(runs):
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in recs:
            if r["status"] == "completed":
                groups[r["category"]].append(r["verdicts"][NFC]["passed"])
        for cat, flags in groups.items():
            row = table.locator(f"tr[data-category='{cat}']")
            assert row.locator(f"td.acc[data-run='{ri}']").inner_text() == pct(sum(flags) / len(flags))
            assert row.locator(f"td.n[data-run='{ri}']").inner_text() == str(len(flags))

    tools = page.locator("[data-testid=bd-tools]")
    assert tools.get_attribute("data-export") == "tools"
    for ri, recs in enumerate(runs):
        calls = [c for r in recs if r["status"] == "completed" for c in r["trace"]["calls"]]
        known = [c for c in calls if c.get("known_tool", True)]
        for name in {c["tool"] for c in known}:
            mine = [c for c in known if c["tool"] == name]
            parsable = [c for c in mine if c["parse_error"] is None]
            decided = [c for c in mine if c["execution"] in ("ok", "error", "rejected")]
            row = tools.locator(f"tr[data-tool='{name}']")
            assert row.locator(f"td.calls[data-run='{ri}']").inner_text() == str(len(mine))
            assert row.locator(f"td.unparsable[data-run='{ri}']").inner_text() == str(
                len(mine) - len(parsable)
            )
            invalid = sum(not c["schema_valid"] for c in parsable) / len(parsable) if parsable else None
            failed = (
                sum(c["execution"] in ("error", "rejected") for c in decided) / len(decided)
                if decided
                else None
            )
            assert row.locator(f"td.schema[data-run='{ri}']").inner_text() == (
                pct(invalid) if parsable else "–"
            )
            assert row.locator(f"td.exec[data-run='{ri}']").inner_text() == (pct(failed) if decided else "–")
    unknown = page.locator("[data-testid=bd-unknown] tbody tr")
    assert unknown.count() == 1
    assert unknown.locator("th").inner_text() == HOSTILE  # shown as literal text
    assert [unknown.locator(f"td[data-run='{i}']").inner_text() for i in range(3)] == ["1", "0", "0"]
    assert page.evaluate("window.__pwned") is None
    # No table widens the page: wide ones scroll inside their own box.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    assert console.errors == []


def test_a_confusion_cell_and_a_reason_count_select_exactly_their_records(report, browser):
    path, runs = report
    page, console = browser
    open_page(page, path)
    recs = runs[0]
    # Synthetic verdicts report no pairing: steps pair with calls by position.
    wrong = [
        (r["key"], r["trial"])
        for r in recs
        if r["status"] == "completed"
        and r["trace"]["calls"]
        and r["expected_tools"] == [["search_genes"]]
        and r["trace"]["calls"][0]["tool"] == "blast"
    ]
    assert wrong  # the fixture put a wrong tool into a search_genes case
    cell = page.locator("[data-testid=bd-confusion] tr[data-expected='search_genes'] td[data-called='blast']")
    assert cell.inner_text() == str(len(wrong))
    cell.locator("button").click()
    shown = page.locator("[data-testid=case-row]")
    assert page.locator("#f-count").inner_text().startswith(f"{len(wrong)} of ")
    got = [
        (
            shown.nth(i).locator("td").nth(0).inner_text(),
            shown.nth(i).get_attribute("data-key"),
            int(shown.nth(i).locator("td").nth(2).inner_text()),
        )
        for i in range(shown.count())
    ]
    assert sorted(got) == sorted(("m0 (run-0)", k, t) for k, t in wrong)

    # Reason codes: run 1's records failing NFC with tool_missing (once per record).
    code = next(
        c
        for r in runs[1]
        if r["status"] == "completed"
        for c in (x["code"] for x in r["verdicts"][NFC]["reasons"])
    )
    want = sorted(
        r["key"]
        for r in runs[1]
        if r["status"] == "completed" and code in {x["code"] for x in r["verdicts"][NFC]["reasons"]}
    )
    count = page.locator(f"[data-testid=bd-reasons] tr[data-code='{code}'] td[data-run='1']")
    assert count.inner_text() == str(len(want))
    count.locator("button").click()
    assert sorted(shown.nth(i).get_attribute("data-key") for i in range(shown.count())) == want
    assert console.errors == []


def bin_of(v: float, bins: int) -> int:
    return min(bins - 1, max(0, math.floor(v * bins + 1e-9)))


@pytest.mark.parametrize("bins,title", [(10, "Partial scores"), (5, "Retrieval recall")])
def test_histograms_label_ranges_and_count_pass_and_fail_apart(report, browser, bins, title):
    path, runs = report
    page, console = browser
    open_page(page, path)
    page.select_option("#chart-run", "1")
    page.select_option("#chart-tier", NFC)
    chart = page.locator(".chart", has=page.locator("h3", has_text=title))
    svg = chart.locator("svg[data-testid=histogram]")
    assert svg.get_attribute("data-export").startswith("partial-scores" if bins == 10 else "retrieval-recall")
    field = (lambda r: r["verdicts"][NFC]["partial"]) if bins == 10 else (lambda r: r["retrieval_recall"])
    passed, failed = [0] * bins, [0] * bins
    ones = 0
    for r in runs[1]:
        if r["status"] == "completed":
            v = field(r)
            ones += v == 1.0
            (passed if r["verdicts"][NFC]["passed"] else failed)[bin_of(v, bins)] += 1
    assert ones > 0
    groups = svg.locator("g.bin")
    labels = [f"{i / bins:.1f}–{(i + 1) / bins:.1f}" for i in range(bins)]
    assert [groups.nth(i).locator("text.bin-label").text_content() for i in range(bins)] == labels
    assert [int(groups.nth(i).get_attribute("data-pass")) for i in range(bins)] == passed
    assert [int(groups.nth(i).get_attribute("data-fail")) for i in range(bins)] == failed
    assert passed[-1] + failed[-1] >= ones  # every 1.0 is in the last bin
    assert (
        svg.locator("text", has_text="pass").count() >= 1
        and svg.locator("text", has_text="fail").count() >= 1
    )
    assert console.errors == []


def test_category_labels_are_not_cut(tmp_path, browser):
    page, console = browser
    long = "a_category_name_far_longer_than_eighteen_characters"
    recs = make_records(8, seed=4)
    for r in recs:
        r["category"] = long
    out = write_report([write_run(tmp_path / "r", recs)], tmp_path / "r.html")
    open_page(page, out)
    label = page.locator("[data-testid=category-chart] text.cat-label").first
    assert label.text_content() == long
    box, bar = label.bounding_box(), page.locator("[data-testid=category-chart] rect").first.bounding_box()
    assert box["x"] + box["width"] <= bar["x"]  # the label ends before its bar starts
    assert console.errors == []
