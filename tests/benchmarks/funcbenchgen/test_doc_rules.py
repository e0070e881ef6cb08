"""Item 25 (doc): the replies and the tool offer that docs/dag-tasks.md describes, checked on the code."""

from __future__ import annotations

import json
from pathlib import Path

from dag_helpers import play

from callbench.benchmarks.funcbenchgen.suite import load_suite
from callbench.providers.base import Provider
from callbench.suites.suite import SuiteOptions
from callbench.tools.retrieve import select_tools
from callbench.types.messages import Message, ModelTurn, ToolCall

DOC = Path(__file__).resolve().parents[3] / "docs" / "dag-tasks.md"


class _OneBatch(Provider):
    """Sends one batch of raw calls, then answers; keeps the tool messages it got back."""

    name = "one-batch"
    needs_network = False

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls
        self.replies: list[str] = []

    async def generate(self, messages: list[Message], tools, settings) -> ModelTurn:
        if not any(m.role == "assistant" for m in messages):
            out = []
            for i, (name, raw) in enumerate(self.calls):
                try:
                    parsed = json.loads(raw)
                except json.JSONDecodeError:
                    parsed = None
                out.append(
                    ToolCall(
                        id=f"c{i}",
                        name=name,
                        arguments_raw=raw,
                        arguments=parsed if isinstance(parsed, dict) else None,
                    )
                )
            return ModelTurn(tool_calls=out)
        self.replies = [m.content for m in messages if m.role == "tool"]
        return ModelTurn(text="I do not know.")


def _replies(extra: str) -> list[tuple[str, str | None, str]]:
    suite = load_suite("n_core=5;depth=2;n_conn=2;seeds=1" + extra, SuiteOptions())
    case = suite.cases[0]
    first, last = case.expected[0], case.expected[-1]
    args = dict(first.arguments)
    key, rest = next(iter(args)), {k: v for k, v in args.items() if k != next(iter(args))}
    agent = _OneBatch(
        [
            ("func_zzz", json.dumps(args)),  # unknown function
            (first.tool, json.dumps(rest)),  # a parameter missing
            (first.tool, json.dumps({**args, "extra": 1})),  # an extra parameter
            (first.tool, "{not json"),  # arguments not a JSON object
            (first.tool, json.dumps({key: "five", **rest})),  # a non-integer value of a known type
            (last.tool, json.dumps(dict(last.arguments))),  # inputs not yet known
        ]
    )
    trace, verdict = play(suite, case, agent)
    return [
        (c.execution, row["failure"], reply)
        for c, row, reply in zip(trace.calls, verdict.details["per_call"], agent.replies, strict=True)
    ]


def test_structural_errors_get_the_official_text_and_only_bad_json_the_harness_message() -> None:
    got = _replies("")
    assert [(f, r) for _, f, r in got[:3]] == [
        ("unknown_function", '"Error occurred."'),
        ("wrong_arg_count", '"Error occurred."'),
        ("wrong_arg_count", '"Error occurred."'),
    ]
    assert got[3][:2] == ("rejected", "invalid_arguments") and "Invalid call" in got[3][2]
    assert got[4][1] == "incorrect_value" and got[4][2].startswith('"Variable ')  # silent wrong value
    assert got[5][1] == "not_yet_known" and got[5][2].startswith('"Variable ')


def test_detailed_errors_name_the_problem() -> None:
    got = _replies(";errors=detailed")
    assert "No function called func_zzz" in got[0][2]
    assert "missing" in got[1][2] and "unexpected ['extra']" in got[2][2]


def test_without_k_every_function_is_offered_in_task_order() -> None:
    suite = load_suite("n_core=20;depth=5;n_conn=20;n_dis=20;seeds=1", SuiteOptions())
    case = suite.cases[0]
    offered = select_tools(case.prompt_text(), suite.candidate_tools(case), suite.retrieval_k(None))
    assert [t.name for t in offered] == case.executor_config["task"]["tool_order"] and len(offered) == 60
    assert len(select_tools(case.prompt_text(), suite.candidate_tools(case), suite.retrieval_k("24"))) == 24


def test_the_doc_states_these_rules() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "Pass `--k all`" not in text and "`--k all` is not needed" in text
    assert (
        "Unknown tools, malformed JSON, missing or extra parameters and non-integer values are therefore"
        not in text
    )
