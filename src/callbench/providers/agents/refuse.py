"""The ``refuse`` agent: answers in text only; must score 0 on every case that expects a call."""

from __future__ import annotations

from callbench.errors import ConfigError
from callbench.providers.base import Provider
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn


class RefuseAgent(Provider):
    name = "refuse"
    model = "refuse"
    needs_network = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        return ModelTurn(
            text="I will not call any tool for this request.", model="refuse", finish_reason="stop"
        )


def make_provider(spec: str) -> Provider:
    if spec:
        raise ConfigError(f"the refuse agent takes no options (got {spec!r})")
    return RefuseAgent()
