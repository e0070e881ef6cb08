"""The Python API; each function mirrors a CLI command."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from callbench.harness.config import RunConfig
from callbench.harness.engine import RunResult
from callbench.types.messages import GenerationSettings


def make_config(suite: str | Sequence[str] = (), model: str = "baseline", tier: str | Sequence[str] = (),
                **options: Any) -> RunConfig:
    """Build a :class:`RunConfig` from friendly arguments (``tier="all"`` = the three strict tiers)."""
    suites = (suite,) if isinstance(suite, str) else tuple(suite)  # empty: the embedded default suite
    tiers = (tier,) if isinstance(tier, str) else tuple(tier)
    settings = options.pop("settings", None) or GenerationSettings()
    for key in ("out_dir", "data", "registry", "runs_root", "cache_path", "price_table"):
        if options.get(key) is not None:
            options[key] = Path(options[key])
    if "case_ids" in options:
        options["case_ids"] = tuple(options["case_ids"])
    return RunConfig(suites=suites, model=model, tiers=tiers, settings=settings, **options)


async def run_async(suite: str | Sequence[str] = (), model: str = "baseline",
                    tier: str | Sequence[str] = (), *, observers: Sequence[Any] = (), **options: Any) -> RunResult:
    """Run a benchmark (async). Options are the fields of :class:`RunConfig`."""
    from callbench.harness.engine import run_async as engine_run

    return await engine_run(make_config(suite, model, tier, **options), observers)


def run(suite: str | Sequence[str] = (), model: str = "baseline", tier: str | Sequence[str] = (), *,
        observers: Sequence[Any] = (), **options: Any) -> RunResult:
    """Run a benchmark and return its :class:`RunResult` (folder, summary, records)."""
    return asyncio.run(run_async(suite, model, tier, observers=observers, **options))


def score_run(run_dir: str | Path, tier: str | Sequence[str] = (), **options: Any) -> dict[str, Any]:
    """Re-score a stored run offline (no model call); returns the new summary."""
    from callbench.harness.rescore import rescore

    tiers = (tier,) if isinstance(tier, str) else tuple(tier)
    return rescore(Path(run_dir), tiers, **options)


def load_records(run_dir: str | Path) -> Any:
    """The run's records as a pandas DataFrame (needs the ``pandas`` extra)."""
    from callbench.report.frame import load_records as frame

    return frame(Path(run_dir))
