"""The options of a run: four small option groups, and the flat ``RunConfig`` the engine reads.

The Python API (:func:`callbench.evaluate`) and the CLI take the options in groups:

* :class:`Selection` — which cases run and how (case ids, limit, trials, top-k, executor
  override, suite loader options);
* :class:`EngineLimits` — concurrency, pacing, endpoint limits, retries, timeouts, cache, prices;
* :class:`~callbench.types.messages.GenerationSettings` — what every model request asks for;
* :class:`Output` — where the run folder goes, resuming, and what is shown while it runs.

:class:`RunConfig` is those groups flattened, plus the suites, the model, the scorers and the
harness mode: the engine's input, recorded in ``run.json`` and compared on resume. Every group
checks its values when built, so a bad value is one :class:`~callbench.errors.ConfigError` line
naming the field (and its CLI flag), never a traceback later in the run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import ValidationError

from callbench.errors import ConfigError
from callbench.executors.base import Executor
from callbench.harness.modes import AGENT_UNDER_TEST, HARNESS_MODES, HarnessMode
from callbench.providers.agent_under_test import parse_agent
from callbench.providers.base import Provider
from callbench.scoring.base import Scorer
from callbench.suites.suite import Suite
from callbench.telemetry.conventions import TARGET_RULE, parse_target
from callbench.types.messages import GenerationSettings
from callbench.types.names import did_you_mean
from callbench.types.run_options import (
    FLAGS,
    OPTIONS,
    REPLAY_MISSES,
    RUN_OPTIONS,
    UNRECORDED_FIELDS,
    names,
    parse_model_upstreams,
    parse_size_limits,
)

ScorerFactory: TypeAlias = Callable[[Suite], Scorer]
"""What the catalog registers for a scorer: ``factory(suite) -> Scorer``."""
SuiteRef: TypeAlias = str | Suite
"""A suite spec (catalog name with options, or a path), or a :class:`Suite` built in code."""
ModelRef: TypeAlias = str | Provider
"""A model string (``provider:model``, ``oracle``...), or a :class:`Provider` built in code."""
TierRef: TypeAlias = str | ScorerFactory
"""A scorer name (``all``: the suite's scorers plus the strict tiers where they apply) or a factory."""
BackendName = Literal["local", "ray"]
BACKENDS: tuple[BackendName, ...] = ("local", "ray")
"""Where cases run: ``local`` (one process, one event loop) or ``ray`` (Ray workers, each with the same
async engine; the driver writes every record)."""
ProgressMode = Literal["auto", "rich", "plain", "quiet"]
PROGRESS_MODES: tuple[ProgressMode, ...] = ("auto", "rich", "plain", "quiet")

OBJECT_SPEC = "<object>"
"""What ``run.json`` records in place of a suite, model, scorer or executor given as a Python
object: such a run can be resumed through the Python API with the same objects, never from the CLI."""


REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The reasoning-effort levels OpenAI-compatible endpoints take."""
MAX_TEMPERATURE = 2.0
"""The highest sampling temperature providers accept (OpenAI's range is 0..2; Anthropic's 0..1)."""
MAX_SEED = 2**63 - 1
"""Seeds are sent as 64-bit signed integers."""


class OptionError(ConfigError):
    """A run option with a bad value. ``str()`` names the API field (``EngineLimits.concurrency
    (--concurrency) must be ...``); :meth:`cli_message` names the command-line option alone."""

    def __init__(self, message: str, *, flag: str | None, rule: str, value: Any) -> None:
        super().__init__(message)
        self.flag, self.rule, self.value = flag, rule, value

    def cli_message(self) -> str:
        """``--concurrency must be an integer of at least 1 (got 0)``; the API message without a flag."""
        if self.flag is None:
            return str(self)
        return f"{self.flag} must be {self.rule} (got {_shown(self.value)})"


def _shown(value: Any) -> str:
    """A value as the user typed it: ``-1`` rather than ``-1.0``, strings quoted."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return repr(value)


# --- checks shared by the groups ---------------------------------------------------------------


def _label(group: object, name: str) -> str:
    flag = FLAGS.get(name)
    return f"{type(group).__name__}.{name}" + (f" ({flag})" if flag else "")


def _reject(group: object, name: str, rule: str, *, optional: bool = False) -> None:
    """Raise the one-line :class:`OptionError` of a field; ``optional``: ``None`` is allowed too
    (said to API users; a command-line option left out is simply not given)."""
    value = getattr(group, name)
    api_rule = rule + (" or None" if optional else "")
    raise OptionError(
        f"{_label(group, name)} must be {api_rule}, got {value!r}",
        flag=FLAGS.get(name),
        rule=rule,
        value=value,
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


def _check_int(group: object, name: str, minimum: int, *, optional: bool = False) -> None:
    value = getattr(group, name)
    if not (optional and value is None) and not (_is_int(value) and value >= minimum):
        _reject(group, name, f"an integer of at least {minimum}", optional=optional)


def _check_number(group: object, name: str, *, positive: bool, optional: bool = False) -> None:
    value = getattr(group, name)
    if optional and value is None:
        return
    if not _is_number(value) or value < 0 or (positive and value == 0):
        rule = "a positive number" if positive else "a number of at least 0"
        _reject(group, name, rule, optional=optional)


def _check_bool(group: object, name: str) -> None:
    if not isinstance(getattr(group, name), bool):
        _reject(group, name, "True or False")


def _set(group: object, name: str, value: Any) -> None:
    object.__setattr__(group, name, value)  # normalising a frozen dataclass in __post_init__


def _normalize_path(group: object, name: str, *, optional: bool = True) -> None:
    value = getattr(group, name)
    if value is None and optional:
        return
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        _reject(group, name, "a path", optional=optional)
    _set(group, name, Path(value))


def _normalize_strings(group: object, name: str) -> None:
    value = getattr(group, name)
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not all(isinstance(item, str) and item for item in items):
        _reject(group, name, "a list of non-empty strings")
    _set(group, name, tuple(items))


def declared(name: str) -> Any:
    """The dataclass field of the run option ``name``: its default (copied per instance when it is a
    dict) and its declaration in the field's metadata (``callbench.types.run_options``)."""
    option = OPTIONS[name]
    metadata = {"option": option}
    if isinstance(option.default, dict):
        return field(default_factory=lambda: dict(option.default), metadata=metadata)
    return field(default=option.default, metadata=metadata)


def group_fields(group: object) -> dict[str, Any]:
    """The fields of an option group (or of a ``RunConfig``) as a name -> value dict (shallow)."""
    return {f.name: getattr(group, f.name) for f in fields(group)}  # type: ignore[arg-type]


# --- the option groups ---------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """Which cases run, how often, and with which suite loader options."""

    case_ids: Sequence[str] = declared("case_ids")
    """Run only these cases (``id`` or ``suite:id``); empty = every case."""
    limit: int | None = declared("limit")
    """At most this many cases per suite."""
    trials: int = declared("trials")
    """Run every case this many times."""
    k: int | str | None = declared("k")
    """Top-k tool retrieval: a number, ``"all"`` (every candidate tool), or ``None`` (the suite's
    ``default_k``, 24 unless the suite says otherwise)."""
    executor: str | Executor | None = declared("executor")
    """Override every suite's executor: a catalog name (``contract``) or an executor object."""
    suite_options: Mapping[str, Any] = declared("suite_options")
    """Options for catalog suite loaders (``--option KEY=VALUE``); unused by suite objects."""
    data: str | Path | None = declared("data")
    """A local data set path, for suite loaders that need one (``--data``)."""
    registry: str | Path | None = declared("registry")
    """A tool registry folder for suites given as a path (``--registry``)."""
    tools: str | None = declared("tools")
    """A live MCP server as the tool source of suites given as a path (``--tools mcp:stdio:CMD ARGS``
    or ``mcp:http://HOST/PATH``): its listed tools are the registry and calls are forwarded to it."""
    record: str | Path | None = declared("record")
    """``--record DIR``: keep every exchange with the suites' MCP tool servers in this cassette folder
    (:mod:`callbench.executors.cassette`)."""
    replay: str | Path | None = declared("replay")
    """``--replay DIR``: answer the suites' MCP tool calls from this cassette folder; no server starts."""
    replay_miss: str = declared("replay_miss")
    """``--replay``: what answers a call the cassette lacks: ``strict``, ``live`` or ``model-visible``."""
    agent_model_proxy: Mapping[str, str] = declared("agent_model_proxy")
    """``--agent``: the agent's model endpoint(s) its requests are forwarded to through callbench's
    model proxy (``{"openai": URL, "anthropic": URL}``; a URL string is the OpenAI-compatible one);
    :mod:`callbench.harness.agent_model`."""
    agent_otel: bool = declared("agent_otel")
    """``--agent``: serve an OTLP/HTTP endpoint per case on 127.0.0.1, give it to the agent
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``otel_endpoint``) and record its model requests, tokens and cost
    from the spans it sends there (:mod:`callbench.telemetry.receiver`)."""
    user_model: str | None = declared("user_model")
    """Conversation suites: the model spec of the simulated user (``--user-model``; ``None``: each
    conversation's scripted user). Part of every conversation record's harness mode: runs with
    different users are never pooled."""
    user_seed: int = declared("user_seed")
    """The simulated user's seed; trial ``t`` samples with ``user_seed + t - 1``."""
    user_temperature: float = declared("user_temperature")
    """The simulated user's temperature."""
    tools_isolation: str | None = declared("tools_isolation")
    """The isolation of the run's live MCP tool servers: ``case``, ``run`` or ``shared`` (``None``: the
    suite's ``tool_source.isolation``, else ``case`` unless every tool says ``readOnlyHint: true``)."""
    shuffle: int | None = declared("shuffle")
    """Run the cases in an order drawn from this seed (``None``: in the suites' order)."""
    case_timeouts: Mapping[str, float] = declared("case_timeouts")
    """Case time limits replacing the cases' own ``timeout_s`` (``--case-timeout``): ``{"*": S}`` for
    every suite, ``{SUITE: S}`` for one (a suite's entry wins over ``*``). For slow local servers."""
    recover_text_calls: bool = declared("recover_text_calls")
    """Native mode: score a call the server left in the answer's text (its tool-call parser failed) as
    a call, recorded as recovered (``--recover-text-calls``). Such runs are never pooled with plain
    native runs."""
    size_limits: Mapping[str, int | str] = declared("size_limits")
    """Bytes a record keeps of a model reply, an agent answer, a tool result and a stderr tail
    (``--size-limit``; keys ``reply``, ``answer``, ``tool_result``, ``stderr``, sizes as ints or
    ``"2MB"``); keys not given keep their default. Over it a text keeps a head and a tail."""

    def __post_init__(self) -> None:
        _normalize_strings(self, "case_ids")
        _set(self, "size_limits", parse_size_limits(self.size_limits, _label(self, "size_limits")))
        _set(self, "case_timeouts", _parse_case_timeouts(self))
        _check_bool(self, "recover_text_calls")
        _check_bool(self, "agent_otel")
        if self.tools is not None and not (isinstance(self.tools, str) and self.tools.startswith("mcp:")):
            _reject(
                self,
                "tools",
                "an MCP server spec: mcp:stdio:COMMAND ARGS or mcp:http://HOST/PATH",
                optional=True,
            )
        if self.tools_isolation is not None:
            text = self.tools_isolation.strip().lower() if isinstance(self.tools_isolation, str) else None
            if text not in ("case", "run", "shared"):
                _reject(self, "tools_isolation", "case, run or shared", optional=True)
            _set(self, "tools_isolation", text)
        _check_int(self, "shuffle", 0, optional=True)
        _check_int(self, "user_seed", 0)
        if not (_is_number(self.user_temperature) and 0 <= self.user_temperature <= MAX_TEMPERATURE):
            _reject(self, "user_temperature", f"a number from 0 to {MAX_TEMPERATURE:g}")
        if self.user_model is not None and not (isinstance(self.user_model, str) and self.user_model.strip()):
            _reject(self, "user_model", "a model spec", optional=True)
        _check_int(self, "limit", 0, optional=True)
        _check_int(self, "trials", 1)
        _set(self, "k", _parse_k(self))
        if (
            self.executor is not None
            and not isinstance(self.executor, Executor)
            and not (isinstance(self.executor, str) and self.executor)
        ):
            _reject(self, "executor", "an executor name or an Executor object", optional=True)
        options = self.suite_options
        if not isinstance(options, Mapping) or not all(isinstance(key, str) for key in options):
            _reject(self, "suite_options", "a mapping of option names to values")
        _set(self, "suite_options", dict(self.suite_options))
        _normalize_path(self, "data")
        _normalize_path(self, "registry")
        _normalize_path(self, "record")
        _normalize_path(self, "replay")
        if self.replay_miss not in REPLAY_MISSES:
            _reject(self, "replay_miss", "one of " + ", ".join(REPLAY_MISSES))
        _set(self, "agent_model_proxy", parse_model_upstreams(self.agent_model_proxy, "agent_model_proxy"))


def _parse_case_timeouts(selection: Selection) -> dict[str, float]:
    """``case_timeouts`` as ``{suite or "*": positive seconds}``; a bare number means every suite."""
    value: Any = selection.case_timeouts
    if _is_number(value):
        value = {"*": value}
    if not isinstance(value, Mapping) or not all(
        isinstance(key, str) and key and _is_number(seconds) and seconds > 0 for key, seconds in value.items()
    ):
        _reject(selection, "case_timeouts", "positive seconds, or SUITE=SECONDS")
    return {key: float(seconds) for key, seconds in value.items()}


def case_time_limit(case_timeouts: Mapping[str, float], suite: str, own: float) -> float:
    """The time limit of a case of ``suite`` whose own limit is ``own``, under ``--case-timeout``."""
    return case_timeouts.get(suite, case_timeouts.get("*", own))


def _parse_k(selection: Selection) -> int | str | None:
    """``k`` as a positive int, ``"all"`` or ``None`` (the CLI hands over its text as given)."""
    value = selection.k
    if value is None or isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "all":
            return "all"
        if text.isdigit() and int(text) >= 1:
            return int(text)
    _reject(selection, "k", "a positive integer or 'all'", optional=True)
    return None  # unreachable: _reject raises


@dataclass(frozen=True)
class EngineLimits:
    """How hard the run may push the endpoint, and how it recovers."""

    concurrency: int = declared("concurrency")
    """Cases in flight at once."""
    delay_s: float = declared("delay_s")
    """Seconds between case starts."""
    rpm: float | None = declared("rpm")
    """Requests per minute per endpoint (``None``: unlimited)."""
    tpm: float | None = declared("tpm")
    """Tokens per minute per endpoint (``None``: unlimited)."""
    max_connections: int | None = declared("max_connections")
    """Open requests per endpoint (``None``: unlimited)."""
    max_retries: int = declared("max_retries")
    """Retries per request on 429, 5xx and timeouts."""
    max_retry_time_s: float = declared("max_retry_time_s")
    """Cap on the retry time of one request."""
    request_timeout_s: float | None = declared("request_timeout_s")
    """Seconds per model request before it is retried (``None``: ``GenerationSettings.timeout_s``). Its
    own default, well below the default case limit: see docs/providers.md, "Case time limit"."""
    cache: bool = declared("cache")
    """Read and write the response cache (built-in agents are never cached)."""
    cache_path: str | Path | None = declared("cache_path")
    """The response cache file (``None``: the default location)."""
    price_table: str | Path | None = declared("price_table")
    """A YAML/JSON price table for cost estimates (checked before the run starts)."""
    backend: BackendName = declared("backend")
    """Where cases run (:data:`BACKENDS`); not part of a run's identity: a run started on one backend
    may be resumed on the other."""
    ray_address: str | None = declared("ray_address")
    """``--backend ray``: the cluster to join (``None``: start a local Ray instance; ``auto``: the running
    cluster this machine belongs to; or ``ray://host:port`` / ``host:port``)."""
    ray_workers: int | None = declared("ray_workers")
    """``--backend ray``: how many workers play cases, each at ``concurrency`` cases in flight (``None``:
    ``$CALLBENCH_RAY_WORKERS``, else one per CPU of the cluster)."""

    def __post_init__(self) -> None:
        _check_int(self, "concurrency", 1)
        _check_number(self, "delay_s", positive=False)
        _check_number(self, "rpm", positive=True, optional=True)
        _check_number(self, "tpm", positive=True, optional=True)
        _check_int(self, "max_connections", 1, optional=True)
        _check_int(self, "max_retries", 0)
        _check_number(self, "max_retry_time_s", positive=False)
        _check_number(self, "request_timeout_s", positive=True, optional=True)
        _check_bool(self, "cache")
        _normalize_path(self, "cache_path")
        _normalize_path(self, "price_table")
        if self.backend not in BACKENDS:
            _reject(self, "backend", "one of " + ", ".join(BACKENDS))
        if self.ray_address is not None and (
            not isinstance(self.ray_address, str) or not self.ray_address.strip()
        ):
            _reject(
                self, "ray_address", "a Ray address ('auto', 'host:port' or 'ray://host:port')", optional=True
            )
        _check_int(self, "ray_workers", 1, optional=True)
        if self.ray_workers is not None and self.backend != "ray":
            raise OptionError(
                "--ray-workers must be used with --backend ray",
                flag="--ray-workers",
                rule="used with --backend ray",
                value=self.ray_workers,
            )
        if self.ray_address is not None and self.backend != "ray":
            raise OptionError(
                "--ray-address needs --backend ray",
                flag="--ray-address",
                rule="used with --backend ray",
                value=self.ray_address,
            )


@dataclass(frozen=True)
class Output:
    """Where the run folder goes, whether to continue one, and what is shown while it runs."""

    out_dir: str | Path | None = declared("out_dir")
    """The run folder (``None``: ``runs_root/<timestamp>-<model>-<suite>``)."""
    runs_root: str | Path = declared("runs_root")
    resume: bool = declared("resume")
    """Continue the run in ``out_dir`` (error records are re-run); refused when the run's identity changed."""
    progress: ProgressMode = declared("progress")
    """``quiet`` (the API's default: nothing printed), ``plain``, ``rich`` or ``auto`` (rich on a
    terminal, plain otherwise); anything but ``quiet`` also mirrors the cases in flight to ``live.json``."""
    watch: bool = declared("watch")
    """Print every round of every case as it happens (meant for a single case)."""
    preflight: bool = declared("preflight")
    """Check the endpoint's conformance (``callbench doctor``) before any case runs; the table is kept
    in ``run.json`` (``--preflight``)."""
    otel: str | None = declared("otel")
    """Send one OpenTelemetry trace per case: ``http(s)://HOST[:PORT]`` (OTLP over HTTP) or
    ``file:PATH`` (OTLP/JSON lines); :mod:`callbench.telemetry.export`."""
    otel_content: bool = declared("otel_content")
    """With ``otel``: also send tool arguments and results and model texts (opt-in content)."""

    def __post_init__(self) -> None:
        _normalize_path(self, "out_dir")
        _check_bool(self, "preflight")
        _check_bool(self, "otel_content")
        if self.otel is not None:
            if not isinstance(self.otel, str):
                _reject(self, "otel", TARGET_RULE, optional=True)
            try:
                parse_target(self.otel, _label(self, "otel"))
            except ConfigError as exc:
                raise OptionError(str(exc), flag=FLAGS["otel"], rule=TARGET_RULE, value=self.otel) from None
        _normalize_path(self, "runs_root", optional=False)
        _check_bool(self, "resume")
        if self.progress not in PROGRESS_MODES:
            _reject(self, "progress", "one of " + ", ".join(PROGRESS_MODES))
        _check_bool(self, "watch")
        if self.resume and self.out_dir is None:
            raise ConfigError("Output.resume needs Output.out_dir: the run folder to continue")


def generation_settings(value: GenerationSettings | Mapping[str, Any] | None) -> GenerationSettings:
    """``GenerationSettings`` from an instance, a mapping of its fields, or ``None`` (the defaults),
    with its values checked (:func:`check_generation`)."""
    if value is None:
        return GenerationSettings()
    if isinstance(value, GenerationSettings):
        return check_generation(value)
    if not isinstance(value, Mapping):
        raise ConfigError(f"generation must be a GenerationSettings or a mapping, got {type(value).__name__}")
    try:
        settings = GenerationSettings(**value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(
            f"GenerationSettings.{where}: {first['msg']} (got {first.get('input')!r})"
        ) from None
    return check_generation(settings)


def check_generation(settings: GenerationSettings) -> GenerationSettings:
    """The settings, once their values are in range: one :class:`OptionError` line otherwise.

    Pydantic checks the types; the ranges are checked here, where every run's settings pass
    (the CLI, ``evaluate`` and a resumed run's recorded settings alike).
    """
    temperature = settings.temperature
    if not (_is_number(temperature) and 0 <= temperature <= MAX_TEMPERATURE):
        _reject(settings, "temperature", f"a number from 0 to {MAX_TEMPERATURE:g}")
    _check_int(settings, "max_tokens", 1)
    if settings.seed is not None and not (_is_int(settings.seed) and 0 <= settings.seed <= MAX_SEED):
        _reject(settings, "seed", "an integer from 0 to 2**63-1", optional=True)
    if settings.reasoning_effort is not None and settings.reasoning_effort not in REASONING_EFFORTS:
        _reject(settings, "reasoning_effort", "one of " + ", ".join(REASONING_EFFORTS), optional=True)
    _check_int(settings, "thinking_budget", 1, optional=True)
    if settings.thinking_budget is not None and settings.thinking_budget >= settings.max_tokens:
        # Anthropic refuses such a request (the answer must fit after the thinking): say so before
        # the run, not as a stopped run.
        _reject(
            settings,
            "thinking_budget",
            f"below --max-tokens ({settings.max_tokens}): the thinking budget is part of max tokens",
        )
    if not isinstance(settings.tool_choice, str) or not settings.tool_choice.strip():
        _reject(settings, "tool_choice", "auto, required, none or a tool name")
    _check_number(settings, "timeout_s", positive=True)
    return settings


OPTION_GROUPS: tuple[type, ...] = (Selection, EngineLimits, Output)


def split_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Sort flat option names (the fields of ``RunConfig``, as ``callbench.run`` takes them) into
    ``evaluate``'s keyword arguments: ``selection``, ``limits``, ``output``, ``generation``, ``mode``,
    ``agent``."""
    names = {group: {f.name for f in fields(group)} for group in OPTION_GROUPS}
    known = set().union(*names.values(), {"settings", "harness_mode", "agent"})
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"unknown run option {unknown[0]!r}{did_you_mean(unknown[0], known)}")
    out: dict[str, Any] = {
        key: group(**{k: v for k, v in options.items() if k in names[group]})
        for key, group in (("selection", Selection), ("limits", EngineLimits), ("output", Output))
    }
    out["generation"] = generation_settings(options.get("settings"))
    if "harness_mode" in options:
        out["mode"] = options["harness_mode"]
    if "agent" in options:
        out["agent"] = options["agent"]
    return out


# --- the engine's input ------------------------------------------------------------------------


@dataclass(frozen=True)
class RunConfig:
    """Every option of one run, flat: the engine's input. Frozen: recorded in ``run.json`` and
    compared on resume. Build it with :meth:`from_groups`; the fields of :class:`Selection`,
    :class:`EngineLimits` and :class:`Output` are checked and normalised here too."""

    suites: tuple[SuiteRef, ...] = declared("suites")
    """Suite specs or ``Suite`` objects; empty = the default suite an installed plugin declares."""
    model: ModelRef = declared("model")
    tiers: tuple[TierRef, ...] = declared("tiers")
    """Scorer names or factories; empty = each suite's default scorers; ``all``: ``Suite.expand_scorers``."""
    harness_mode: HarnessMode = declared("harness_mode")
    agent: str | None = declared("agent")
    """``--agent``: the user's agent application (``cmd:``, ``http:`` or ``py:`` spec) in place of a
    model; the run's mode is then ``agent-under-test``."""
    # Selection
    k: int | str | None = declared("k")
    executor: str | Executor | None = declared("executor")
    data: Path | None = declared("data")
    registry: Path | None = declared("registry")
    tools: str | None = declared("tools")
    record: Path | None = declared("record")
    replay: Path | None = declared("replay")
    replay_miss: str = declared("replay_miss")
    agent_model_proxy: dict[str, str] = declared("agent_model_proxy")
    agent_otel: bool = declared("agent_otel")
    tools_isolation: str | None = declared("tools_isolation")
    user_model: str | None = declared("user_model")
    user_seed: int = declared("user_seed")
    user_temperature: float = declared("user_temperature")
    shuffle: int | None = declared("shuffle")
    suite_options: dict[str, Any] = declared("suite_options")
    case_ids: tuple[str, ...] = declared("case_ids")
    limit: int | None = declared("limit")
    trials: int = declared("trials")
    case_timeouts: dict[str, float] = declared("case_timeouts")
    recover_text_calls: bool = declared("recover_text_calls")
    size_limits: dict[str, int] = declared("size_limits")
    # Output
    out_dir: Path | None = declared("out_dir")
    runs_root: Path = declared("runs_root")
    resume: bool = declared("resume")
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    # EngineLimits
    concurrency: int = declared("concurrency")
    delay_s: float = declared("delay_s")
    rpm: float | None = declared("rpm")
    tpm: float | None = declared("tpm")
    max_connections: int | None = declared("max_connections")
    max_retries: int = declared("max_retries")
    max_retry_time_s: float = declared("max_retry_time_s")
    request_timeout_s: float | None = declared("request_timeout_s")
    cache: bool = declared("cache")
    cache_path: Path | None = declared("cache_path")
    price_table: Path | None = declared("price_table")
    backend: BackendName = declared("backend")
    ray_address: str | None = declared("ray_address")
    ray_workers: int | None = declared("ray_workers")
    # Output, display only (not recorded)
    progress: ProgressMode = declared("progress")
    watch: bool = declared("watch")
    preflight: bool = declared("preflight")
    otel: str | None = declared("otel")
    otel_content: bool = declared("otel_content")

    def __post_init__(self) -> None:
        _set(self, "suites", _refs(self.suites, (str, Suite), "suite", "a suite spec or a Suite object"))
        _set(self, "tiers", _refs(self.tiers, (str,), "tier", "a scorer name or a scorer factory", callable))
        if not (isinstance(self.model, Provider) or isinstance(self.model, str) and self.model.strip()):
            raise ConfigError(
                f"model must be a model string (e.g. 'oracle', 'openai:gpt-4o-mini') or a "
                f"Provider object, got {self.model!r}"
            )
        if self.harness_mode not in HARNESS_MODES:
            raise OptionError(
                f"unknown harness mode {self.harness_mode!r} (one of {', '.join(HARNESS_MODES)})",
                flag=FLAGS["harness_mode"],
                rule="one of " + ", ".join(HARNESS_MODES),
                value=self.harness_mode,
            )
        self._check_agent()
        _set(self, "settings", generation_settings(self.settings))
        for group in self.groups():  # checks every option; keeps the normalised values
            for name, value in group_fields(group).items():
                _set(self, name, value)

    def _check_agent(self) -> None:
        """``--agent`` replaces ``--model`` and implies the agent-under-test mode; the mode needs it."""
        if self.agent is None:
            if self.harness_mode == AGENT_UNDER_TEST:
                raise ConfigError(
                    "--mode agent-under-test needs --agent SPEC (your agent application; see docs/agents.md)"
                )
            return
        if not isinstance(self.agent, str) or not self.agent.strip():
            raise ConfigError(f"agent must be a spec string (cmd:..., http:..., py:...), got {self.agent!r}")
        parse_agent(self.agent)  # the spec's syntax: one line now, before anything loads
        if self.harness_mode not in ("production-parity", AGENT_UNDER_TEST):
            raise ConfigError(
                f"--mode {self.harness_mode} does not apply to --agent: an agent under test runs its own "
                "loop (the mode is agent-under-test)"
            )
        if self.model != "baseline":
            raise ConfigError("--agent replaces --model: give one of them")
        _set(self, "harness_mode", AGENT_UNDER_TEST)

    @classmethod
    def from_groups(
        cls,
        suites: SuiteRef | Sequence[SuiteRef] = (),
        model: ModelRef = "baseline",
        tiers: TierRef | Sequence[TierRef] = (),
        harness_mode: HarnessMode = "production-parity",
        *,
        agent: str | None = None,
        selection: Selection | None = None,
        limits: EngineLimits | None = None,
        generation: GenerationSettings | Mapping[str, Any] | None = None,
        output: Output | None = None,
    ) -> RunConfig:
        """The flat config of a run given as option groups (``None``: the group's defaults)."""
        values: dict[str, Any] = {}
        for name, group, kind in (
            ("selection", selection, Selection),
            ("limits", limits, EngineLimits),
            ("output", output, Output),
        ):
            if group is not None and not isinstance(group, kind):
                raise ConfigError(f"{name} must be a callbench.{kind.__name__}, got {type(group).__name__}")
            values.update(group_fields(group or kind()))
        return cls(  # the validator below normalises single values and sequences to tuples
            suites=suites,  # type: ignore[arg-type]
            model=model,
            tiers=tiers,  # type: ignore[arg-type]
            harness_mode=harness_mode,
            agent=agent,
            settings=generation_settings(generation),
            **values,
        )

    def groups(self) -> tuple[Selection, EngineLimits, Output]:
        """This config's options as groups (built, so checked)."""
        own = group_fields(self)

        def pick(kind: type) -> dict[str, Any]:
            return {f.name: own[f.name] for f in fields(kind)}

        return Selection(**pick(Selection)), EngineLimits(**pick(EngineLimits)), Output(**pick(Output))

    def recorded_options(self) -> dict[str, Any]:
        """The engine options worth recording in ``run.json`` beside the whole config: the pacing and
        retry options (a local cache path excepted) and the case selection."""
        shown = [n for n in names(group="limits", on_resume="may-override") if n != "cache_path"]
        options = {name: getattr(self, name) for name in [*shown, "case_ids", "limit", "suite_options"]}
        options["case_ids"] = list(self.case_ids)
        options["price_table"] = str(self.price_table) if self.price_table else None
        return {**options, "config": config_to_dict(self)}


def _check_declarations() -> None:
    """Every field of the option groups and ``RunConfig`` is a declared run option of the right group
    and every declared option is a field: checked once, when this module is imported, so that a table
    entry without its field (or the reverse) fails every run and every test at once."""
    groups: dict[str, set[str]] = {
        group: {f.name for f in fields(kind)}
        for group, kind in (("selection", Selection), ("limits", EngineLimits), ("output", Output))
    }
    groups["run"] = {f.name for f in fields(RunConfig)} - {"settings"} - set().union(*groups.values())
    groups["generation"] = set(GenerationSettings.model_fields) & {o.name for o in RUN_OPTIONS}
    for option in RUN_OPTIONS:
        if option.name not in groups[option.group]:
            raise AssertionError(
                f"run option {option.name!r} is declared in {option.group!r} but has no field there"
            )
    for group, members in groups.items():
        for name in members:
            declared_as = OPTIONS.get(name)
            if declared_as is None or declared_as.group != group:
                raise AssertionError(f"field {name!r} ({group}) is not a declared run option of that group")
    defaults = GenerationSettings()
    for option in RUN_OPTIONS:
        if option.group == "generation" and getattr(defaults, option.name) != option.default:
            raise AssertionError(f"GenerationSettings.{option.name}'s default differs from its declaration")


def _refs(
    value: Any, kinds: tuple[type, ...], what: str, rule: str, also: Callable[[Any], bool] = lambda _: False
) -> tuple[Any, ...]:
    """A bare reference or a sequence of them, as a tuple; anything else is one error line."""
    items = (value,) if isinstance(value, (str, *kinds)) or also(value) else value
    if not isinstance(items, Sequence):
        raise ConfigError(f"{what}s must be {rule} or a list of them, got {type(value).__name__}")
    for item in items:
        if not (isinstance(item, kinds) or also(item)) or isinstance(item, str) and not item.strip():
            raise ConfigError(f"{what} must be {rule}, got {item!r}")
    return tuple(items)


_check_declarations()

PATH_FIELDS = ("data", "registry", "out_dir", "runs_root", "cache_path", "price_table")
OBJECT_FIELDS = ("suites", "model", "tiers", "executor")
"""Fields that may hold Python objects; ``run.json`` records each object as :data:`OBJECT_SPEC`."""


def _recorded_ref(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_recorded_ref(item) for item in value]
    return value if value is None or isinstance(value, str) else OBJECT_SPEC


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    """A JSON-safe dict of the config (for ``run.json``; read back by :func:`config_from_dict`)."""
    out: dict[str, Any] = {}
    for name in config.__dataclass_fields__:
        if name in UNRECORDED_FIELDS:
            continue
        value = getattr(config, name)
        if name in OBJECT_FIELDS:
            value = _recorded_ref(value)
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, GenerationSettings):
            value = value.model_dump()
        out[name] = value
    return out


def recorded_objects(data: Mapping[str, Any]) -> list[str]:
    """The fields of a recorded config that held Python objects (nothing to rebuild them from)."""
    found = []
    for name in OBJECT_FIELDS:
        value = data.get(name)
        if value == OBJECT_SPEC or isinstance(value, list) and OBJECT_SPEC in value:
            found.append(name)
    return found


def config_from_dict(data: dict[str, Any], **overrides: Any) -> RunConfig:
    """Rebuild a config recorded by :func:`config_to_dict`, with ``overrides`` applied. A config
    that held Python objects cannot be rebuilt (see :func:`recorded_objects`)."""
    objects = recorded_objects(data)
    if objects:
        raise ConfigError(
            f"the recorded configuration held Python objects ({', '.join(objects)}); "
            "run.json cannot rebuild them"
        )
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
