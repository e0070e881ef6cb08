"""A scripted provider for tests, examples and smoke runs: replies from a list or a function.

Register an instance under a name to use it through a model string::

    provider = ScriptedProvider([tool_call_turn("get_weather", {"city": "Paris"}), text_turn("Done.")])
    catalog().providers.register("my-script", lambda spec: provider, replace=True)
    callbench.run("starter", "my-script", case_ids=["weather_paris"])
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

from callbench.providers.base import Provider
from callbench.providers.wire import parse_arguments
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

Responder = Callable[[list[Message], list[ToolContract]], ModelTurn]
_ids = itertools.count(1)


def tool_call_turn(
    name: str, arguments: dict[str, Any] | str, *more: tuple[str, dict[str, Any] | str]
) -> ModelTurn:
    """A turn with one or more calls; a string argument is sent raw (it may be malformed JSON on purpose)."""
    calls = []
    for tool, args in ((name, arguments), *more):
        raw = args if isinstance(args, str) else json.dumps(args)
        parsed, error = parse_arguments(raw)
        calls.append(
            ToolCall(
                id=f"scripted_{next(_ids)}", name=tool, arguments_raw=raw, arguments=parsed, parse_error=error
            )
        )
    return ModelTurn(tool_calls=calls, model="scripted", finish_reason="tool_calls")


def text_turn(text: str) -> ModelTurn:
    return ModelTurn(text=text, model="scripted", finish_reason="stop")


class ScriptedProvider(Provider):
    """Replies with the next scripted turn (per case), or by calling ``responder(messages, tools)``.

    ``history`` keeps every request it received (messages and offered tool names).
    """

    name = "scripted"
    model = "scripted"
    needs_network = False

    def __init__(self, turns: Sequence[ModelTurn] | Responder, *, per_case: bool = True) -> None:
        self.turns = turns
        self.per_case = per_case
        self.history: list[dict[str, Any]] = []
        self._position = 0

    def for_case(self, case: Case) -> Provider:
        if not self.per_case or callable(self.turns):
            return self
        fresh = ScriptedProvider(self.turns, per_case=False)
        fresh.history = self.history
        return fresh

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        self.history.append(
            {"messages": [m.model_copy() for m in messages], "tools": [t.name for t in tools]}
        )
        if callable(self.turns):
            return self.turns(messages, tools)
        if self._position >= len(self.turns):
            return text_turn("")
        turn = self.turns[self._position]
        self._position += 1
        return turn.model_copy(deep=True)
