"""The ``oracle`` agent: plays each case's gold path, taking ``$ref`` values from real results.

It must pass every built-in suite in every tier; a failure of the oracle is a bug in a case, a
tool or a scorer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from callbench.errors import ConfigError
from callbench.providers.base import Provider
from callbench.types.case import Case, ExpectedStep
from callbench.types.contract import ToolContract
from callbench.types.dsl import parse_tool_content, realize, ref_lookup
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall


@dataclass
class PlannedCall:
    """One call the agent intends to make."""

    step: ExpectedStep | None
    tool: str
    arguments: dict[str, Any]
    """DSL arguments; realised against real results just before sending."""
    literal: bool = False
    """True when ``arguments`` are already concrete (inserted by a mutation)."""


def gold_plan(case: Case) -> list[list[PlannedCall]]:
    """The gold path as model turns: one call per turn unless steps share a ``turn`` number.

    Multi-turn conversations (``case.metadata["oracle_turns"]`` = number of user turns) are played
    turn by turn: the steps of user turn t in one round, then a text-only round (an empty list)
    that hands the conversation back to the next scripted user message.
    """
    literal = case.metadata.get("oracle_calls")
    if literal is not None:
        return _literal_plan(literal)
    user_turns = case.metadata.get("oracle_turns")
    if user_turns:
        return _conversation_plan(case, int(user_turns))
    turns: list[list[PlannedCall]] = []
    last_turn: int | None = None
    for step in case.expected:
        for _ in range(step.times):
            call = PlannedCall(step, step.tools[0], step.arguments)
            if step.turn is not None and step.turn == last_turn and turns:
                turns[-1].append(call)
            else:
                turns.append([call])
            last_turn = step.turn
    return turns


def _literal_plan(turns: list[list[dict[str, Any]]]) -> list[list[PlannedCall]]:
    """A conversation's gold path given as literal calls (``case.metadata["oracle_calls"]``: per agent
    turn, its ``{tool, arguments}`` calls), for cases whose expected steps constrain less than the gold
    path holds (τ²: only the compared arguments). Each call is a round; each turn ends with a text round
    that hands the conversation back to the user."""
    plan: list[list[PlannedCall]] = []
    for calls in turns:
        plan.extend(
            [PlannedCall(None, call["tool"], dict(call["arguments"]), literal=True)] for call in calls
        )
        plan.append([])
    return plan


def _conversation_plan(case: Case, user_turns: int) -> list[list[PlannedCall]]:
    plan: list[list[PlannedCall]] = []
    for turn in range(user_turns):
        calls = [
            PlannedCall(s, s.tools[0], s.arguments)
            for s in case.expected
            if s.turn == turn
            for _ in range(s.times)
        ]
        if calls:
            plan.append(calls)
        plan.append([])  # a text-only round ends the user turn
    return plan


def answer_text(case: Case) -> str:
    spec = case.expected_answer
    parts = ["Done."]
    if spec:
        parts += spec.contains
    return " ".join(parts)


class OracleAgent(Provider):
    """Catalog entry ``oracle``; binds to each case through :meth:`for_case`."""

    name = "oracle"
    model = "oracle"
    needs_network = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        raise ConfigError("the oracle agent plays a case's gold path and must be bound with for_case()")

    def for_case(self, case: Case) -> Provider:
        turn_text = str(case.metadata.get("oracle_text") or "Done.")
        return PlanPlayer(case, gold_plan(case), answer_text(case), label="oracle", turn_text=turn_text)


@dataclass
class PlanPlayer(Provider):
    """Plays a fixed plan of turns, then answers with text."""

    case: Case
    plan: list[list[PlannedCall]]
    final_text: str
    label: str = "oracle"
    prose: str | None = None
    """If set, the agent writes this text instead of any call (the 'call in prose' behaviour)."""
    turn_text: str = "Done."
    """What a planned text-only round says (a conversation's agent turn ends with it)."""
    step_calls: dict[str, str] = field(default_factory=dict)
    position: int = 0
    counter: int = 0
    name: str = "oracle"
    needs_network: bool = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        if self.prose is not None:
            return ModelTurn(text=self.prose, model=self.label, finish_reason="stop")
        if self.position >= len(self.plan):
            return ModelTurn(text=self.final_text, model=self.label, finish_reason="stop")
        if not self.plan[self.position]:  # a planned text-only round (end of a user turn)
            self.position += 1
            return ModelTurn(text=self.turn_text, model=self.label, finish_reason="stop")
        results = {
            m.tool_call_id: parse_tool_content(m.content)
            for m in messages
            if m.role == "tool" and m.tool_call_id is not None
        }
        schemas = {t.name: t.parameters for t in tools}
        lookup = ref_lookup(self.step_calls, results)
        calls = [self._call(p, lookup, schemas) for p in self.plan[self.position]]
        self.position += 1
        return ModelTurn(tool_calls=calls, model=self.label, finish_reason="tool_calls")

    def _call(self, planned: PlannedCall, lookup: Any, schemas: dict[str, dict[str, Any]]) -> ToolCall:
        import json

        self.counter += 1
        call_id = f"call_{self.counter}"
        args = (
            planned.arguments
            if planned.literal
            else realize(planned.arguments, lookup, schemas.get(planned.tool))
        )
        if planned.step is not None:
            self.step_calls.setdefault(planned.step.id, call_id)
        return ToolCall(id=call_id, name=planned.tool, arguments_raw=json.dumps(args), arguments=args)


def make_provider(spec: str) -> Provider:
    """Catalog factory: ``oracle`` takes no options."""
    if spec:
        raise ConfigError(f"the oracle agent takes no options (got {spec!r})")
    return OracleAgent()
