"""Drive a provider through a tool loop against the protocol server (shared by the Chat Completions tests)."""

from __future__ import annotations

import asyncio
from typing import Any

from protocol_server import Api, Turn
from provider_helpers import WEATHER, conversation

from callbench.providers.base import Provider
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn

CLOCK = ToolContract(
    name="clock",
    description="The time in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def two_calls_then_text(api: Api, body: dict[str, Any]) -> Turn:
    """Two parallel calls (both tools) until tool results arrive, then a text answer."""
    if (body.get("messages") or [{}])[-1].get("role") == "tool":
        return Turn(text="done")
    return Turn(calls=[("weather_get", '{"city": "Paris"}'), ("clock", '{"city": "Oslo"}')])


def tool_loop(
    provider: Provider,
    settings: GenerationSettings,
    rounds: int = 2,
    tools: list[ToolContract] | None = None,
    forget: bool = False,
) -> list[ModelTurn]:
    """Play ``rounds`` requests: each answer's calls get a result and the conversation goes on.

    ``forget`` plays a careless client that sends the calls back without their provider data
    (thought signatures), to show what the server does then.
    """

    async def play() -> list[ModelTurn]:
        messages = conversation()
        turns: list[ModelTurn] = []
        try:
            for _ in range(rounds):
                turn = await provider.generate(messages, tools or [WEATHER, CLOCK], settings)
                turns.append(turn)
                if not turn.tool_calls:
                    break
                if forget:
                    calls = [c.model_copy(update={"provider_data": None}) for c in turn.tool_calls]
                    turn = turn.model_copy(update={"tool_calls": calls})
                messages = [
                    *messages,
                    Message.assistant(turn),
                    *(Message.tool(c, '{"ok": true}') for c in turn.tool_calls),
                ]
        finally:
            await provider.aclose()
        return turns

    return asyncio.run(play())
