"""A scripted agent for BFCL multi-turn tests: plays each turn's ground truth, then answers."""

from __future__ import annotations

import inspect
import json
from typing import Any

from callbench.benchmarks.bfcl.backend import World, parse_call
from callbench.providers.base import Provider
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall


class GoldTurnAgent(Provider):
    """Emits all ground-truth calls of the current user turn in one round, then a text answer.

    ``skip_turns`` lists turn indexes where it answers without calling (to test failures);
    ``loop_forever`` makes it call ``pwd``-like harmless tools forever (tests the step cap).
    """

    name = "bfcl-gold"
    model = "bfcl-gold"
    needs_network = False  # its answers depend on the case, not only the messages: never cache them

    def __init__(self, case, skip_turns=(), loop_tool: str | None = None) -> None:
        config = case.executor_config
        self.truth = case.metadata["bfcl"]["ground_truth"]
        self.world = World(config["involved_classes"], config["initial_config"], config["long_context"])
        self.skip_turns = set(skip_turns)
        self.loop_tool = loop_tool
        self.counter = 0

    def _kwargs(self, text: str) -> tuple[str, dict[str, Any]]:
        name, args, kwargs = parse_call(text)
        params = list(inspect.signature(self.world.methods[name]).parameters)
        return name, {**dict(zip(params, args, strict=False)), **kwargs}

    async def generate(self, messages: list[Message], tools, settings: GenerationSettings) -> ModelTurn:
        turn = sum(1 for m in messages if m.role == "user") - 1
        since_user = 0
        for message in reversed(messages):
            if message.role == "user":
                break
            since_user += message.role == "assistant"
        if self.loop_tool:
            return self._turn([(self.loop_tool, {})])
        if since_user == 0 and turn < len(self.truth) and self.truth[turn] and turn not in self.skip_turns:
            return self._turn([self._kwargs(text) for text in self.truth[turn]])
        return ModelTurn(text="Done.")

    def _turn(self, calls) -> ModelTurn:
        out = []
        for name, kwargs in calls:
            self.counter += 1
            out.append(
                ToolCall(id=f"c{self.counter}", name=name, arguments_raw=json.dumps(kwargs), arguments=kwargs)
            )
        return ModelTurn(tool_calls=out)


class GoldTurnProvider(Provider):
    """Catalog-style provider binding :class:`GoldTurnAgent` to each case (for engine-level tests)."""

    name = "bfcl-gold"
    model = "bfcl-gold"
    needs_network = False

    async def generate(self, messages, tools, settings):  # pragma: no cover - always bound per case
        raise RuntimeError("bind with for_case()")

    def for_case(self, case):
        return GoldTurnAgent(case)


def register_gold_provider() -> None:
    """Register ``bfcl-gold`` in the process-wide catalog."""
    from callbench.catalog import catalog

    providers = catalog().providers
    if "bfcl-gold" not in providers:
        providers.register("bfcl-gold", lambda spec: GoldTurnProvider())
