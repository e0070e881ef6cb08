"""The provider contract: one async ``generate(messages, tools, settings) -> ModelTurn``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from callbench.errors import UserError
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn

if TYPE_CHECKING:
    from callbench.types.case import Case


class Provider(ABC):
    """A model (or built-in agent) that answers a conversation with text and/or tool calls.

    Real model providers translate to and from their wire protocol and raise ``ProviderError``
    subclasses for infrastructure failures. Retries, rate limits and caching live in
    :class:`callbench.providers.model.Model`, not here.
    """

    name: str = "provider"
    model: str = ""
    needs_network: bool = True
    streams: bool = False
    """Whether ``--stream`` applies: the provider reads streamed answers (HTTP endpoints do)."""
    """False for built-in agents: they are never cached or rate limited."""

    @abstractmethod
    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        """Answer the conversation. Malformed model output is returned, not raised."""

    def for_case(self, case: Case) -> Provider:
        """A provider for one case. Built-in agents that play a gold path override this."""
        return self

    def connection_key(self) -> str:
        """Requests sharing a key share connection and rate limits (default: one per provider)."""
        return self.name

    def endpoint_url(self) -> str | None:
        """The base URL requests go to, checked for a listening server before a run (``None``: no
        endpoint, as for built-in agents and local models; the check is skipped)."""
        return None

    def describe(self) -> dict[str, Any]:
        """What to record in ``run.json`` (never secrets)."""
        return {"provider": self.name, "model": self.model}

    def refused_setting(self, settings: GenerationSettings) -> str | None:
        """Why this endpoint cannot honour ``settings`` as asked (``None``: it can). Checked before
        the run, so a control the endpoint would quietly replace stops with one line instead."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release network clients."""


def provider_from_catalog(name: str, spec: str) -> Provider:
    """The provider the catalog's factory ``name`` builds for ``spec``, checked to be a :class:`Provider`
    (the catalog's ``ProviderFactory`` Protocol describes only what it can name below this layer)."""
    from callbench.catalog import catalog

    provider = catalog().providers.get(name)(spec)
    if not isinstance(provider, Provider):
        raise UserError(f"provider {name!r}: its factory returned {type(provider).__name__}, not a Provider")
    return provider
