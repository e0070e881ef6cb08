"""The Python API; each function mirrors a CLI command.

:func:`evaluate` is the typed entry point: a suite (a spec or a :class:`~callbench.suites.suite.Suite`
built in code), a model (a model string or a :class:`~callbench.providers.base.Provider` built in code),
and the option groups of :mod:`callbench.harness.config`. :func:`run` is the friendly alias that takes
the same options as flat keywords (``out_dir=..., case_ids=[...], cache=False``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

from callbench.executors.base import Executor
from callbench.harness import eventloop
from callbench.harness.config import (
    EngineLimits,
    ModelRef,
    Output,
    ProgressMode,
    RunConfig,
    Selection,
    SuiteRef,
    TierRef,
    split_options,
)
from callbench.harness.engine import RunResult
from callbench.harness.modes import HarnessMode
from callbench.types.messages import GenerationSettings

__all__ = [
    "EngineLimits",
    "GenerationSettings",
    "Output",
    "RunOptions",
    "RunResult",
    "Selection",
    "evaluate",
    "evaluate_async",
    "load_records",
    "load_runs",
    "load_verdicts",
    "run",
    "run_async",
    "score_run",
]


async def evaluate_async(
    suite: SuiteRef | Sequence[SuiteRef] = (),
    model: ModelRef = "baseline",
    *,
    tiers: TierRef | Sequence[TierRef] = (),
    mode: HarnessMode = "production-parity",
    agent: str | None = None,
    selection: Selection | None = None,
    limits: EngineLimits | None = None,
    generation: GenerationSettings | Mapping[str, Any] | None = None,
    output: Output | None = None,
    observers: Sequence[Any] = (),
) -> RunResult:
    """Run a benchmark (async); see :func:`evaluate`."""
    from callbench.harness.engine import run_async as engine_run

    config = RunConfig.from_groups(
        suite,
        model,
        tiers,
        mode,
        agent=agent,
        selection=selection,
        limits=limits,
        generation=generation,
        output=output,
    )
    return await engine_run(config, [*_display(config), *observers])


def evaluate(
    suite: SuiteRef | Sequence[SuiteRef] = (),
    model: ModelRef = "baseline",
    *,
    tiers: TierRef | Sequence[TierRef] = (),
    mode: HarnessMode = "production-parity",
    agent: str | None = None,
    selection: Selection | None = None,
    limits: EngineLimits | None = None,
    generation: GenerationSettings | Mapping[str, Any] | None = None,
    output: Output | None = None,
    observers: Sequence[Any] = (),
) -> RunResult:
    """Run suites against a model, score every case, and return the :class:`RunResult`.

    Args:
        suite: a suite spec (``"starter"``, ``"dag:n_core=5"``, a path), a ``Suite`` object, or a list
            mixing both; empty = the default suite an installed plugin declares.
        model: a model string (``"oracle"``, ``"openai:gpt-4o-mini"``) or a ``Provider`` object.
        tiers: scorer names or scorer factories ``f(suite)``; empty = each suite's default scorers;
            ``"all"`` = the suite's scorers plus the strict tiers where they apply (mixes with names).
        mode: ``"production-parity"`` or ``"oracle-assisted"`` (``"agent-under-test"`` with ``agent``).
        agent: the user's agent application instead of a model (``"cmd:COMMAND"``, ``"http:URL"``,
            ``"py:module:function"``); its cases' tools are served over MCP (docs/agents.md).
        selection, limits, generation, output: the option groups (``None``: their defaults).
        observers: run observers (see :class:`callbench.harness.observer.RunObserver`).

    Raises:
        ConfigError: a bad option (one line naming the field).
    """
    pending = evaluate_async(
        suite,
        model,
        tiers=tiers,
        mode=mode,
        agent=agent,
        selection=selection,
        limits=limits,
        generation=generation,
        output=output,
        observers=observers,
    )
    return eventloop.run(pending)


def _display(config: RunConfig) -> list[Any]:
    """Progress display observers, unless the run is quiet (the API's default)."""
    if config.progress == "quiet" and not config.watch:
        return []
    from callbench.report.progress import make_observers

    return make_observers(config)


class RunOptions(TypedDict, total=False):
    """The flat keywords of :func:`run`: the option groups' fields, ``settings``, ``harness_mode`` and
    ``agent``."""

    harness_mode: HarnessMode
    agent: str
    settings: GenerationSettings | Mapping[str, Any]
    case_ids: Sequence[str]
    limit: int | None
    trials: int
    k: int | str | None
    executor: str | Executor | None
    suite_options: Mapping[str, Any]
    data: str | Path | None
    registry: str | Path | None
    tools: str | None
    record: str | Path | None
    replay: str | Path | None
    replay_miss: Literal["strict", "live", "model-visible"]
    agent_model_proxy: str | Mapping[str, str]
    agent_otel: bool
    tools_isolation: Literal["case", "run", "shared"] | None
    user_model: str | None
    user_seed: int
    user_temperature: float
    shuffle: int | None
    case_timeouts: Mapping[str, float]
    recover_text_calls: bool
    size_limits: Mapping[str, int | str]
    concurrency: int
    delay_s: float
    rpm: float | None
    tpm: float | None
    max_connections: int | None
    max_retries: int
    max_retry_time_s: float
    request_timeout_s: float | None
    cache: bool
    cache_path: str | Path | None
    price_table: str | Path | None
    backend: Literal["local", "ray"]
    ray_address: str | None
    ray_workers: int | None
    out_dir: str | Path | None
    runs_root: str | Path
    resume: bool
    progress: ProgressMode
    watch: bool
    preflight: bool
    otel: str | None
    otel_content: bool


async def run_async(
    suite: SuiteRef | Sequence[SuiteRef] = (),
    model: ModelRef = "baseline",
    tier: TierRef | Sequence[TierRef] = (),
    *,
    observers: Sequence[Any] = (),
    **options: Unpack[RunOptions],
) -> RunResult:
    """:func:`run`, async."""
    return await evaluate_async(suite, model, tiers=tier, observers=observers, **split_options(options))


def run(
    suite: SuiteRef | Sequence[SuiteRef] = (),
    model: ModelRef = "baseline",
    tier: TierRef | Sequence[TierRef] = (),
    *,
    observers: Sequence[Any] = (),
    **options: Unpack[RunOptions],
) -> RunResult:
    """Run a benchmark and return its :class:`RunResult` (folder, summary, records): :func:`evaluate`
    with the options as flat keywords (:class:`RunOptions`), e.g.
    ``run("starter", "oracle", "all", out_dir="runs/x", case_ids=["weather_paris"], cache=False)``."""
    return eventloop.run(run_async(suite, model, tier, observers=observers, **options))


def score_run(run_dir: str | Path, tier: str | Sequence[str] = (), **options: Any) -> dict[str, Any]:
    """Re-score a stored run offline (no model call); returns the new summary as the JSON object
    written to ``summary.json`` (like :attr:`RunResult.summary`)."""
    from callbench.harness.rescore import rescore

    tiers = (tier,) if isinstance(tier, str) else tuple(tier)
    return rescore(Path(run_dir), tiers, **options).to_json_dict()


def load_records(
    run_dir: str | Path | Sequence[str | Path], backend: Literal["pandas", "polars"] = "pandas"
) -> Any:
    """The records of one run folder (or several) as a pandas DataFrame (needs the ``pandas`` extra),
    or a polars one (``backend="polars"``); read through the typed run-folder reader, so records of
    every schema version load. One row per (case, trial); columns in docs/interop.md."""
    if backend == "polars":
        from callbench.interop.frames import load_records as polars_frame

        return polars_frame(run_dir, "polars")
    from callbench.report.dataframe import load_records as frame

    return frame(run_dir)


def load_runs(
    run_dir: str | Path | Sequence[str | Path], backend: Literal["pandas", "polars"] = "pandas"
) -> Any:
    """One row per run folder (identity, counts, tokens, cost, and per scorer its n, passed, accuracy,
    interval, diagnostic flag and mean partial) as a pandas or polars frame (docs/interop.md)."""
    from callbench.interop.frames import load_runs as frame

    return frame(run_dir, backend)


def load_verdicts(
    run_dir: str | Path | Sequence[str | Path], backend: Literal["pandas", "polars"] = "pandas"
) -> Any:
    """One row per (case, trial, scorer): passed, partial, applicable, diagnostic, reason codes and
    rationale beside the record's identity, as a pandas or polars frame (docs/interop.md)."""
    from callbench.interop.frames import load_verdicts as frame

    return frame(run_dir, backend)
