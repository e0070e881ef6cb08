"""The ``Model`` wrapper: retries, per-request timeout, endpoint limits, response cache, latency.

Providers only translate a wire protocol; everything about *how often* and *how fast* to ask
lives here, so every provider gets the same policy:

* transient failures (429, 5xx, timeouts, dropped connections, truncated bodies) are retried
  with exponential backoff and full jitter, honouring ``Retry-After``, with a cap on attempts
  and on total retry time per request;
* fatal failures (400/401/403/404) are raised at once;
* whatever is still failing propagates as a ``ProviderError``: the engine records the case as
  an ``error``, never as a model failure;
* the time spent waiting on the endpoint (rate limiter, requests, retry backoff) is reported to
  the running case's :class:`EndpointWaits` (see :data:`endpoint_waits`), so that the case time
  limit never charges it to the model.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from callbench.catalog import catalog
from callbench.errors import ConfigError, ProviderError, RateLimitedError, TransientProviderError, UserError
from callbench.providers.base import Provider, provider_from_catalog
from callbench.providers.cache import ResponseCache, cache_key
from callbench.providers.limits import (
    DEFAULT_REQUEST_TIMEOUT_S,
    EndpointLimiter,
    EndpointLimits,
    estimate_tokens,
    limiter_for,
)
from callbench.providers.reachability import EndpointDownError, down_endpoints
from callbench.secrets import has_secrets, scrub, scrub_data
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn
from callbench.types.names import did_you_mean
from callbench.types.waits import EndpointWaits, endpoint_waits

if TYPE_CHECKING:
    from callbench.types.case import Case


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string ``provider[:rest]``."""

    provider: str
    rest: str

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        if not text or not text.strip():
            raise ConfigError("empty model string; use e.g. 'baseline', 'oracle' or 'openai:gpt-4o-mini'")
        provider, _, rest = text.strip().partition(":")
        return cls(provider, rest)


def make_provider(model: str) -> Provider:
    """Build the provider named by a model string through the catalog."""
    spec = ModelSpec.parse(model)
    providers = catalog().providers
    names = providers.names()
    if ":" not in model and spec.provider not in names and not did_you_mean(spec.provider, names):
        # A bare model name ("gpt-4o") is the commonest first mistake: say how to name its provider.
        raise UserError(
            f"unknown model {model!r}: write PROVIDER:MODEL, e.g. 'openai:{model}' (providers: "
            f"{', '.join(names)})"
        )
    return provider_from_catalog(spec.provider, spec.rest)


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried."""

    max_retries: int = 6
    """Retries after the first attempt (0 = never retry)."""
    max_retry_time_s: float = 300.0
    """Give up when the next wait would pass this much time since the first attempt."""
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Full-jitter exponential backoff for the ``retry``-th retry (1-based)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (retry - 1))
        return rng.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class ModelOptions:
    """Everything the wrapper needs from the run configuration."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limits: EndpointLimits = field(default_factory=EndpointLimits)
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S
    """Seconds per request (``None``: ``GenerationSettings.timeout_s``)."""
    use_cache: bool = True
    cache_path: str | None = None


Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


async def endpoint_time(pending: Awaitable[T]) -> T:
    """Await ``pending`` as time spent waiting on the endpoint (never charged to the model).

    For requests that run in a task of their own, which the running case's clock does not see: a
    judge request shared by several cases (``await endpoint_time(asyncio.shield(task))``).
    """
    waits = endpoint_waits.get()
    if waits is None:
        return await pending
    waits.begin()
    try:
        waits.note("request")
        return await pending
    finally:
        waits.end()


class Model:
    """A provider plus retry, limit, timeout and cache policy. Same ``generate`` contract."""

    def __init__(
        self,
        provider: Provider,
        settings: GenerationSettings | None = None,
        options: ModelOptions | None = None,
        cache: ResponseCache | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.provider = provider
        self.settings = settings or GenerationSettings()
        self.options = options or ModelOptions()
        self.cache = cache
        self.counters: Counter[str] = Counter()
        self.salt = ""
        """Separates cache entries of otherwise equal requests (set per trial by :meth:`with_salt`)."""
        self._sleep = sleep
        self._rng = rng or random.Random()

    @classmethod
    def from_config(
        cls, provider: Provider, config: Any, settings: GenerationSettings | None = None
    ) -> Model:
        """Build from a run configuration with ``max_retries``, ``rpm``, ``cache``... attributes."""
        options = options_from_config(config)
        cache = ResponseCache(options.cache_path) if options.use_cache and provider.needs_network else None
        return cls(provider, settings, options, cache)

    @property
    def name(self) -> str:
        return self.provider.name

    @property
    def model(self) -> str:
        return self.provider.model

    @property
    def needs_network(self) -> bool:
        return self.provider.needs_network

    def describe(self) -> dict[str, Any]:
        """The provider's description (recorded in ``run.json``)."""
        return self.provider.describe()

    def connection_key(self) -> str:
        return self.provider.connection_key()

    def for_case(self, case: Case) -> Model:
        """Same policy around ``provider.for_case(case)`` (counters are shared)."""
        inner = self.provider.for_case(case)
        if inner is self.provider:
            return self
        return self._clone(inner, self.salt)

    def with_salt(self, salt: str) -> Model:
        """The same model whose cache entries are kept apart by ``salt`` (e.g. ``"trial-2"``)."""
        return self if salt == self.salt else self._clone(self.provider, salt)

    def _clone(self, provider: Provider, salt: str) -> Model:
        clone = Model(provider, self.settings, self.options, self.cache, sleep=self._sleep, rng=self._rng)
        clone.counters, clone.salt = self.counters, salt
        return clone

    async def aclose(self) -> None:
        """Close the provider's connections and the cache."""
        await self.provider.aclose()
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    async def generate(
        self,
        messages: list[Message],
        tools: list[ToolContract],
        settings: GenerationSettings | None = None,
        salt: str | None = None,
    ) -> ModelTurn:
        """Answer from the cache, or ask the provider with retries.

        Args:
            settings: Generation settings (default: the ones given at construction).
            salt: Separates cache entries of otherwise equal requests (default: ``self.salt``).

        Raises:
            FatalProviderError: The endpoint refused the request; retrying cannot help.
            TransientProviderError: Still failing after the retry budget was spent.
        """
        settings = settings or self.settings
        if not self.provider.needs_network:
            return scrub_turn(await self._timed(self.provider.generate(messages, tools, settings)))
        key = None
        cacheable = getattr(self.provider, "cacheable", None)
        if (
            self.cache is not None
            and settings.temperature == 0
            and (cacheable is None or cacheable(settings))
        ):
            key = cache_key(
                self.provider.describe(), messages, tools, settings, self.salt if salt is None else salt
            )
            hit = self.cache.get(key)
            if hit is not None:
                self.counters["cache_hits"] += 1
                return scrub_turn(hit)  # entries stored before a key was known to be echoed
        waits = endpoint_waits.get()
        if waits is None:
            turn = await self._with_retries(messages, tools, settings, None)
        else:
            waits.begin()
            try:
                turn = await self._with_retries(messages, tools, settings, waits)
            finally:
                waits.end()
        # The one place a reply enters callbench: blank known keys before the turn is cached,
        # recorded or shown (an endpoint may echo the key inside a normal 200 reply).
        turn = scrub_turn(turn)
        if key is not None and self.cache is not None:
            self.cache.put(key, turn, self.provider.name, self.provider.model)
        return turn

    async def _with_retries(
        self,
        messages: list[Message],
        tools: list[ToolContract],
        settings: GenerationSettings,
        waits: EndpointWaits | None,
    ) -> ModelTurn:
        policy, started, retries = self.options.retry, time.monotonic(), 0
        if down_endpoints.any():  # a server found down mid-run: re-check it once, not the whole budget
            await asyncio.to_thread(down_endpoints.refuse_if_down, self.provider)
        while True:
            try:
                return await self._attempt(messages, tools, settings, waits)
            except TransientProviderError as exc:
                self.counters[f"transient:{type(exc).__name__}"] += 1
                retries += 1
                wait = exc.retry_after if exc.retry_after is not None else policy.backoff(retries, self._rng)
                spent = time.monotonic() - started
                if retries > policy.max_retries or spent + wait > policy.max_retry_time_s:
                    self.counters["gave_up"] += 1
                    down = await asyncio.to_thread(down_endpoints.mark_if_down, self.provider)
                    if down is not None:
                        # Say why in the record: the server is gone, not merely slow.
                        raise EndpointDownError(
                            scrub(
                                f"the model server at {self.provider.endpoint_url()} stopped accepting "
                                f"connections during the run ({down}); gave up after {retries} "
                                f"attempt(s) in {spent:.1f}s"
                            )
                        ) from None
                    raise type(exc)(
                        scrub(f"{exc} (gave up after {retries} attempt(s) in {spent:.1f}s)"),
                        retry_after=exc.retry_after,
                    ) from None
                if down_endpoints.any():  # another request found the server gone: stop waiting for it
                    await asyncio.to_thread(down_endpoints.refuse_if_down, self.provider)
                self.counters["retries"] += 1
                if isinstance(exc, RateLimitedError) and exc.retry_after:
                    limiter_of(self).pause(exc.retry_after)
                if waits is not None:
                    waits.failed(str(exc))
                    waits.note("retry backoff")
                await self._sleep(wait)
            except ProviderError as exc:
                self.counters[f"fatal:{type(exc).__name__}"] += 1
                raise

    async def _attempt(
        self,
        messages: list[Message],
        tools: list[ToolContract],
        settings: GenerationSettings,
        waits: EndpointWaits | None,
    ) -> ModelTurn:
        limiter = limiter_for(self.provider.connection_key(), self.options.limits)
        estimate = estimate_tokens(sum(len(m.content) for m in messages)) + settings.max_tokens // 8
        if waits is not None:
            waits.note("rate limiter or connection slot")
        await limiter.acquire(estimate)
        used: int | None = None
        try:
            if waits is not None:
                waits.note("request")
            turn = await self._timed(self._request(messages, tools, settings))
            if turn.usage is not None:
                used = turn.usage.input_tokens + turn.usage.output_tokens
            return turn
        finally:
            limiter.release(estimate, used)

    async def _request(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        timeout = self.options.request_timeout_s or settings.timeout_s
        self.counters["requests"] += 1
        try:
            # asyncio.timeout, unlike wait_for, does not wrap the request in another task.
            async with asyncio.timeout(timeout):
                return await self.provider.generate(messages, tools, settings)
        except TimeoutError:
            raise TransientProviderError(f"{self.provider.name}: no answer within {timeout:g}s") from None

    @staticmethod
    async def _timed(pending: Awaitable[ModelTurn]) -> ModelTurn:
        start = time.perf_counter()
        turn = await pending
        if turn.latency_ms is None:
            turn.latency_ms = (time.perf_counter() - start) * 1000.0
        return turn


def scrub_turn(turn: ModelTurn) -> ModelTurn:
    """``turn`` with every known secret blanked in its text, calls, reasoning and model name.

    Returns ``turn`` itself when it holds no known secret (the usual case, and free when no key
    was ever read).
    """
    if not has_secrets():
        return turn
    data = turn.model_dump()
    cleaned = scrub_data(data)
    return turn if cleaned is data else ModelTurn.model_validate(cleaned)


def options_from_config(config: Any) -> ModelOptions:
    """Read the run configuration fields the wrapper needs (missing ones keep defaults)."""
    default = ModelOptions()

    def pick(name: str, fallback: Any) -> Any:
        value = getattr(config, name, None)
        return fallback if value is None else value

    retry = RetryPolicy(
        max_retries=int(pick("max_retries", default.retry.max_retries)),
        max_retry_time_s=float(pick("max_retry_time_s", default.retry.max_retry_time_s)),
    )
    limits = EndpointLimits(
        max_connections=pick("max_connections", None), rpm=pick("rpm", None), tpm=pick("tpm", None)
    )
    cache_path = pick("cache_path", None)
    request_timeout = pick("request_timeout_s", default.request_timeout_s)
    if (
        isinstance(request_timeout, bool)
        or not isinstance(request_timeout, (int, float))
        or request_timeout <= 0
    ):
        raise ConfigError(
            f"request_timeout_s (--request-timeout) must be a positive number of seconds, "
            f"got {request_timeout!r}"
        )
    return ModelOptions(
        retry=retry,
        limits=limits,
        request_timeout_s=float(request_timeout),
        use_cache=bool(pick("cache", True)),
        cache_path=str(cache_path) if cache_path else None,
    )


def limiter_of(model: Model) -> EndpointLimiter:
    """The limiter a model uses in the running loop (for tests and diagnostics)."""
    return limiter_for(model.connection_key(), model.options.limits)


def build_model(model: str, config: object | None = None) -> Model:
    """The model for a run: provider from the model string, wrapped with the run's options."""
    settings = getattr(config, "settings", None) or GenerationSettings()
    provider = make_provider(model)
    if settings.stream and not _streams(provider):
        raise ConfigError(
            f"--stream: {model!r} does not stream its answers (streaming applies to HTTP endpoints: "
            "openai:, openai-responses:, anthropic: and their presets); drop --stream"
        )
    refused = provider.refused_setting(settings)
    if refused:
        raise ConfigError(refused)
    if config is None:
        return Model(provider, settings)
    return Model.from_config(provider, config, settings)


def _streams(provider: Provider) -> bool:
    """The provider reads streamed answers (prompt mode streams through the provider it wraps)."""
    inner = getattr(provider, "inner", None)
    return provider.streams or (isinstance(inner, Provider) and inner.streams)
