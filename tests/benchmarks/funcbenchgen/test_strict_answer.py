"""Item 23: strict answers accept explicit final-answer forms; adversarial answers stay ambiguous;
the lenient (official) rate is reported beside the strict one."""

from __future__ import annotations

import pytest
from dag_helpers import play, record_of

from callbench.benchmarks.funcbenchgen.answer import lenient_match, strict_match
from callbench.benchmarks.funcbenchgen.planner import plan_turn
from callbench.benchmarks.funcbenchgen.scorer import aggregate
from callbench.benchmarks.funcbenchgen.suite import load_suite
from callbench.providers.base import Provider
from callbench.suites.suite import SuiteOptions
from callbench.types.messages import ModelTurn

T, V = "qwzt", 358

# (answer, strict verdict, lenient verdict)
ACCEPTED = [
    "The answer is 358.",
    "Final answer: 358.",
    "final answer: 358",
    "**Final answer:** 358",
    "The final answer is **358**.",
    "Answer: 358",
    "I called func_abc with 12 and 40, then func_def with 7. The answer is 358.",
    "func_abc gave 12 and func_def gave 40.\n\nFinal answer: 358",
    "Working: 12 -> 40 -> 358.\nFinal answer: 358.",
    "The value of qwzt is 358 (computed from 12 and 40).",
    "Final answer: 358 (from func_abc with inputs 12 and 40).",
    "qwzt = 358",
    "After 12 and 40 came back, qwzt = 358.",
    "The answer is 358, not 359.",
    "The answer is not 359; the answer is 358.",
    "\\boxed{358}",
    "I got 12 and 40 along the way; so the final answer is $\\boxed{358}$.",
    "Final answer: 358. qwzt = 358.",
    "Final answer: 358\n- 12 came from func_abc\n- 40 from func_def",
    "`qwzt` = **358**",
    "Final Answer: The value of qwzt is 358.",
    "The answer is 358 (12 -> 40 -> 358).",
]

REJECTED = [
    # Several numbers and no explicit final form: ambiguous.
    ("I called func_abc with 12 and 40 and got 358.", "ambiguous"),
    ("Values seen: 12, 40, 358.", "ambiguous"),
    # Negations are not statements of the value.
    ("The answer is not 358, it is 359.", "ambiguous"),
    ("The answer is not 359, it is 358.", "ambiguous"),
    # Alternatives offered right after an explicit value.
    ("The answer is 358 or 359.", "alternatives"),
    ("Final answer: 358, or maybe 359", "alternatives"),
    ("The answer is 358/359.", "alternatives"),
    ("The answer is 358-359.", "alternatives"),
    ("Final answer: 358 (or 359).", "alternatives"),
    ("qwzt = 358 or 359", "alternatives"),
    # Conflicting explicit statements (a self-correction is ambiguous under strict).
    ("The answer is 359. Wait, no: the answer is 358.", "conflicting"),
    ("Final answer: 358. qwzt = 359.", "conflicting"),
    ("\\boxed{358} \\boxed{359}", "conflicting"),
    # Numbers that only look like the value.
    ("The answer is 358.5", "358.5"),
    ("The answer is -358.", "-358"),
    ("Final answer: 3580", "3580"),
    ("The answer is 358,000.", "358,000"),
    ("The answer is 359 (358 was an input).", "359"),
    ("The answer: unknown. Inputs were 12 and 358.", "ambiguous"),
]


@pytest.mark.parametrize("answer", ACCEPTED)
def test_explicit_final_forms_pass_strict(answer: str) -> None:
    ok, why = strict_match(answer, T, V)
    assert ok, (answer, why)
    assert lenient_match(answer, V)


@pytest.mark.parametrize(("answer", "why_part"), REJECTED)
def test_adversarial_answers_fail_strict_with_a_reason(answer: str, why_part: str) -> None:
    ok, why = strict_match(answer, T, V)
    assert not ok, answer
    assert why_part in why, (answer, why)


def test_old_rules_still_hold() -> None:
    assert strict_match("358", T, V)[0]
    assert strict_match("The value of variable qwzt is 358.", T, V)[0]
    assert not strict_match("It is either 358 or 17.", T, V)[0]
    assert not strict_match("I do not know.", T, V)[0]
    assert not strict_match("qwzt = 17; earlier I saw 358", T, V)[0]


class _Answering(Provider):
    """Solves like the planner, then answers with a fixed text (``{v}`` is the computed value)."""

    name = "answering"
    needs_network = False

    def __init__(self, template: str) -> None:
        self.template = template

    async def generate(self, messages, tools, settings) -> ModelTurn:
        turn = plan_turn(messages, tools)
        if turn.tool_calls:
            return turn
        value = turn.text.rsplit("=", 1)[-1].strip()
        return ModelTurn(text=self.template.format(v=value))


def test_verdict_metrics_and_aggregate_carry_both_rates() -> None:
    suite = load_suite("n_core=5;depth=2;n_conn=2;seeds=4", SuiteOptions())
    answers = ["Inputs 1 and 2. The answer is {v}.", "{v} or 1", "Final answer: {v}", "I saw 3, 4 and {v}."]
    records = []
    for case, template in zip(suite.cases, answers, strict=True):
        _, verdict = play(suite, case, _Answering(template))
        assert verdict.metrics["lenient_success"] == 1.0
        records.append(record_of(case, verdict))
    strict = [r["verdicts"]["dag"]["metrics"]["strict_success"] for r in records]
    assert strict == [1.0, 0.0, 1.0, 0.0]
    row = aggregate(records)["rows"][0]
    assert row["successes"] == 2 and row["strict_rate"] == 0.5 and row["lenient_rate"] == 1.0
    table = aggregate(records)["tables"][0]
    columns = table.columns
    assert (
        table.rows[0][columns.index("strict")] == "0.50" and table.rows[0][columns.index("lenient")] == "1.00"
    )


def test_lenient_suite_still_reports_the_strict_rate() -> None:
    suite = load_suite("n_core=5;depth=2;seeds=2;scoring=lenient", SuiteOptions())
    records = [record_of(c, play(suite, c, _Answering("I saw 3, 4 and {v}."))[1]) for c in suite.cases]
    row = aggregate(records)["rows"][0]
    assert row["rule"] == "lenient" and row["success_rate"] == 1.0
    assert row["strict_rate"] == 0.0 and row["lenient_rate"] == 1.0


def test_rows_from_records_without_the_new_metrics_show_no_rate() -> None:
    suite = load_suite("n_core=5;depth=2;seeds=1", SuiteOptions())
    record = record_of(suite.cases[0], play(suite, suite.cases[0], _Answering("{v}"))[1])
    metrics = record["verdicts"]["dag"]["metrics"]
    metrics.pop("strict_success")
    metrics.pop("lenient_success")
    row = aggregate([record])["rows"][0]
    assert row["strict_rate"] is None and row["lenient_rate"] is None
