"""The ``planner`` agent: solves DAG tasks from what a model sees, never from the hidden graph.

It reads only the offered tools (names, descriptions, parameter lists, their order), the user
prompt and the tool results in the conversation, and rebuilds its state from them on every turn:

1. Each description gives the input types (in parameter order) and the output type; an exact
   type match links a producer to its consumers, so the dependency graph can be read back.
2. Prompt values give the first known types; each ``Variable x = v.`` result gives the called
   function's output type.
3. When a description names the target variable (named style, or the ``target_visible`` flag),
   the planner calls exactly the target's ancestors, layer by layer, in parallel.
4. Otherwise it calls, in parallel, every callable function that is certainly needed (one with
   several inputs, or an ancestor of one: distractors always have exactly one input), and when
   none is left, one callable function at a time, preferring the one listed first in the
   generator's order. That order is recovered by inverting the official fixed shuffle (seed
   42), which puts core functions first: a real leak of the official tool order (documented in
   ``docs/dag-tasks.md``). With ``seeded_shuffle`` the preference is arbitrary and efficiency
   can drop below 1, but every task is still solved within the call cap unless distractors
   outnumber the slack.
5. As soon as a result names the target variable, it answers ``<target> = <value>``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from functools import cached_property

from callbench.plugin import (
    ConfigError,
    GenerationSettings,
    Message,
    ModelTurn,
    Provider,
    ToolCall,
    ToolContract,
)

_GROUP = re.compile(r"\(([^()]*)\)")
_OUTPUT_NAME = re.compile(r"to produce variable (\w+)")
_TARGET = re.compile(r"value of variable (\w+)")
_PROMPT_VALUE = re.compile(r"^Variable (\w+) = (-?\d+)\s*$", re.MULTILINE)
_RESULT = re.compile(r"^Variable (\w+) = (-?\d+)\.")
OFFICIAL_SHUFFLE_SEED = 42


@dataclass
class Function:
    """One tool as the planner understands it."""

    name: str
    params: list[str]
    input_types: list[str]
    output_type: str
    output_name: str | None
    rank: int
    """Position in the generator's order before the official shuffle (lower first)."""


@dataclass
class Beliefs:
    """Everything inferred from the conversation so far."""

    functions: dict[str, Function]
    target: str
    values: dict[str, int] = field(default_factory=dict)
    """Type -> value obtained from the prompt or a correct result."""
    called: set[str] = field(default_factory=set)
    target_value: int | None = None

    @cached_property
    def producer(self) -> dict[str, str]:
        """Type -> the function that outputs it."""
        return {f.output_type: f.name for f in self.functions.values()}

    def callable(self) -> list[Function]:
        return [
            f
            for f in self.functions.values()
            if f.name not in self.called and all(t in self.values for t in f.input_types)
        ]

    def ancestors(self, name: str) -> set[str]:
        producer, seen = self.producer, set()
        stack = [name]
        while stack:
            for kind in self.functions[stack.pop()].input_types:
                prod = producer.get(kind)
                if prod is not None and prod not in seen:
                    seen.add(prod)
                    stack.append(prod)
        return seen


def parse_tools(tools: list[ToolContract]) -> dict[str, Function]:
    """Read each tool's parameter list and typed description."""
    ranks = official_ranks(len(tools))
    out = {}
    for position, tool in enumerate(tools):
        head, sep, tail = tool.description.partition(" to produce ")
        outputs = _GROUP.findall(tail)
        params = list((tool.parameters.get("properties") or {}).keys())
        inputs = _GROUP.findall(head)
        if not sep or not outputs or len(inputs) != len(params):
            continue  # not a DAG tool: never called
        name_match = _OUTPUT_NAME.search(tail)
        out[tool.name] = Function(
            tool.name,
            params,
            inputs,
            outputs[-1],
            name_match.group(1) if name_match else None,
            ranks[position],
        )
    return out


def official_ranks(n: int) -> list[int]:
    """For each offered position, the index before the official ``Random(42).shuffle``."""
    order = list(range(n))
    random.Random(OFFICIAL_SHUFFLE_SEED).shuffle(order)
    return order


def read_conversation(messages: list[Message], tools: list[ToolContract]) -> Beliefs:
    """Rebuild the beliefs from the prompt and every tool result so far."""
    functions = parse_tools(tools)
    prompt = next((m.content for m in messages if m.role == "user"), "")
    target = _TARGET.search(prompt)
    beliefs = Beliefs(functions, target.group(1) if target else "")
    param_type = {p: t for f in functions.values() for p, t in zip(f.params, f.input_types, strict=True)}
    for name, value in _PROMPT_VALUE.findall(prompt):
        if name in param_type:
            beliefs.values[param_type[name]] = int(value)
    called_by_id = {c.id: c.name for m in messages if m.role == "assistant" for c in m.tool_calls}
    for message in messages:
        if message.role == "tool" and called_by_id.get(message.tool_call_id or "") in functions:
            _absorb(beliefs, functions[called_by_id[message.tool_call_id or ""]], message.content)
    return beliefs


def _absorb(beliefs: Beliefs, function: Function, content: str) -> None:
    beliefs.called.add(function.name)
    try:
        text = json.loads(content)
    except (json.JSONDecodeError, ValueError):
        text = content
    match = _RESULT.match(text if isinstance(text, str) else "")
    if match is None:
        return
    beliefs.values[function.output_type] = int(match.group(2))
    if match.group(1) == beliefs.target:
        beliefs.target_value = int(match.group(2))


def next_calls(beliefs: Beliefs) -> list[Function]:
    """The functions to call this turn (empty: nothing more can be done)."""
    ready = beliefs.callable()
    named = [f for f in beliefs.functions.values() if f.output_name == beliefs.target]
    if named:
        needed = beliefs.ancestors(named[0].name) | {named[0].name}
        return [f for f in ready if f.name in needed]
    certain: set[str] = set()
    for f in beliefs.functions.values():
        if len(f.input_types) > 1:
            certain |= beliefs.ancestors(f.name) | {f.name}
    sure = [f for f in ready if f.name in certain]
    if sure:
        return sure
    return sorted(ready, key=lambda f: f.rank)[:1]


class PlannerAgent(Provider):
    """Catalog entry ``planner``: stateless, so one instance serves every case."""

    name = "planner"
    model = "planner"
    needs_network = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        return plan_turn(messages, tools)


def plan_turn(messages: list[Message], tools: list[ToolContract]) -> ModelTurn:
    """The planner's next turn for this conversation."""
    beliefs = read_conversation(messages, tools)
    if beliefs.target_value is not None:
        return ModelTurn(
            text=f"{beliefs.target} = {beliefs.target_value}", model="planner", finish_reason="stop"
        )
    calls = next_calls(beliefs)
    if not calls:
        return ModelTurn(text=f"I could not compute {beliefs.target}.", model="planner", finish_reason="stop")
    turn = sum(1 for m in messages if m.role == "assistant") + 1
    out = []
    for index, function in enumerate(calls):
        args = {p: beliefs.values[t] for p, t in zip(function.params, function.input_types, strict=True)}
        out.append(
            ToolCall(
                id=f"plan_{turn}_{index}", name=function.name, arguments_raw=json.dumps(args), arguments=args
            )
        )
    return ModelTurn(tool_calls=out, model="planner", finish_reason="tool_calls")


def make_provider(spec: str) -> Provider:
    """Catalog factory: ``planner`` takes no options."""
    if spec:
        raise ConfigError(f"the planner agent takes no options (got {spec!r})")
    return PlannerAgent()
