"""A manual case's verdicts judge nothing: progress lines say n/a, never FAIL."""

from __future__ import annotations

from callbench.report.progress import case_outcome, verdict_word
from callbench.types.records import CaseRecord
from callbench.types.verdict import Verdict


def _verdict(*, passed: bool, applicable: bool = True) -> Verdict:
    return Verdict(scorer="t", passed=passed, applicable=applicable)


def test_verdict_word_tells_not_applicable_apart() -> None:
    assert verdict_word(_verdict(passed=True)) == "PASS"
    assert verdict_word(_verdict(passed=False)) == "FAIL"
    assert verdict_word(_verdict(passed=False, applicable=False)) == "n/a"


def test_case_outcome_of_a_manual_case() -> None:
    record = CaseRecord(
        key="genomics-manual:gc_summary",
        suite="genomics-manual",
        case_id="gc_summary",
        category="analysis",
        harness_mode="production-parity",
        verdicts={
            "native-function-contract": _verdict(passed=False, applicable=False),
            "real-tool-execution": _verdict(passed=False, applicable=False),
        },
    )
    line = case_outcome(record)
    assert line.startswith("genomics-manual:gc_summary#1 ")
    assert "FAIL" not in line and line.count("=n/a") == 2
