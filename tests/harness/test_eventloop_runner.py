"""The runner a run goes on: uvloop unless turned off, and the collector's thresholds restored."""

from __future__ import annotations

import asyncio
import gc

import pytest

from callbench.harness import eventloop


async def _loop_and_threshold() -> tuple[str, int]:
    return type(asyncio.get_running_loop()).__module__, gc.get_threshold()[0]


def test_a_run_goes_on_uvloop_with_a_larger_young_generation_then_restores_it() -> None:
    pytest.importorskip("uvloop")
    before = gc.get_threshold()
    module, during = eventloop.run(_loop_and_threshold())
    assert module.startswith("uvloop") and during == eventloop.YOUNG_GENERATION
    assert gc.get_threshold() == before


def test_the_environment_keeps_asyncios_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, "asyncio")
    module, _ = eventloop.run(_loop_and_threshold())
    assert module.startswith("asyncio")


def test_thresholds_are_restored_when_the_run_fails_and_a_switched_off_collector_stays_off() -> None:
    before = gc.get_threshold()

    async def boom() -> None:
        raise RuntimeError("case crashed")

    with pytest.raises(RuntimeError, match="case crashed"):
        eventloop.run(boom())
    assert gc.get_threshold() == before
    gc.set_threshold(0)
    try:
        assert eventloop.run(_loop_and_threshold())[1] == 0
    finally:
        gc.set_threshold(*before)
