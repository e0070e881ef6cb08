"""Small builders shared by the provider tests."""

from __future__ import annotations

from typing import Any

from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message

WEATHER = ToolContract(
    name="weather.get",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
)
SETTINGS = GenerationSettings(max_tokens=256, seed=7)


def conversation(text: str = "Weather in Paris?") -> list[Message]:
    return [Message.system("You call tools."), Message.user(text)]


def openai_body(message: dict[str, Any], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "model": "m-1",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 3, "completion_tokens": 2},
    }
