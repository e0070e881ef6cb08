"""Tokens per conversation: the agent's and the simulated user's apart, in the summary, ``show`` and
the report; the user's tokens never in the agent's usage (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from protocol_server import ProtocolServer, Turn

import callbench
from callbench.cli.main import main as cli_main
from callbench.harness.runfolder import read_run
from callbench.harness.usage import conversations_text
from callbench.plugin import Case, PythonExecutor, Suite, ToolContract, ToolRegistry
from callbench.providers.base import Provider
from callbench.report.overview import cost_rows, overview_tables
from callbench.report.payload import run_statistics
from callbench.types.conversation import ScriptedTurn, UserSide
from callbench.types.messages import GenerationSettings, Message, ModelTurn, Usage
from callbench.types.summary import RunUsage

AGENT_IN, AGENT_OUT = 100, 10
"""The agent's tokens per request."""
USER_TOKENS = {1: (30, 4), 2: (45, 2)}
"""The simulated user's (input, output) tokens for its first and second turn."""


class Counting(Provider):
    """An agent that answers every user turn with text, reporting fixed token counts."""

    name = model = "counting"
    needs_network = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        return ModelTurn(
            text="Which order is it?", usage=Usage(input_tokens=AGENT_IN, output_tokens=AGENT_OUT)
        )


def simulated_user(api: str, body: dict[str, Any]) -> Turn:
    """The simulated user's endpoint: asks for help on its first turn, stops on its second."""
    turn = sum(m["role"] == "user" for m in body["messages"])
    text = "I need help with order 7." if turn == 1 else "###STOP###"
    return Turn(text=text, input_tokens=USER_TOKENS[turn][0], output_tokens=USER_TOKENS[turn][1])


def suite(n: int = 2, user: bool = True) -> Suite:
    side = UserSide(script=[ScriptedTurn(say="Order 7, please.")], instructions="You want order 7's status.")
    return Suite(
        name="conv",
        cases=[Case(id=f"c{i}", user=side) if user else Case(id=f"c{i}", instruction="Hi") for i in range(n)],
        registry=ToolRegistry([]),
        executor=PythonExecutor({}),
        scorers=["native-function-contract"],
    )


def test_the_simulated_users_tokens_are_counted_apart_per_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ProtocolServer(simulated_user) as server:
        result = callbench.run(
            suite(),
            Counting(),
            out_dir=tmp_path / "r",
            progress="quiet",
            cache=False,
            user_model=f"openai:sim@{server.url}",
        )
    # each conversation: the user opens (turn 1), the agent answers once, the user stops (turn 2)
    for record in result.records:
        assert [t.usage for t in record.trace.user_turns or []] == [
            Usage(input_tokens=30, output_tokens=4),
            Usage(input_tokens=45, output_tokens=2),
        ]
        assert record.trace.usage == Usage(input_tokens=AGENT_IN, output_tokens=AGENT_OUT)
    usage = result.summary["usage"]
    assert usage["tokens"]["input"] == 2 * AGENT_IN and usage["tokens"]["output"] == 2 * AGENT_OUT
    label = result.records[0].simulator.label  # type: ignore[union-attr]
    assert label.startswith("openai:sim@")
    assert usage["conversations"] == {
        "n": 2,
        "users": [label],
        "agent": {
            "input": 200,
            "output": 20,
            "input_per_conversation": 100.0,
            "output_per_conversation": 10.0,
        },
        "user": {"input": 150, "output": 12, "input_per_conversation": 75.0, "output_per_conversation": 6.0},
    }
    # summary.json holds the same figures, and `callbench show` prints them
    written = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert written["usage"]["conversations"] == usage["conversations"]
    capsys.readouterr()
    assert cli_main(["show", str(tmp_path / "r")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "tokens per conversation (n=2): agent 100 input + 10 output tokens; "
        f"simulated user ({label}): 75 input + 6 output tokens"
    ) in out
    # the report's cost table: the structured figures and the same line, as a note
    runs = [read_run(tmp_path / "r")]
    [row] = cost_rows(runs)
    assert row["conversations"] == usage["conversations"] and row["input"] == 200
    tables = overview_tables(runs, [run_statistics(r) for r in runs])
    cost = next(t for t in tables if t.title == "Cost and speed")
    assert any(f"simulated user ({label}): 75 input + 6 output tokens" in note for note in cost.notes)


def test_a_scripted_user_has_no_tokens_and_other_runs_have_no_conversation_figures(tmp_path: Path) -> None:
    result = callbench.run(suite(n=3), Counting(), out_dir=tmp_path / "s", progress="quiet")
    conversations = result.summary["usage"]["conversations"]
    assert conversations["n"] == 3 and conversations["users"] == ["scripted"]
    assert conversations["user"] == {
        "input": 0,
        "output": 0,
        "input_per_conversation": 0.0,
        "output_per_conversation": 0.0,
    }
    # the scripted user opens, the agent answers, the spent script stops: one agent request each
    assert conversations["agent"]["input_per_conversation"] == AGENT_IN
    text = conversations_text(RunUsage.model_validate(result.summary["usage"]).conversations)
    assert (
        text
        == "per conversation (n=3): agent 100 input + 10 output tokens; user (scripted): no model, 0 tokens"
    )
    plain = callbench.run(suite(user=False), Counting(), out_dir=tmp_path / "p", progress="quiet")
    assert "conversations" not in plain.summary["usage"]
    assert "conversations" not in json.loads((tmp_path / "p" / "summary.json").read_text())["usage"]
