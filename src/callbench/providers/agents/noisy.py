"""The ``noisy:SEED[:MUTATION]`` agent: the gold path with one seeded mistake per case.

Each mistake is one a real model makes; the evaluator must catch every one with the right reason
code. Without a forced mutation, a seeded draw picks one (or none, about one case in four). The
draw is per case, except that cases naming the same ``metadata["task_key"]`` (arms of one task)
share it (see :func:`draw_key`).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

from callbench.errors import ConfigError
from callbench.providers.agents.oracle import PlannedCall, PlanPlayer, answer_text, gold_plan
from callbench.providers.base import Provider
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.dsl import placeholder_value
from callbench.types.hashing import sha256_of
from callbench.types.messages import GenerationSettings, Message, ModelTurn

Plan = list[list[PlannedCall]]
MUTATIONS = (
    "wrong_tool",
    "wrong_value",
    "missing_key",
    "extra_key",
    "schema_invalid_value",
    "unexpected_call",
    "early_stop",
    "prose_call",
)


class NoisyAgent(Provider):
    name = "noisy"
    needs_network = False

    def __init__(self, seed: int, mutation: str | None) -> None:
        self.seed = seed
        self.mutation = mutation
        self.model = f"noisy:{seed}" + (f":{mutation}" if mutation else "")

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        raise ConfigError("the noisy agent must be bound to a case with for_case()")

    def for_case(self, case: Case) -> Provider:
        rng = random.Random(int(sha256_of(f"{self.seed}:{draw_key(case)}")[:16], 16))
        choice = self.mutation or rng.choice(MUTATIONS + ("none", "none", "none"))
        return MutatingPlayer(case, choice, rng)


def draw_key(case: Case) -> str:
    """What the mistake is drawn from: the case key, or ``suite:task_key`` for cases that declare one.

    Cases sharing ``metadata["task_key"]`` are arms of one underlying task (the DAG suite's
    restatement arms): they must get the same mistake, or a paired arm comparison would measure
    the draw instead of the arm. A task key equal to the case id draws exactly as the case key.
    """
    task_key = case.metadata.get("task_key")
    return f"{case.suite}:{task_key}" if isinstance(task_key, str) and task_key else case.key


class MutatingPlayer(PlanPlayer):
    """Applies the mutation lazily, on the first request, when the offered tools are known."""

    def __init__(self, case: Case, mutation: str, rng: random.Random) -> None:
        super().__init__(
            case=case, plan=gold_plan(case), final_text=answer_text(case), label=f"noisy:{mutation}"
        )
        self.mutation = mutation
        self.rng = rng
        self.applied = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        if not self.applied:
            self.applied = True
            self.label = f"noisy:{self.mutation}"
            if self.mutation != "none":
                self.label = f"noisy:{_apply(self, self.mutation, tools)}"
        return await super().generate(messages, tools, settings)


def _apply(player: MutatingPlayer, mutation: str, tools: list[ToolContract]) -> str:
    """Apply ``mutation`` (or the first applicable fallback); returns the mutation actually applied."""
    order = [mutation] + [m for m in MUTATIONS if m != mutation]
    for name in order:
        if MUTATORS[name](player, tools):
            return name
    return "none"


def _pick_call(player: MutatingPlayer, predicate: Callable[[PlannedCall], bool]) -> PlannedCall | None:
    calls = [c for turn in player.plan for c in turn if predicate(c)]
    return player.rng.choice(calls) if calls else None


def _literal_keys(call: PlannedCall) -> list[str]:
    return [k for k, v in call.arguments.items() if not k.startswith("$") and not isinstance(v, dict)]


def _wrong_tool(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    call = _pick_call(p, lambda c: True)
    expected = {t for turn in p.plan for c in turn if c.step for t in c.step.tools}
    others = [t for t in tools if t.name not in expected]
    if call is None or not others:
        return False
    call.tool = p.rng.choice(others).name
    return True


def _wrong_value(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    call = _pick_call(p, lambda c: bool(_literal_keys(c)))
    if call is None:
        return False
    key = p.rng.choice(_literal_keys(call))
    call.arguments = dict(call.arguments)
    call.arguments[key] = _perturb(call.arguments[key])
    return True


def _perturb(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + "_wrong"
    if isinstance(value, list):
        return list(reversed(value)) + ["wrong"]
    return "wrong"


def _missing_key(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    def droppable(c: PlannedCall) -> list[str]:
        return [
            k
            for k, v in c.arguments.items()
            if not k.startswith("$") and not (isinstance(v, dict) and "$default" in v)
        ]

    call = _pick_call(p, lambda c: bool(droppable(c)))
    if call is None:
        return False
    key = p.rng.choice(droppable(call))
    call.arguments = {k: v for k, v in call.arguments.items() if k != key}
    return True


def _extra_key(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    call = _pick_call(p, lambda c: True)
    if call is None:
        return False
    call.arguments = {**call.arguments, "unexpected_extra_key": "surplus"}
    return True


def _schema_invalid_value(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    schemas = {t.name: t.parameters.get("properties", {}) for t in tools}

    def typed_keys(c: PlannedCall) -> list[str]:
        props = schemas.get(c.tool, {})
        return [
            k
            for k in c.arguments
            if isinstance(props.get(k), dict)
            and props[k].get("type") in ("string", "integer", "number", "boolean", "array", "object")
        ]

    call = _pick_call(p, lambda c: bool(typed_keys(c)))
    if call is None:
        return False
    key = p.rng.choice(typed_keys(call))
    kind = schemas[call.tool][key]["type"]
    call.arguments = {
        **call.arguments,
        key: {"string": 12345, "array": "not-a-list", "object": "not-an-object"}.get(
            kind, "not-a-number" if kind != "boolean" else "maybe"
        ),
    }
    return True


def _unexpected_call(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    expected = {t for turn in p.plan for c in turn if c.step for t in c.step.tools}
    candidates = [t for t in tools if not t.read_only and t.name not in expected and not t.follow_up_of]
    if not candidates:
        return False
    tool = p.rng.choice(candidates)
    args = _valid_arguments(tool)
    p.plan.insert(p.rng.randint(0, len(p.plan)), [PlannedCall(None, tool.name, args, literal=True)])
    return True


def _valid_arguments(tool: ToolContract) -> dict[str, Any]:
    props = tool.parameters.get("properties", {})
    return {k: placeholder_value(props.get(k)) for k in tool.parameters.get("required", [])}


def _early_stop(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    if not p.plan:
        return False
    p.plan = p.plan[: len(p.plan) // 2]
    return True


def _prose_call(p: MutatingPlayer, tools: list[ToolContract]) -> bool:
    turn = next((calls for calls in p.plan if calls), None)  # a conversation may open with text only
    if turn is None:
        return False
    first = turn[0]
    args = copy.deepcopy(first.arguments)
    p.prose = f"I would call {first.tool} with {json.dumps(args, default=str)} to do this."
    return True


MUTATORS: dict[str, Callable[[MutatingPlayer, list[ToolContract]], bool]] = {
    "wrong_tool": _wrong_tool,
    "wrong_value": _wrong_value,
    "missing_key": _missing_key,
    "extra_key": _extra_key,
    "schema_invalid_value": _schema_invalid_value,
    "unexpected_call": _unexpected_call,
    "early_stop": _early_stop,
    "prose_call": _prose_call,
}


def make_provider(spec: str) -> Provider:
    """``noisy:SEED`` or ``noisy:SEED:MUTATION`` (one of the mutation names)."""
    seed_text, _, mutation = spec.partition(":")
    try:
        seed = int(seed_text or "0")
    except ValueError:
        raise ConfigError(f"noisy agent: seed must be an integer, got {seed_text!r}") from None
    if mutation and mutation not in MUTATIONS:
        raise ConfigError(f"noisy agent: unknown mutation {mutation!r} (one of {', '.join(MUTATIONS)})")
    return NoisyAgent(seed, mutation or None)
