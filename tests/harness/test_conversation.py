"""Conversation cases: the scripted user's rules, stop signals, budgets, and a simulated user that
fails (an error record, never the agent's failure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from protocol_server import ProtocolServer, Turn

import callbench
from callbench.errors import ConfigError
from callbench.plugin import Case, PythonExecutor, Suite, ToolContract, ToolRegistry
from callbench.providers.base import Provider
from callbench.types.conversation import ScriptedTurn, UserSide
from callbench.types.messages import GenerationSettings, Message, ModelTurn


class Echo(Provider):
    """An agent that repeats the user's last words, or says the text it is given once."""

    name = model = "echo"
    needs_network = False

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        users = [m.content for m in messages if m.role == "user"]
        if self.stop_after is not None and len(users) >= self.stop_after:
            return ModelTurn(text="All done. ###STOP###")
        return ModelTurn(text=f"You said: {users[-1] if users else ''}. Shall I confirm?")


def suite(user: UserSide) -> Suite:
    return Suite(
        name="conv",
        cases=[Case(id="c1", user=user)],
        registry=ToolRegistry([]),
        executor=PythonExecutor({}),
        scorers=["native-function-contract"],
    )


def test_a_scripted_user_takes_rule_turns_when_they_match_and_stops_when_spent(tmp_path: Path) -> None:
    user = UserSide(
        script=[
            ScriptedTurn(say="never said", when="no such words"),
            ScriptedTurn(say="I need help."),
            ScriptedTurn(say="Yes, confirm it.", when=r"confirm\?"),
        ]
    )
    record = callbench.run(suite(user), Echo(), out_dir=tmp_path / "r", progress="quiet").records[0]
    turns = record.trace.user_turns or []
    assert [t.text for t in turns] == ["I need help.", "Yes, confirm it.", "###STOP###"]
    assert [t.after_round for t in turns] == [0, 1, 2]
    assert record.trace.stop_reason == "user_stop" and turns[-1].stop
    assert record.harness_mode.endswith("+user=scripted")


def test_the_agent_stop_signal_and_the_user_turn_budget(tmp_path: Path) -> None:
    user = UserSide(script=[ScriptedTurn(say=f"turn {i}") for i in range(10)], max_turns=3)
    stopped = callbench.run(
        suite(user), Echo(stop_after=2), out_dir=tmp_path / "a", progress="quiet"
    ).records[0]
    assert stopped.trace.stop_reason == "agent_stop"
    spent = callbench.run(suite(user), Echo(), out_dir=tmp_path / "b", progress="quiet").records[0]
    assert spent.trace.stop_reason == "max_turns" and len(spent.trace.user_turns or []) == 3


def test_a_simulated_user_that_returns_no_text_is_an_error_record(tmp_path: Path) -> None:
    user = UserSide(script=[ScriptedTurn(say="hello")], instructions="You want help.")
    with ProtocolServer(lambda api, body: Turn(text="")) as server:
        result = callbench.run(
            suite(user),
            Echo(),
            out_dir=tmp_path / "r",
            progress="quiet",
            cache=False,
            user_model=f"openai:sim@{server.url}",
        )
    record = result.records[0]
    assert record.status == "error" and record.error is not None
    assert record.error.type == "user_simulator:empty_reply"
    assert record.simulator is not None and record.simulator.kind == "simulated"


def test_user_model_without_a_conversation_case_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--user-model applies to conversation suites"):
        callbench.run("starter", "oracle", out_dir=tmp_path / "r", progress="quiet", user_model="refuse")
