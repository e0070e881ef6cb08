"""Machinery of the metamorphic verdict tests: gold plans, their mutations, real replays and scoring.

A *plan* is the list of calls a stand-in model makes, one per round, with arguments in the case's
argument DSL; ``$ref`` values are realised from the real results of earlier calls of the same plan,
exactly as the oracle does. Every variant of a plan is executed for real in a fresh executor
session, then scored by the three strict tiers and ``state-match``: the relations compare verdicts,
never hand-made traces.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from callbench.executors.base import ExecutorSession, ToolOutcome, resolve_executor
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy
from callbench.providers.agents.oracle import answer_text
from callbench.providers.base import Provider
from callbench.scoring.state_match import StateMatchScorer
from callbench.scoring.tiers import score_tier
from callbench.suites.suite import Suite
from callbench.tools.schema import validate_arguments
from callbench.types.case import DSL_KEYS, Case
from callbench.types.contract import ToolContract
from callbench.types.dsl import parse_tool_content, placeholder_value, realize
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall
from callbench.types.trace import Trace
from callbench.types.verdict import TIERS, Verdict

CONTRACT, EXECUTION, COMPLETION = TIERS
STATE = "state-match"


@dataclass(frozen=True)
class Call:
    """One planned call: a tool, DSL arguments, and the step whose ``$ref`` values it provides."""

    tool: str
    args: dict[str, Any]
    step: str | None = None
    """Later ``$ref``s to this step id read this call's result (the first such call wins)."""
    fail: bool = False
    """The executor answers this call with a failure instead of executing it."""


def gold_plan(case: Case) -> list[Call]:
    """The case's expected steps in listed order, one call per expected instance."""
    return [Call(step.tools[0], step.arguments, step.id) for step in case.expected for _ in range(step.times)]


class Player(Provider):
    """Plays a plan one call per round, then answers with the oracle's final text."""

    name = "metamorphic"
    needs_network = False

    def __init__(self, case: Case, plan: list[Call], schemas: dict[str, dict[str, Any]]) -> None:
        self.case, self.plan, self.schemas = case, plan, schemas
        self.position = 0
        self.step_calls: dict[str, str] = {}

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        if self.position >= len(self.plan):
            return ModelTurn(text=answer_text(self.case), finish_reason="stop")
        results = {m.tool_call_id: parse_tool_content(m.content) for m in messages if m.role == "tool"}
        planned = self.plan[self.position]
        self.position += 1
        call_id = f"call_{self.position}"
        args = realize(planned.args, self._lookup(results), self.schemas.get(planned.tool))
        if planned.step is not None:
            self.step_calls.setdefault(planned.step, call_id)
        return ModelTurn(
            tool_calls=[
                ToolCall(id=call_id, name=planned.tool, arguments_raw=json.dumps(args), arguments=args)
            ],
            finish_reason="tool_calls",
        )

    def _lookup(self, results: dict[str, Any]) -> Any:
        from callbench.types.dsl import ref_lookup

        return ref_lookup(self.step_calls, results)


class FailingCalls(ExecutorSession):
    """A session that answers the planned failing calls with an error and runs the rest for real."""

    def __init__(self, inner: ExecutorSession, failing: set[int]) -> None:
        self.inner, self.failing, self.count = inner, failing, 0

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        index, self.count = self.count, self.count + 1
        if index in self.failing:
            return ToolOutcome.failure("temporarily unavailable, try again")
        return await self.inner.call(name, arguments)

    def snapshot(self) -> dict[str, Any] | None:
        return self.inner.snapshot()

    def close(self) -> None:
        self.inner.close()


@dataclass
class Judge:
    """Plays plans of one suite for real and scores them (gold states cached per case)."""

    suite: Suite
    state: StateMatchScorer = field(init=False)

    def __post_init__(self) -> None:
        self.state = StateMatchScorer(self.suite)

    def play(self, case: Case, plan: list[Call]) -> Trace:
        registry = self.suite.registry_for(case)
        offered = list(registry)
        schemas = {t.name: t.parameters for t in offered}
        # One call per round: give the episode the rounds it needs (the tiers never read max_rounds).
        bounded = case.model_copy(update={"max_rounds": len(plan) + 2, "max_calls": None})
        episode = Episode(bounded, offered, ModePolicy("production-parity"), "", registry=registry)
        executor = resolve_executor(self.suite.executor_name(case))
        with tempfile.TemporaryDirectory(prefix="callbench-meta-") as workdir:
            inner = executor.start(case, Path(workdir) / "case", self.suite)
            session = FailingCalls(inner, {i for i, c in enumerate(plan) if c.fail})
            try:
                asyncio.run(run_episode(episode, Player(case, plan, schemas), session, GenerationSettings()))
                episode.trace.final_state = session.snapshot()
            finally:
                session.close()
        return episode.trace

    def verdicts(self, case: Case, plan: list[Call]) -> dict[str, Verdict]:
        trace = self.play(case, plan)
        registry = self.suite.registry_for(case)
        out = {tier: score_tier(tier, case, trace, registry) for tier in TIERS}
        out[STATE] = self.state.score(case, trace)
        return out


# -- choosing calls and values --------------------------------------------------------------------
def valid_arguments(tool: ToolContract) -> dict[str, Any] | None:
    """Schema-valid arguments from placeholders for the required parameters (None when impossible)."""
    props = tool.parameters.get("properties", {})
    args = {key: placeholder_value(props.get(key)) for key in tool.parameters.get("required", [])}
    return None if validate_arguments(tool.provider_schema(), args) else args


def extra_tool(suite: Suite, case: Case, *, read_only: bool) -> tuple[ToolContract, dict[str, Any]] | None:
    """A tool the case does not expect (nor an equivalent, nor a follow-up of it), with valid arguments.

    Tools without required parameters come first: their call is the plainest extra call there is.
    """
    registry = suite.registry_for(case)
    expected = {t for s in case.expected for t in s.tools}
    related = expected | {e for t in expected for e in registry.equivalents(t)}
    candidates = [
        t
        for t in registry
        if t.read_only == read_only
        and t.name not in related
        and not any(f.tool in related for f in t.follow_ups())
    ]
    candidates.sort(key=lambda t: (bool(t.parameters.get("required")), t.name))
    for tool in candidates:
        args = valid_arguments(tool)
        if args is not None:
            return tool, args
    return None


def literal_keys(call: Call, tool: ToolContract | None) -> list[str]:
    """Top-level arguments given as plain literals with a schema that allows another value."""
    props = tool.parameters.get("properties", {}) if tool else {}
    return [
        k
        for k, v in call.args.items()
        if not _is_marker(v) and isinstance(props.get(k), dict) and other_values(v, props[k])
    ]


def other_values(value: Any, schema: dict[str, Any]) -> list[Any]:
    """Schema-valid values that do not match ``value`` under the argument DSL's normalisation."""
    from callbench.scoring.arguments import MatchContext, match_value

    if "enum" in schema:
        options = list(schema["enum"])
    elif isinstance(value, bool):
        options = [not value]
    elif isinstance(value, int):
        options = [value + 1, value - 1, value + 7]
    elif isinstance(value, float):
        options = [value + 0.5, value * 2 + 1]
    elif isinstance(value, str):
        options = [value + "x", "zz" + value, "other"]
    elif isinstance(value, list) and value:
        options = [value[:-1], value + value[-1:]]
    else:
        return []
    out = []
    for option in options:
        if match_value(value, option, MatchContext()) and not validate_arguments(
            {"type": "object", "properties": {"v": schema}, "required": ["v"]}, {"v": option}
        ):
            out.append(option)
    return out


def _is_marker(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in value for k in DSL_KEYS) or any(_is_marker(v) for v in value.values())
    if isinstance(value, list):
        return any(_is_marker(v) for v in value)
    return False


def references(args: Any) -> list[tuple[str, str]]:
    """(key, ref) of every top-level ``{"$ref": ...}`` argument."""
    return [(k, v["$ref"]) for k, v in args.items() if isinstance(v, dict) and set(v) == {"$ref"}]


def with_args(call: Call, **changes: Any) -> Call:
    return replace(call, args={**call.args, **changes})


# -- tallies --------------------------------------------------------------------------------------
TALLY: dict[str, Counter[str]] = {}


def count(relation: str, held: bool) -> None:
    tally = TALLY.setdefault(relation, Counter())
    tally["applied"] += 1
    tally["held"] += held


def report_lines() -> list[str]:
    width = max((len(r) for r in TALLY), default=10)
    return [
        f"{name:<{width}}  applied to {t['applied']:4d} cases, held on {t['held']:4d}"
        for name, t in sorted(TALLY.items())
    ]
