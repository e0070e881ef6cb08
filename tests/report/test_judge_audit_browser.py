"""The report's "Judge audit" section in Chromium: flags before the figures, κ of the constructed run,
and the disagreement counts as buttons that select exactly those cases in the case table; no section
for a run without a judge."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from synth import make_record, write_run

from callbench.report.html import write_report


def _record(i: int, judge_pass: bool | None, strict_pass: bool) -> dict[str, Any]:
    record = make_record(i, rng=random.Random(i), tiers=())
    scores = (None, None) if judge_pass is None else (2, 2 if judge_pass else 0)
    record["verdicts"] = {
        "complexeval": {
            "scorer": "complexeval",
            "passed": strict_pass,
            "details": {
                "mode": "improved",
                "judge_model": "openai:judge-model",
                "success": strict_pass,
                "response": {
                    "status": "judge_failed" if judge_pass is None else "scored",
                    "completeness": scores[0],
                    "correctness": scores[1],
                },
            },
        }
    }
    return record


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("judge-audit-page")
    cells = [(True, True, 40), (True, False, 10), (False, True, 5), (False, False, 45)]
    records: list[dict[str, Any]] = []
    for judge_pass, strict_pass, count in cells:
        records += [_record(len(records) + k, judge_pass, strict_pass) for k in range(count)]
    records.append(_record(100, None, False))
    audited = write_report([write_run(root / "run", records)], root / "audited.html")
    plain_run = write_run(root / "plain", [make_record(i, rng=random.Random(i)) for i in range(4)])
    return audited, write_report([plain_run], root / "plain.html")


def _shown_keys(page: Any) -> list[str]:
    rows = page.locator("[data-testid=case-row]")
    return sorted(rows.nth(i).get_attribute("data-key") for i in range(rows.count()))


def test_the_section_shows_flags_kappa_and_selects_the_disagreeing_cases(reports, browser) -> None:
    page, console = browser
    page.goto(reports[0].as_uri())
    page.wait_for_selector("[data-testid=judge-audit]")
    audit = page.locator("[data-testid=ja-audit]")
    assert audit.count() == 1
    assert audit.get_attribute("data-strict") == "complexeval success (improved)"
    flag = audit.locator("[data-testid=ja-flag]")
    assert flag.count() == 1 and flag.get_attribute("data-code") == "unparsed"
    # Flags come before the figures.
    assert page.evaluate(
        "() => { const f = document.querySelector('[data-testid=ja-flag]');"
        " const k = document.querySelector('[data-testid=ja-kappa]');"
        " return !!(f.compareDocumentPosition(k) & Node.DOCUMENT_POSITION_FOLLOWING); }"
    )
    kappa = audit.locator("[data-testid=ja-kappa]")
    assert float(kappa.get_attribute("data-value")) == pytest.approx(0.70)
    assert kappa.inner_text().startswith("0.70 [0.56, 0.84]")
    assert audit.locator("[data-testid=ja-n]").inner_text() == "100"

    audit.locator(".ja-picks [data-kind=judge_pass_strict_fail]").click()
    assert _shown_keys(page) == [f"demo:case-{i:05d}" for i in range(40, 50)]
    assert page.locator("[data-testid=selection-count]").get_attribute("data-selected") == "10"

    # The off-diagonal cell of the confusion table selects the other disagreement.
    audit.locator("[data-testid=ja-confusion] [data-kind=judge_fail_strict_pass]").click()
    assert _shown_keys(page) == [f"demo:case-{i:05d}" for i in range(50, 55)]
    audit.locator(".ja-picks [data-kind=unparsed]").click()
    assert _shown_keys(page) == ["demo:case-00100"]
    assert console.errors == []


def test_no_section_without_a_judge(reports, browser) -> None:
    page, console = browser
    page.goto(reports[1].as_uri())
    page.wait_for_selector("[data-testid=case-row]")
    assert page.locator("#slot-judge-audit").inner_html() == ""
    assert console.errors == []
