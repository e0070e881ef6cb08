"""Response cache (SQLite) and endpoint limits, through the Model wrapper."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from protocol_server import Fault, ProtocolServer
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.providers import openai_compat
from callbench.providers.cache import ResponseCache, cache_key
from callbench.providers.limits import EndpointLimits, RateBucket
from callbench.providers.model import Model, ModelOptions
from callbench.types.messages import GenerationSettings, ModelTurn


def _model(server: ProtocolServer, cache: ResponseCache | None, **options: object) -> Model:
    provider = openai_compat.make_provider(f"scripted@{server.url}")
    return Model(provider, options=ModelOptions(**options), cache=cache)  # type: ignore[arg-type]


async def _twice(model: Model, settings: GenerationSettings) -> tuple[ModelTurn, ModelTurn]:
    try:
        first = await model.generate(conversation(), [WEATHER], settings)
        second = await model.generate(conversation(), [WEATHER], settings)
        return first, second
    finally:
        await model.aclose()


def test_second_identical_request_is_served_from_cache(server: ProtocolServer, tmp_path: Path) -> None:
    first, second = asyncio.run(_twice(_model(server, ResponseCache(tmp_path / "c.sqlite")), SETTINGS))
    assert len(server.requests) == 1 and not first.cached and second.cached
    assert second.tool_calls == first.tool_calls and second.usage == first.usage
    # A new process (new cache object on the same file) also sends nothing.
    asyncio.run(_twice(_model(server, ResponseCache(tmp_path / "c.sqlite")), SETTINGS))
    assert len(server.requests) == 1


def test_cache_is_skipped_above_temperature_zero(server: ProtocolServer, tmp_path: Path) -> None:
    warm = GenerationSettings(temperature=0.7)
    asyncio.run(_twice(_model(server, ResponseCache(tmp_path / "c.sqlite")), warm))
    assert len(server.requests) == 2


def test_key_covers_everything_that_changes_the_answer() -> None:
    describe = {"provider": "openai", "model": "m", "base_url": "u"}
    base = cache_key(describe, conversation(), [WEATHER], SETTINGS)
    assert base == cache_key(dict(describe), conversation(), [WEATHER], SETTINGS)
    assert base == cache_key(
        describe, conversation(), [WEATHER], SETTINGS.model_copy(update={"timeout_s": 5})
    )
    variants = [
        cache_key({**describe, "model": "n"}, conversation(), [WEATHER], SETTINGS),
        cache_key({**describe, "base_url": "v"}, conversation(), [WEATHER], SETTINGS),
        cache_key(describe, conversation("other"), [WEATHER], SETTINGS),
        cache_key(describe, conversation(), [], SETTINGS),
        cache_key(describe, conversation(), [WEATHER], SETTINGS.model_copy(update={"max_tokens": 9})),
        cache_key(
            describe, conversation(), [WEATHER], SETTINGS.model_copy(update={"reasoning_effort": "high"})
        ),
        cache_key(describe, conversation(), [WEATHER], SETTINGS, salt="trial-2"),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_stats_and_clear(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k1", ModelTurn(text="a"), "openai", "m1")
    cache.put("k2", ModelTurn(text="b"), "openai", "m2")
    assert cache.stats()["entries"] == 2 and cache.get("k1") is not None
    assert cache.clear(model="m1") == 1 and cache.get("k1") is None and cache.stats()["entries"] == 1
    assert cache.clear() == 1 and cache.stats()["entries"] == 0


def test_max_connections_bounds_concurrent_requests() -> None:
    with ProtocolServer(latency_s=0.05) as server:
        model = _model(server, None, limits=EndpointLimits(max_connections=2))
        active = peak = 0
        original = model.provider.generate

        async def counting(*args: object) -> ModelTurn:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            try:
                return await original(*args)  # type: ignore[arg-type]
            finally:
                active -= 1

        model.provider.generate = counting  # type: ignore[method-assign]

        async def many() -> None:
            try:
                await asyncio.gather(
                    *(model.generate(conversation(str(i)), [WEATHER], SETTINGS) for i in range(8))
                )
            finally:
                await model.aclose()

        asyncio.run(many())
    assert peak == 2 and len(server.requests) == 8


def test_rpm_bucket_spaces_requests_after_the_burst() -> None:
    async def run() -> float:
        bucket = RateBucket(per_minute=600)  # 10 per second, burst of 600
        bucket.level = 1.0
        start = time.monotonic()
        for _ in range(4):
            await bucket.take(1)
        return time.monotonic() - start

    elapsed = asyncio.run(run())
    assert 0.25 <= elapsed < 0.6  # 3 waits of 0.1 s


def test_tpm_settles_with_real_usage() -> None:
    async def run() -> float:
        bucket = RateBucket(per_minute=60)  # 1 token per second
        await bucket.take(10)
        bucket.settle(+49)  # the request used 59 tokens, not 10
        return bucket.level

    assert asyncio.run(run()) < 2


def test_a_429_with_retry_after_pauses_the_whole_endpoint() -> None:
    with ProtocolServer(latency_s=0.02) as server:
        server.inject(Fault("429", retry_after=0.3))
        model = _model(server, None)
        finished: list[float] = []

        async def one(i: int) -> None:
            await asyncio.sleep(0.1 * (i > 0))  # the others start once the 429 has arrived
            await model.generate(conversation(str(i)), [WEATHER], SETTINGS)
            finished.append(time.monotonic())

        async def many() -> float:
            start = time.monotonic()
            try:
                await asyncio.gather(*(one(i) for i in range(4)))
            finally:
                await model.aclose()
            return start

        start = asyncio.run(many())
    assert len(server.requests) == 5  # one 429, then four successes: nobody else hit the limit
    assert min(finished) - start >= 0.3
