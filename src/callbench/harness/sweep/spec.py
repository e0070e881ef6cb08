"""The sweep file: a matrix of models × harness modes over a list of suites, parsed into cells.

A **cell** is one (model entry, harness mode) pair: one ordinary run of every suite of the sweep, in
its own run folder. Every run folder thus holds one model in one mode over the same cases, so the
report's leaderboard (ranked within each tier and harness mode) compares like with like, and no run
folder ever mixes modes. Per-suite figures come from each run's ``by_suite`` breakdown.

Everything is checked here, before anything runs: each problem is one :class:`SweepError` line
``FILE:LINE: field 'PATH': what is wrong`` (see docs/sweeps.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, cast

from callbench.catalog import catalog
from callbench.errors import UserError
from callbench.harness.config import FLAGS, EngineLimits, OptionError, ProgressMode, RunConfig
from callbench.harness.modes import AGENT_UNDER_TEST, HARNESS_MODES, HarnessMode
from callbench.harness.sweep.yaml_lines import Located, Path_, field_name, load_located
from callbench.providers.agent_under_test import parse_agent
from callbench.providers.model import make_provider
from callbench.suites.resolve import catalog_prefix, looks_like_path
from callbench.types.hashing import sha256_of
from callbench.types.messages import GenerationSettings
from callbench.types.names import did_you_mean
from callbench.types.run_options import DEFAULT_REQUEST_TIMEOUT_S, OVERRIDABLE_FIELDS

PACING_OPTIONS = tuple(
    name
    for name in OVERRIDABLE_FIELDS
    if name in {f.name for f in fields(EngineLimits)} and name != "cache_path"
)
"""Options that change how hard the endpoint is pushed, never a verdict (the engine limits a resumed run
may change, but the cache's location): a resumed sweep may change them."""
RUN_OPTIONS = (
    "limit",
    "case_ids",
    "k",
    "executor",
    "suite_options",
    "data",
    "registry",
    "case_timeouts",
    "recover_text_calls",
    *PACING_OPTIONS,
)
"""Run options a sweep file may set for all its cells (``RunConfig`` field names)."""
TOP_KEYS = ("name", "out", "models", "suites", "modes", "trials", "settings", "tiers", *RUN_OPTIONS)
ENTRY_KEYS = ("model", "agent", "label", "settings")
SETTING_KEYS = tuple(name for name in GenerationSettings.model_fields if name != "provider_fallback")
DEFAULT_MODES: tuple[HarnessMode, ...] = ("production-parity",)
CELLS_FOLDER = "cells"
_SLUG = re.compile(r"[^A-Za-z0-9._]+")


@dataclass(frozen=True)
class Cell:
    """One (model entry, harness mode) pair: one ordinary run over every suite of the sweep."""

    id: str
    """The cell's folder name under ``cells/``: ``<label>--<mode>``, slugged."""
    label: str
    model: str
    agent: str | None
    mode: HarnessMode
    suites: tuple[str, ...]
    tiers: tuple[str, ...]
    trials: int
    settings: dict[str, Any]
    """The generation settings given (the sweep's defaults, then the entry's own); the rest default."""
    options: dict[str, Any] = field(default_factory=dict)
    """Run options shared by all cells (``RunConfig`` field names)."""
    path: Path_ = ()
    """Where the cell's model entry is in the sweep file (for error lines)."""

    def config(
        self,
        out_dir: Path | None = None,
        *,
        resume: bool = False,
        backend: str = "local",
        ray_address: str | None = None,
        ray_workers: int | None = None,
        progress: ProgressMode = "quiet",
    ) -> RunConfig:
        """The cell's run, as ``callbench run`` would build it from the same flags."""
        options = dict(self.options)
        settings = dict(self.settings)
        # `callbench run` sends --request-timeout as the settings' timeout too: the same here.
        settings.setdefault("timeout_s", options.get("request_timeout_s", DEFAULT_REQUEST_TIMEOUT_S))
        if self.agent is None:
            who: dict[str, Any] = {"model": self.model, "harness_mode": self.mode}
        else:
            who = {"agent": self.agent, "harness_mode": AGENT_UNDER_TEST}
        return RunConfig(
            suites=self.suites,
            tiers=self.tiers,
            trials=self.trials,
            settings=settings,  # type: ignore[arg-type]  # checked and converted by RunConfig
            out_dir=out_dir,
            resume=resume,
            backend=backend,  # type: ignore[arg-type]  # checked by RunConfig
            ray_address=ray_address,
            ray_workers=ray_workers,
            progress=progress,
            **who,
            **options,
        )

    def identity(self) -> dict[str, Any]:
        """What the cell measures: a resumed sweep must not change it (pacing options may change)."""
        return {
            "model": self.model,
            "agent": self.agent,
            "mode": self.mode,
            "suites": list(self.suites),
            "tiers": list(self.tiers),
            "trials": self.trials,
            "settings": {k: v for k, v in sorted(self.settings.items()) if k != "timeout_s"},
            "options": {k: v for k, v in sorted(self.options.items()) if k not in PACING_OPTIONS},
        }


@dataclass(frozen=True)
class SweepSpec:
    """A parsed, checked sweep file."""

    file: Path
    text: str
    name: str
    out: Path | None
    content: dict[str, Any]
    cells: tuple[Cell, ...]

    @property
    def hash(self) -> str:
        """A hash of the cells' identities: equal for two files that measure the same matrix."""
        return sha256_of([{"id": c.id, **c.identity()} for c in self.cells])


def read_sweep(file: Path, *, check_models: bool = True) -> SweepSpec:
    """Read and check a sweep file. Raises one :class:`SweepError` line for the first problem.

    Args:
        check_models: Also build each model's provider (no network): an unknown provider, a bad
            model option or a missing API key is reported now, as ``callbench run`` reports it.
    """
    if not file.exists():
        raise UserError(f"no such sweep file: {file}")
    if file.is_dir():
        raise UserError(f"{file}: a folder, not a sweep file (to continue a sweep: --resume {file})")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{file}: cannot read the sweep file: {exc}") from None
    return parse_sweep(file, text, check_models=check_models)


def parse_sweep(file: Path, text: str, *, check_models: bool = True) -> SweepSpec:
    """Parse and check sweep text read from ``file`` (named in error lines)."""
    doc = load_located(file, text)
    top = doc.value
    if not isinstance(top, dict):
        raise doc.error((), f"a sweep file is a mapping of keys (models, suites, modes...), got {_kind(top)}")
    for key in top:
        if key not in TOP_KEYS:
            raise doc.error((key,), f"unknown key {key!r}{did_you_mean(str(key), TOP_KEYS)}")
    for required in ("models", "suites"):
        if required not in top:
            raise doc.error((), f"the sweep file has no {required!r} list")
    name = _name(doc, top.get("name"), file)
    out = _out(doc, top.get("out"))
    suites = _suites(doc)
    modes = _modes(doc)
    tiers = _tiers(doc) if "tiers" in top else ()
    trials = top.get("trials", 1)
    if not (isinstance(trials, int) and not isinstance(trials, bool) and trials >= 1):
        raise doc.error(("trials",), f"must be an integer of at least 1, got {trials!r}")
    defaults = _settings(doc, ("settings",))
    options = {key: top[key] for key in RUN_OPTIONS if key in top}
    entries = _entries(doc)
    cells = _cells(doc, entries, modes, suites, tiers, trials, defaults, options)
    spec = SweepSpec(file, text, name, out, top, tuple(cells))
    for cell in spec.cells:
        _check_config(doc, cell)
    if check_models:
        _check_models(doc, entries)
    return spec


# --- top-level fields --------------------------------------------------------------------------


def _kind(value: Any) -> str:
    return "nothing" if value is None else f"a {type(value).__name__} ({value!r})"


def _name(doc: Located, value: Any, file: Path) -> str:
    if value is None:
        return file.stem
    if not isinstance(value, str) or not value.strip():
        raise doc.error(("name",), f"must be a non-empty string, got {_kind(value)}")
    return value


def _out(doc: Located, value: Any) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise doc.error(("out",), f"must be a folder path, got {_kind(value)}")
    return Path(value)


def _strings(doc: Located, path: Path_, *, allow_empty: bool = False) -> list[str]:
    value = doc.value[path[0]]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise doc.error(path, f"must be a list, got {_kind(value)}")
    if not value and not allow_empty:
        raise doc.error(path, "is empty: give at least one")
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise doc.error((*path, index), f"must be a non-empty string, got {_kind(item)}")
        if item in seen:
            first = doc.line((*path, seen[item]))
            raise doc.error((*path, index), f"{item!r} is listed twice (first on line {first})")
        seen[item] = index
    return list(value)


def _suites(doc: Located) -> tuple[str, ...]:
    """Suite specs, resolved as ``callbench run --suite`` resolves them (catalog name or path); the
    suites load when their cell runs."""
    suites = _strings(doc, ("suites",))
    names = catalog().suites.names()
    for index, spec in enumerate(suites):
        if catalog_prefix(spec) is not None:
            continue
        if looks_like_path(spec):
            if not Path(spec).exists():
                raise doc.error(("suites", index), f"suite file or folder not found: {spec!r}")
            continue
        name = spec.partition(":")[0]
        raise doc.error(("suites", index), f"unknown suite {name!r}{did_you_mean(name, names)}")
    return tuple(suites)


def _modes(doc: Located) -> tuple[HarnessMode, ...]:
    if "modes" not in doc.value:
        return DEFAULT_MODES
    modes = _strings(doc, ("modes",))
    for index, mode in enumerate(modes):
        if mode not in HARNESS_MODES:
            raise doc.error(
                ("modes", index), f"unknown harness mode {mode!r}{did_you_mean(mode, HARNESS_MODES)}"
            )
    return tuple(cast(HarnessMode, mode) for mode in modes)


def _tiers(doc: Located) -> tuple[str, ...]:
    """Scorer names as ``--tier`` takes them: registered scorers, or ``all``."""
    tiers = _strings(doc, ("tiers",))
    names = [*catalog().scorers.names(), "all"]
    for index, tier in enumerate(tiers):
        if tier not in names:
            raise doc.error(("tiers", index), f"unknown scorer {tier!r}{did_you_mean(tier, names)}")
    return tuple(tiers)


def _settings(doc: Located, path: Path_) -> dict[str, Any]:
    value: Any = doc.value
    for part in path:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise doc.error(path, f"must be a mapping of generation settings, got {_kind(value)}")
    for key in value:
        if key not in SETTING_KEYS:
            raise doc.error(
                (*path, key), f"unknown generation setting {key!r}{did_you_mean(str(key), SETTING_KEYS)}"
            )
    return dict(value)


# --- models and cells --------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One item of ``models``: a model string or an agent spec, its label and its own settings."""

    path: Path_
    model: str
    agent: str | None
    label: str
    settings: dict[str, Any]


def _entries(doc: Located) -> list[Entry]:
    models = doc.value["models"]
    if not isinstance(models, list):
        raise doc.error(("models",), f"must be a list of models, got {_kind(models)}")
    if not models:
        raise doc.error(("models",), "is empty: give at least one model")
    return [_entry(doc, ("models", index), item) for index, item in enumerate(models)]


def _entry(doc: Located, path: Path_, item: Any) -> Entry:
    if isinstance(item, str) and item.strip():
        return Entry(path, item.strip(), None, item.strip(), {})
    if not isinstance(item, dict):
        raise doc.error(
            path, f"must be a model string or a mapping {{model: ..., settings: ...}}, got {_kind(item)}"
        )
    for key in item:
        if key not in ENTRY_KEYS:
            raise doc.error((*path, key), f"unknown key {key!r}{did_you_mean(str(key), ENTRY_KEYS)}")
    model, agent = item.get("model"), item.get("agent")
    if (model is None) == (agent is None):
        raise doc.error(
            path, "give one of 'model' (a model string) or 'agent' (your agent application's spec)"
        )
    key = "model" if agent is None else "agent"
    spec = model if agent is None else agent
    if not isinstance(spec, str) or not spec.strip():
        raise doc.error((*path, key), f"must be a non-empty string, got {_kind(spec)}")
    label = item.get("label", spec)
    if not isinstance(label, str) or not label.strip():
        raise doc.error((*path, "label"), f"must be a non-empty string, got {_kind(label)}")
    if agent is not None:
        try:
            parse_agent(agent.strip())
        except UserError as exc:
            raise doc.error((*path, "agent"), str(exc)) from None
    settings = _settings(doc, (*path, "settings"))
    if agent is not None and settings:
        raise doc.error((*path, "settings"), "an agent under test chooses its own generation settings")
    return Entry(
        path, (model or "baseline").strip(), agent.strip() if agent else None, label.strip(), settings
    )


def slug(text: str) -> str:
    """A folder-safe name: runs of other characters become ``-``."""
    return _SLUG.sub("-", text).strip("-") or "cell"


def _cells(
    doc: Located,
    entries: list[Entry],
    modes: tuple[HarnessMode, ...],
    suites: tuple[str, ...],
    tiers: tuple[str, ...],
    trials: int,
    defaults: dict[str, Any],
    options: dict[str, Any],
) -> list[Cell]:
    """Model entries × modes; an agent entry runs in the agent-under-test mode only, a model never does."""
    if AGENT_UNDER_TEST in modes and not any(e.agent for e in entries):
        index = modes.index(AGENT_UNDER_TEST)
        raise doc.error(("modes", index), "agent-under-test needs an agent entry in models: {agent: SPEC}")
    model_modes = tuple(mode for mode in modes if mode != AGENT_UNDER_TEST)
    cells: list[Cell] = []
    seen: dict[str, Cell] = {}
    for entry in entries:
        if entry.agent is None and not model_modes:
            raise doc.error(
                entry.path, f"model {entry.model!r} cannot run in agent-under-test, the only mode"
            )
        for mode in (AGENT_UNDER_TEST,) if entry.agent else model_modes:
            settings = {**defaults, **entry.settings} if entry.agent is None else {}
            cell = Cell(
                id=f"{slug(entry.label)}--{mode}",
                label=entry.label,
                model=entry.model,
                agent=entry.agent,
                mode=mode,
                suites=suites,
                tiers=tiers,
                trials=trials,
                settings=settings,
                options=dict(options),
                path=entry.path,
            )
            _check_duplicate(doc, cell, seen)
            seen[cell.id] = cell
            cells.append(cell)
    return cells


def _check_duplicate(doc: Located, cell: Cell, seen: dict[str, Cell]) -> None:
    for other in seen.values():
        if other.identity() == cell.identity():
            raise doc.error(
                cell.path,
                f"duplicate cell: the same model, mode and settings as {field_name(other.path)} "
                f"(line {doc.line(other.path)}); give different settings or remove one",
            )
    if cell.id in seen:
        other = seen[cell.id]
        raise doc.error(
            cell.path,
            f"duplicate cell id {cell.id!r} (also {field_name(other.path)} on line {doc.line(other.path)}): "
            "give the entries different labels (label: ...)",
        )


# --- each cell's run config, and its model -----------------------------------------------------

_FIELD_IN_MESSAGE = re.compile(r"\b(?:GenerationSettings|Selection|EngineLimits|Output|RunConfig)\.(\w+)")
_FLAG_FIELDS: dict[str, list[str]] = {
    flag: [name for name, other in FLAGS.items() if other == flag] for flag in set(FLAGS.values())
}
"""A command-line flag -> the option and setting names it stands for (``--request-timeout``: two)."""


def _check_config(doc: Located, cell: Cell) -> None:
    """Build the cell's ``RunConfig``: an impossible setting is the config's own error, on its line."""
    try:
        cell.config()
    except UserError as exc:
        names = _FLAG_FIELDS.get(exc.flag or "", []) if isinstance(exc, OptionError) else []
        found = _FIELD_IN_MESSAGE.search(str(exc))
        if found:
            names = [found[1], *names]
        message = exc.cli_message() if isinstance(exc, OptionError) else str(exc)
        raise doc.error(_where(doc, cell, names), _sweep_words(message, names)) from None


def _where(doc: Located, cell: Cell, names: list[str]) -> Path_:
    """The first place the sweep file sets one of ``names``: the entry's settings, the sweep's
    settings, a top-level option; else the entry itself."""
    for name in names:
        for path in ((*cell.path, "settings", name), ("settings", name), (name,)):
            if path in doc.lines:
                return path
    return cell.path


def _sweep_words(message: str, names: list[str]) -> str:
    """A config message in the sweep file's words: ``temperature must be ...`` rather than the flag."""
    if names and message.startswith("--"):
        flag, _, rest = message.partition(" ")
        return f"{names[0]} {rest}" if flag in FLAGS.values() else message
    return message


def _check_models(doc: Located, entries: list[Entry]) -> None:
    """Each model's provider, built without network: unknown providers, bad options, missing keys."""
    checked: set[str] = set()
    for entry in entries:
        if entry.agent is not None or entry.model in checked:
            continue
        checked.add(entry.model)
        path = (*entry.path, "model") if (*entry.path, "model") in doc.lines else entry.path
        try:
            make_provider(entry.model)
        except UserError as exc:
            raise doc.error(path, str(exc)) from None


def resume_spec(spec: SweepSpec, recorded: Mapping[str, Any]) -> None:
    """Refuse a resume whose cells differ from the recorded ones (one line naming the first change)."""
    old = {c["id"]: c.get("identity") for c in recorded.get("cells", [])}
    new = {c.id: c.identity() for c in spec.cells}
    for cell_id in old:
        if cell_id not in new:
            raise UserError(f"{spec.file}: cannot resume: cell {cell_id!r} is no longer in the sweep file")
    for cell_id, identity in new.items():
        if cell_id not in old:
            raise UserError(f"{spec.file}: cannot resume: cell {cell_id!r} is new in the sweep file")
        before = old[cell_id] or {}
        for key in identity:
            if before.get(key) != identity[key]:
                change = _changed(key, before.get(key), identity[key])
                raise UserError(
                    f"{spec.file}: cannot resume: cell {cell_id!r}: {change}; "
                    "start a new sweep (another --out) for a different matrix"
                )


def _changed(key: str, old: Any, new: Any) -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                return f"{key}.{name} was {old.get(name)!r}, now {new.get(name)!r}"
    return f"{key} was {old!r}, now {new!r}"
