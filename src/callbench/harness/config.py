"""``RunConfig``: every option of a run, as given on the CLI or to :func:`callbench.run`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.harness.modes import HarnessMode
from callbench.providers.limits import DEFAULT_REQUEST_TIMEOUT_S
from callbench.types.messages import GenerationSettings


@dataclass(frozen=True)
class RunConfig:
    """Options of one run. Frozen: recorded in ``run.json`` and compared on resume."""

    suites: tuple[str, ...] = ()
    """Suite specs; empty = the embedded default suite (``catalog().default_suite``)."""
    model: str = "baseline"
    tiers: tuple[str, ...] = ()
    """Scorer names; empty = each suite's default scorers; ``("all",)`` = the three tiers."""
    harness_mode: HarnessMode = "production-parity"
    k: int | str | None = None
    """Top-k tool retrieval: a number, ``"all"`` (every candidate tool), or ``None`` (the suite's
    ``default_k``, 24 unless the suite says otherwise)."""
    executor: str | None = None
    """Override every suite's executor (e.g. ``contract``)."""
    data: Path | None = None
    registry: Path | None = None
    suite_options: dict[str, Any] = field(default_factory=dict)
    case_ids: tuple[str, ...] = ()
    """Run only these cases (``id`` or ``suite:id``)."""
    limit: int | None = None
    trials: int = 1
    out_dir: Path | None = None
    runs_root: Path = Path("runs")
    resume: bool = False
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    # engine and provider limits
    concurrency: int = 8
    delay_s: float = 0.0
    rpm: float | None = None
    tpm: float | None = None
    max_connections: int | None = None
    max_retries: int = 6
    max_retry_time_s: float = 300.0
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S
    """Seconds per model request before it is retried (``None``: ``settings.timeout_s``). Its own
    default, well below the default case limit: see docs/providers.md, "Case time limit"."""
    cache: bool = True
    cache_path: Path | None = None
    price_table: Path | None = None
    # display only (not recorded)
    progress: str = "auto"
    """``rich``, ``plain``, ``quiet`` or ``auto`` (rich on a terminal, plain otherwise)."""
    watch: bool = False
    """Print every round of every case as it happens (meant for ``--case ID``)."""

    def recorded_options(self) -> dict[str, Any]:
        """The engine options worth recording in ``run.json``."""
        return {
            "concurrency": self.concurrency, "delay_s": self.delay_s, "rpm": self.rpm, "tpm": self.tpm,
            "max_connections": self.max_connections, "max_retries": self.max_retries,
            "max_retry_time_s": self.max_retry_time_s, "request_timeout_s": self.request_timeout_s,
            "cache": self.cache, "case_ids": list(self.case_ids), "limit": self.limit,
            "price_table": str(self.price_table) if self.price_table else None,
            "suite_options": self.suite_options,
            "config": config_to_dict(self),
        }


PATH_FIELDS = ("data", "registry", "out_dir", "runs_root", "cache_path", "price_table")
DISPLAY_FIELDS = ("progress", "watch", "resume")


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    """A JSON-safe dict of the config (for ``run.json``; read back by :func:`config_from_dict`)."""
    out: dict[str, Any] = {}
    for name in config.__dataclass_fields__:
        if name in DISPLAY_FIELDS:
            continue
        value = getattr(config, name)
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, GenerationSettings):
            value = value.model_dump()
        out[name] = value
    return out


def config_from_dict(data: dict[str, Any], **overrides: Any) -> RunConfig:
    """Rebuild a config recorded by :func:`config_to_dict`, with ``overrides`` applied."""
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name not in RunConfig.__dataclass_fields__:
            continue
        if name in PATH_FIELDS and value is not None:
            value = Path(value)
        elif name in ("suites", "tiers", "case_ids"):
            value = tuple(value)
        elif name == "settings":
            value = GenerationSettings(**value)
        values[name] = value
    values.update(overrides)
    return RunConfig(**values)
