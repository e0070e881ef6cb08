"""Call cap in both modes, strict vs lenient success, efficiency and failure counting."""

from __future__ import annotations

import json

import pytest
from dag_helpers import play

from callbench.benchmarks.funcbenchgen.answer import lenient_match, strict_match
from callbench.benchmarks.funcbenchgen.planner import PlannerAgent, plan_turn, read_conversation
from callbench.benchmarks.funcbenchgen.suite import load_suite
from callbench.providers.base import Provider
from callbench.suites.suite import SuiteOptions
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall


class Wasteful(Provider):
    """Repeats one correct source call ``waste`` times, then solves like the planner.

    The planner part skips the source (already called), so the episode makes ``waste + n_core - 1`` calls.
    """

    name = "wasteful"
    needs_network = False

    def __init__(self, waste: int, answer: str | None = None) -> None:
        self.waste = waste
        self.answer = answer

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        turns = sum(1 for m in messages if m.role == "assistant")
        if turns < self.waste:
            beliefs = read_conversation(messages[:1], tools)
            source = min(beliefs.callable(), key=lambda f: f.rank)
            args = {p: beliefs.values[t] for p, t in zip(source.params, source.input_types, strict=True)}
            call = ToolCall(id=f"w{turns}", name=source.name, arguments_raw=json.dumps(args), arguments=args)
            return ModelTurn(tool_calls=[call])
        turn = plan_turn(messages, tools)
        if not turn.tool_calls and self.answer is not None:
            return ModelTurn(text=self.answer)
        return turn


def _suite(extra: str = ""):
    return load_suite(f"n_core=5;depth=2;n_conn=3;seeds=1{extra}", SuiteOptions())


def test_fixed_cap_allows_an_answer_after_two_n_core_calls() -> None:
    suite = _suite()
    case = suite.cases[0]
    trace, verdict = play(suite, case, Wasteful(waste=6))
    assert len(trace.calls) == 10 and trace.stop_reason == "answer"
    assert verdict.passed and verdict.metrics["efficiency"] == pytest.approx(0.5)


def test_official_cap_ends_the_episode_at_two_n_core_calls() -> None:
    suite = _suite(";cap=official")
    trace, verdict = play(suite, suite.cases[0], Wasteful(waste=6))
    assert len(trace.calls) == 10 and trace.stop_reason == "max_calls"
    assert not verdict.passed and verdict.details["outcome"] == "timeout"
    assert verdict.reasons[0].code == "timeout"


def test_one_call_beyond_the_fixed_cap_ends_without_answer() -> None:
    suite = _suite()
    trace, verdict = play(suite, suite.cases[0], Wasteful(waste=7))
    assert len(trace.calls) == 11 and trace.stop_reason == "max_calls" and not verdict.passed


def test_planner_success_has_efficiency_one_and_no_failures() -> None:
    suite = _suite()
    _trace, verdict = play(suite, suite.cases[0], PlannerAgent())
    assert verdict.passed and verdict.metrics["efficiency"] == 1.0
    assert verdict.details["failure_counts"] == {} and verdict.details["first_failure"] is None
    assert verdict.details["distractor_calls"] == {"conn": 0, "dis": 0}
    assert verdict.details["rule"] == "strict"


@pytest.mark.parametrize(
    ("answer", "strict", "lenient"),
    [
        ("{t} = {v}", True, True),
        ("The value of variable {t} is {v}.", True, True),
        ("{v}", True, True),
        ("It is either {v} or {w}.", False, True),
        ("{t} = {w}", False, False),
        ("{t} = {w}; earlier I saw {v}", False, True),
        ("I do not know.", False, False),
        ("The answer is {v}0", False, False),
    ],
)
def test_strict_and_lenient_answer_rules(answer: str, strict: bool, lenient: bool) -> None:
    text = answer.format(t="abcd", v=245, w=17)
    assert strict_match(text, "abcd", 245)[0] is strict
    assert lenient_match(text, 245) is lenient


def test_lenient_rule_is_selectable_and_recorded() -> None:
    strict_suite = _suite()
    lenient_suite = _suite(";scoring=lenient")
    for suite, passed, rule in ((strict_suite, False, "strict"), (lenient_suite, True, "lenient")):
        case = suite.cases[0]
        _, verdict = play(suite, case, Wasteful(waste=0, answer=f"Either 1000 or {_target_value(case)}"))
        assert verdict.passed is passed and verdict.details["rule"] == rule


def test_lenient_rule_needs_n_core_calls_and_strict_needs_the_target_call() -> None:
    for spec, code in ((";scoring=lenient", "too_few_calls"), ("", "target_not_computed")):
        suite = _suite(spec)
        case = suite.cases[0]
        _, verdict = play(suite, case, _Guesser(str(_target_value(case))))
        assert not verdict.passed and code in verdict.codes


class _Guesser(Provider):
    name = "guesser"
    needs_network = False

    def __init__(self, text: str) -> None:
        self.text = text

    async def generate(self, messages, tools, settings) -> ModelTurn:
        return ModelTurn(text=self.text)


def _target_value(case) -> int:
    task = case.executor_config["task"]
    target = next(n for n in task["nodes"] if n["name"] == task["target_node"])
    return task["values"][target["output_type"]]
