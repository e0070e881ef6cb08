"""Every option of a run, declared once.

Each :class:`RunOption` says what the option is called (its ``RunConfig`` field, or its
``GenerationSettings`` field), its command-line flag and help, the type and default the command line
shows, how a command-line value becomes the config's value, its config default, and what a
``--resume`` may do with it. From :data:`RUN_OPTIONS` are derived:

* the parameters of ``callbench run`` (:mod:`callbench.cli.run` builds its signature from them) and
  the options other commands share with it (:mod:`callbench.cli.options`);
* the defaults of the option groups' fields and their flags in error messages
  (:mod:`callbench.harness.config`, whose groups are checked against this table when imported);
* the resume rules: which recorded options a resumed run must keep because they change verdicts,
  which it may override (and records in the resume event), which are not recorded at all
  (:mod:`callbench.harness.prepare`);
* the Python API's keywords (``callbench.run(..., concurrency=4)``): ``RunOptions`` in
  :mod:`callbench.api` is written out for type checkers and held equal to this table by a test.

Adding an option: one entry here, its field in the option group (typed, ``= declared("name")``), and
what the engine does with it. This module imports nothing but the standard library and
:mod:`callbench.errors`: every ``callbench`` invocation, ``--help`` included, reads it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from callbench.errors import ConfigError

Group = Literal["run", "selection", "limits", "output", "generation"]
"""Where the option lives: ``run`` (``RunConfig``'s own: suites, model, tiers, mode, agent), the
option groups ``Selection`` / ``EngineLimits`` / ``Output``, or ``GenerationSettings``."""

OnResume = Literal["must-match", "may-override", "not-recorded", "set-by-resume"]
"""What ``--resume`` does with an option:

* ``must-match``: it changes verdicts; recorded in ``run.json`` and a resumed run given another
  value is refused with one line (the recorded value is used when it is not given);
* ``may-override``: recorded, and a resumed run may change it (pacing, retries, the cache, which
  cases run, where the data is); each change is kept in the resume event;
* ``not-recorded``: how the run is shown or where it executes, never what it measures;
* ``set-by-resume``: the run folder itself (``--resume FOLDER`` decides it).
"""

DEFAULT_REQUEST_TIMEOUT_S = 60.0
"""Seconds per model request before it is retried, unless the run says otherwise: well below the
default case limit (120 s), so that a slow request is retried inside its case (docs/providers.md)."""

_SAME = object()


@dataclass(frozen=True)
class RunOption:
    """One run option, as every place that handles it needs it."""

    name: str
    """The ``RunConfig`` field (for ``group="generation"``: the ``GenerationSettings`` field); also the
    parameter name of ``callbench run`` and the keyword of ``callbench.run``."""
    group: Group
    flag: str | None
    """The command-line flag (``None``: the Python API only)."""
    help: str
    """The command line's help text (also what the API documentation says of the field)."""
    default: Any
    """The config's default (a list or dict default is copied for every config)."""
    cli_type: Any = None
    """The type the command line parses (``None``: the option has no flag)."""
    cli_default: Any = _SAME
    """The default the command line shows, when it differs from :attr:`default` (``--no-cache``:
    ``False`` for ``cache=True``; a repeatable option: ``None`` for an empty tuple)."""
    short: str | None = None
    on_resume: OnResume = "must-match"
    from_cli: Callable[[Any], Any] | None = None
    """How a command-line value becomes the config's value (``None``: as it is)."""

    @property
    def changes_verdicts(self) -> bool:
        """Whether two runs that differ in this option may give different verdicts: exactly the options
        a resumed run must keep."""
        return self.on_resume == "must-match"

    @property
    def shown_default(self) -> Any:
        """The default of the command-line parameter."""
        return self.default if self.cli_default is _SAME else self.cli_default

    def config_value(self, cli_value: Any) -> Any:
        """The config's value for a value the command line parsed."""
        return cli_value if self.from_cli is None else self.from_cli(cli_value)


# --- command-line values into config values ---------------------------------------------------


def parse_key_values(items: Sequence[str] | None, flag: str = "--option") -> dict[str, str]:
    """``KEY=VALUE`` items (``--option``) as a dict; an item without ``=`` is one error line."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def parse_case_timeouts(items: Sequence[str] | None) -> dict[str, float]:
    """``--case-timeout`` values (``SECONDS`` or ``SUITE=SECONDS``) as ``{suite or "*": seconds}``."""
    out: dict[str, float] = {}
    for item in items or []:
        suite, sep, seconds = item.rpartition("=")
        key = suite.strip() if sep else "*"
        if sep and not key:
            raise ConfigError(f"--case-timeout expects SECONDS or SUITE=SECONDS, got {item!r}")
        try:
            value = float(seconds)
        except ValueError:
            raise ConfigError(
                f"--case-timeout expects SECONDS or SUITE=SECONDS, got {item!r}: {seconds.strip()!r} is not "
                "a number"
            ) from None
        if not value > 0 or value != value or value == float("inf"):
            raise ConfigError(f"--case-timeout must be a positive number of seconds (got {item!r})")
        out[key] = value
    return out


def parse_on_off(value: str, flag: str) -> bool:
    """``on``/``off`` (also ``true``/``false``, ``1``/``0``) as a bool; anything else is one line."""
    text = value.strip().lower()
    if text in ("on", "true", "1", "yes"):
        return True
    if text in ("off", "false", "0", "no"):
        return False
    raise ConfigError(f"{flag} must be on or off (got {value!r})")


REPLAY_MISSES = ("strict", "live", "model-visible")
"""``--replay-miss``: what answers a call the cassette does not hold (:mod:`callbench.executors.cassette`)."""


MODEL_APIS = ("openai", "anthropic")
"""The APIs the agent's model proxy serves (``--agent-model-proxy [API=]URL``)."""


def parse_model_upstreams(value: Any, where: str = "--agent-model-proxy") -> dict[str, str]:
    """``--agent-model-proxy`` items (``URL`` for the OpenAI-compatible API, ``anthropic=URL``), a
    single string, or a mapping (the API's), as ``{api: url}``; a bad item is one error line."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        items = [f"{k}={v}" for k, v in value.items()]
    elif isinstance(value, str):
        items = [value]
    elif isinstance(value, Sequence):
        items = [str(v) for v in value]
    else:
        raise ConfigError(f"{where} must be a URL, API=URL items or a mapping, got {type(value).__name__}")
    out: dict[str, str] = {}
    for item in items:
        api, sep, url = item.strip().partition("=")
        if not sep or "://" in api:
            api, url = "openai", item.strip()
        api, url = api.strip().lower(), url.strip()
        if api not in MODEL_APIS:
            raise ConfigError(f"{where}: unknown API {api!r} in {item!r} (one of {', '.join(MODEL_APIS)})")
        if not re.match(r"https?://[^/\s]+", url):
            raise ConfigError(f"{where}: {item!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
        out[api] = url.rstrip("/")
    return out


SIZE_LIMIT_KEYS = ("reply", "answer", "tool_result", "stderr")
"""What ``--size-limit`` caps in a record: each round's model reply (text, text as received, reasoning)
and so the final text, an agent's answer, each tool result (and tool error), a stderr tail."""
DEFAULT_SIZE_LIMITS: dict[str, int] = {
    "reply": 1 << 20,
    "answer": 1 << 20,
    "tool_result": 1 << 20,
    "stderr": 16 << 10,
}
"""Bytes of UTF-8 a record keeps of each (1 MiB, 1 MiB, 1 MiB, 16 KiB); over it, a head and a tail
(:mod:`callbench.types.textcap`). No built-in suite's verdicts come near them."""
MIN_SIZE_LIMIT = 64
"""The smallest limit (bytes): room for a head and a tail around the cut marker."""
_SIZE_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1 << 10, "mib": 1 << 20}
_SIZE_UNITS["gib"] = 1 << 30
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)
SIZE_RULE = "a size in bytes, or with B, KB, MB, GB, KiB, MiB or GiB (e.g. 2MB), of at least 64 B"


def parse_size(value: Any) -> int | None:
    """A size (``2MB``, ``512KiB``, ``4096``, an int) in bytes; ``None`` when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    found = _SIZE.fullmatch(value) if isinstance(value, str) else None
    unit = _SIZE_UNITS.get(found[2].lower()) if found else None
    if found is None or unit is None:
        return None
    return int(float(found[1]) * unit)


def parse_size_limits(value: Any, where: str = "--size-limit") -> dict[str, int]:
    """Every size limit, from ``KEY=SIZE`` items (each may hold several, comma-separated: the command
    line's ``--size-limit reply=2MB,stderr=16KiB``) or a mapping (the API's); keys not given keep
    their default (:data:`DEFAULT_SIZE_LIMITS`). A bad key or size is one error line naming it."""
    given: dict[str, Any] = {}
    if isinstance(value, Mapping):
        given = dict(value)
    elif isinstance(value, (str, Sequence)) or value is None:
        for item in [value] if isinstance(value, str) else value or []:
            for part in str(item).split(","):
                if not part.strip():
                    continue
                key, sep, size = part.partition("=")
                if not sep or not key.strip():
                    raise ConfigError(
                        f"{where} expects KEY=SIZE (keys: {', '.join(SIZE_LIMIT_KEYS)}), got {part!r}"
                    )
                given[key.strip()] = size.strip()
    else:
        raise ConfigError(f"{where} must be KEY=SIZE items or a mapping of them, got {type(value).__name__}")
    out = dict(DEFAULT_SIZE_LIMITS)
    for key, size in given.items():
        if key not in DEFAULT_SIZE_LIMITS:
            raise ConfigError(f"{where}: unknown key {key!r} (keys: {', '.join(SIZE_LIMIT_KEYS)})")
        limit = parse_size(size)
        if limit is None or limit < MIN_SIZE_LIMIT:
            raise ConfigError(f"{where}: {key}={size!r} is not {SIZE_RULE}")
        out[key] = limit
    return out


def _repeated(value: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(value or ())


def _negated(value: bool) -> bool:
    return not value


def _parallel_calls(value: str) -> bool:
    return parse_on_off(value, "--parallel-tool-calls")


# --- the table ---------------------------------------------------------------------------------

_REPEATED = list[str] | None

RUN_OPTIONS: tuple[RunOption, ...] = (
    # RunConfig's own: what runs, against what, scored how
    RunOption(
        "suites",
        "run",
        "--suite",
        help="Suite name, spec or path (repeatable).",
        default=(),
        cli_type=_REPEATED,
        cli_default=None,
        short="-s",
        from_cli=_repeated,
    ),
    RunOption(
        "model",
        "run",
        "--model",
        help="provider:model, or a built-in agent: baseline, oracle, refuse, noisy:SEED, planner.",
        default="baseline",
        cli_type=str,
        short="-m",
    ),
    RunOption(
        "agent",
        "run",
        "--agent",
        help="Your agent application instead of a model, given each case's tools over MCP: "
        "cmd:COMMAND, http:URL or py:module:function (docs/agents.md).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "tiers",
        "run",
        "--tier",
        help="Scorer/tier name (repeatable) or 'all'.",
        default=(),
        cli_type=_REPEATED,
        cli_default=None,
        short="-t",
        from_cli=_repeated,
    ),
    RunOption(
        "harness_mode",
        "run",
        "--mode",
        help="production-parity or oracle-assisted (with --agent: agent-under-test, implied).",
        default="production-parity",
        cli_type=str,
    ),
    # Selection: which cases run and how
    RunOption(
        "k",
        "selection",
        "--k",
        help="Top-k tool retrieval, or 'all' (default: the suite's, 24).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "executor",
        "selection",
        "--executor",
        help="Override the suites' executor (e.g. contract).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "data",
        "selection",
        "--data",
        help="Local data set path for suites that need one.",
        default=None,
        cli_type=Path | None,
        on_resume="may-override",
    ),
    RunOption(
        "registry",
        "selection",
        "--registry",
        help="Tool registry folder for path suites.",
        default=None,
        cli_type=Path | None,
        on_resume="may-override",
    ),
    RunOption(
        "tools",
        "selection",
        "--tools",
        help="A live MCP server as the tools of path suites: mcp:stdio:COMMAND ARGS or "
        "mcp:http://HOST/PATH (docs/mcp.md).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "record",
        "selection",
        "--record",
        help="Record every exchange with the suites' MCP tool servers into this cassette folder, one "
        "file per case (docs/mcp.md).",
        default=None,
        cli_type=Path | None,
        on_resume="may-override",
    ),
    RunOption(
        "replay",
        "selection",
        "--replay",
        help="Answer the suites' MCP tool calls from this cassette folder (--record's); no tool server "
        "is started.",
        default=None,
        cli_type=Path | None,
    ),
    RunOption(
        "replay_miss",
        "selection",
        "--replay-miss",
        help="--replay: a call the cassette lacks is strict (error record cassette_miss), live (sent "
        "to the server and added) or model-visible (an error result the model sees).",
        default="strict",
        cli_type=str,
    ),
    RunOption(
        "agent_model_proxy",
        "selection",
        "--agent-model-proxy",
        help="--agent: serve the agent's model through callbench (tokens, latency, cost per case; "
        "--record/--replay keep or answer its requests) forwarding to this endpoint: URL (OpenAI-"
        "compatible) or anthropic=URL (repeatable; docs/agents.md#the-agents-model).",
        default={},
        cli_type=_REPEATED,
        cli_default=None,
        on_resume="may-override",
        from_cli=parse_model_upstreams,
    ),
    RunOption(
        "agent_otel",
        "selection",
        "--agent-otel",
        help="--agent: receive the agent's own OpenTelemetry spans (an OTLP/HTTP endpoint on 127.0.0.1 "
        "per case, given as OTEL_EXPORTER_OTLP_ENDPOINT) and record its model requests, tokens and "
        "cost from them (docs/agents.md#the-agents-own-spans-opentelemetry).",
        default=False,
        cli_type=bool,
        on_resume="may-override",
    ),
    RunOption(
        "user_model",
        "selection",
        "--user-model",
        help="Conversation suites: the model that plays the user (a model spec, as --model takes); "
        "without it each conversation's scripted user plays. Runs with different users are never pooled "
        "(docs/conversations.md).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "user_seed",
        "selection",
        "--user-seed",
        help="The simulated user's sampling seed (trial t uses SEED+t-1).",
        default=0,
        cli_type=int,
    ),
    RunOption(
        "user_temperature",
        "selection",
        "--user-temperature",
        help="The simulated user's sampling temperature.",
        default=0.0,
        cli_type=float,
    ),
    RunOption(
        "tools_isolation",
        "selection",
        "--tools-isolation",
        help="What a case may see of another's calls to a live MCP tool server: case (a server per case), "
        "run (one server per run) or shared (verdicts may depend on case order); default: case unless "
        "every tool says readOnlyHint (docs/mcp.md#isolation).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "suite_options",
        "selection",
        "--option",
        help="Suite option KEY=VALUE (repeatable).",
        default={},
        cli_type=_REPEATED,
        cli_default=None,
        from_cli=parse_key_values,
    ),
    RunOption(
        "case_ids",
        "selection",
        "--case",
        help="Run only this case id (repeatable).",
        default=(),
        cli_type=_REPEATED,
        cli_default=None,
        on_resume="may-override",
        from_cli=_repeated,
    ),
    RunOption(
        "limit",
        "selection",
        "--limit",
        help="At most N cases per suite.",
        default=None,
        cli_type=int | None,
        on_resume="may-override",
    ),
    RunOption(
        "trials",
        "selection",
        "--trials",
        help="Repeat every case K times.",
        default=1,
        cli_type=int,
        on_resume="may-override",
    ),
    RunOption(
        "shuffle",
        "selection",
        "--shuffle",
        help="Run the cases in an order drawn from this seed (verdicts must not depend on the order).",
        default=None,
        cli_type=int | None,
        on_resume="may-override",
    ),
    RunOption(
        "case_timeouts",
        "selection",
        "--case-timeout",
        help="Case time limit in seconds for every case (replacing their own), or SUITE=SECONDS for one "
        "suite (repeatable). For slow local servers.",
        default={},
        cli_type=_REPEATED,
        cli_default=None,
        from_cli=parse_case_timeouts,
    ),
    RunOption(
        "recover_text_calls",
        "selection",
        "--recover-text-calls",
        help="Score calls a server left in the answer text (its tool-call parser failed) as calls, recorded "
        "as recovered; such runs are never pooled with native ones.",
        default=False,
        cli_type=bool,
    ),
    RunOption(
        "size_limits",
        "selection",
        "--size-limit",
        help="What a record keeps of a model reply, an agent answer, a tool result and a stderr tail: "
        "KEY=SIZE, comma-separated or repeated (default reply=1MiB,answer=1MiB,tool_result=1MiB,"
        "stderr=16KiB); over it, a head and a tail, the cut noted.",
        default=DEFAULT_SIZE_LIMITS,
        cli_type=_REPEATED,
        cli_default=None,
        from_cli=parse_size_limits,
    ),
    # EngineLimits: how hard the endpoint is pushed, and how the run recovers
    RunOption(
        "concurrency",
        "limits",
        "--concurrency",
        help="Cases in flight at once.",
        default=8,
        cli_type=int,
        short="-c",
        on_resume="may-override",
    ),
    RunOption(
        "delay_s",
        "limits",
        "--delay",
        help="Seconds between case starts.",
        default=0.0,
        cli_type=float,
        on_resume="may-override",
    ),
    RunOption(
        "rpm",
        "limits",
        "--rpm",
        help="Requests per minute per endpoint.",
        default=None,
        cli_type=float | None,
        on_resume="may-override",
    ),
    RunOption(
        "tpm",
        "limits",
        "--tpm",
        help="Tokens per minute per endpoint.",
        default=None,
        cli_type=float | None,
        on_resume="may-override",
    ),
    RunOption(
        "max_connections",
        "limits",
        "--max-connections",
        help="Open requests per endpoint.",
        default=None,
        cli_type=int | None,
        on_resume="may-override",
    ),
    RunOption(
        "max_retries",
        "limits",
        "--max-retries",
        help="Retries per request on 429/5xx/timeouts.",
        default=6,
        cli_type=int,
        on_resume="may-override",
    ),
    RunOption(
        "max_retry_time_s",
        "limits",
        "--max-retry-time",
        help="Cap on retry time per request (s).",
        default=300.0,
        cli_type=float,
        on_resume="may-override",
    ),
    RunOption(
        "request_timeout_s",
        "limits",
        "--request-timeout",
        help="Seconds per model request before it is retried; keep it well below the case time limit "
        "(120 s unless the case sets one).",
        default=DEFAULT_REQUEST_TIMEOUT_S,
        cli_type=float,
        on_resume="may-override",
    ),
    RunOption(
        "cache",
        "limits",
        "--no-cache",
        help="Do not read or write the response cache.",
        default=True,
        cli_type=bool,
        cli_default=False,
        on_resume="may-override",
        from_cli=_negated,
    ),
    RunOption(
        "cache_path",
        "limits",
        None,
        help="The response cache file (None: the default location).",
        default=None,
        on_resume="may-override",
    ),
    RunOption(
        "price_table",
        "limits",
        "--price-table",
        help="YAML/JSON prices per model for cost estimates.",
        default=None,
        cli_type=Path | None,
        on_resume="may-override",
    ),
    RunOption(
        "backend",
        "limits",
        "--backend",
        help="Where cases run: local (this process) or ray (Ray workers; docs/scale-out.md).",
        default="local",
        cli_type=str,
        on_resume="not-recorded",
    ),
    RunOption(
        "ray_address",
        "limits",
        "--ray-address",
        help="--backend ray: the cluster to join (auto, host:port, ray://host:port; default: start a local "
        "Ray instance).",
        default=None,
        cli_type=str | None,
        on_resume="not-recorded",
    ),
    RunOption(
        "ray_workers",
        "limits",
        "--ray-workers",
        help="--backend ray: workers playing cases, each at --concurrency (default: one per CPU).",
        default=None,
        cli_type=int | None,
        on_resume="not-recorded",
    ),
    # Output: where the run folder goes and what is shown
    RunOption(
        "out_dir",
        "output",
        "--out",
        help="Run folder (default runs/<timestamp>-<model>-<suite>).",
        default=None,
        cli_type=Path | None,
        short="-o",
        on_resume="set-by-resume",
    ),
    RunOption(
        "runs_root",
        "output",
        None,
        help="Where run folders go by default.",
        default=Path("runs"),
        on_resume="set-by-resume",
    ),
    RunOption(
        "resume",
        "output",
        "--resume",
        help="Continue the run in this folder (re-runs error records).",
        default=False,
        cli_type=Path | None,
        cli_default=None,
        on_resume="set-by-resume",
    ),
    RunOption(
        "preflight",
        "output",
        "--preflight",
        help="Check the endpoint (callbench doctor) before any case runs; the table goes in run.json.",
        default=False,
        cli_type=bool,
        on_resume="not-recorded",
    ),
    RunOption(
        "otel",
        "output",
        "--otel",
        help="Send one OpenTelemetry trace per case (GenAI conventions) to an OTLP/HTTP collector "
        "(http://HOST:4318) or a JSON-lines file (file:PATH); docs/interop.md#opentelemetry.",
        default=None,
        cli_type=str | None,
        on_resume="not-recorded",
    ),
    RunOption(
        "otel_content",
        "output",
        "--otel-content",
        help="--otel: also send what was said (tool arguments and results, model texts): the "
        "conventions' opt-in content attributes.",
        default=False,
        cli_type=bool,
        on_resume="not-recorded",
    ),
    RunOption(
        "progress",
        "output",
        "--progress",
        help="auto, rich, plain or quiet.",
        default="quiet",
        cli_type=str,
        cli_default="auto",
        on_resume="not-recorded",
    ),
    RunOption(
        "watch",
        "output",
        "--watch",
        help="Print every round as it happens (use with --case).",
        default=False,
        cli_type=bool,
        on_resume="not-recorded",
    ),
    # GenerationSettings: what every model request asks for
    RunOption(
        "temperature",
        "generation",
        "--temperature",
        help="Sampling temperature (0: the most likely answer; only 0 reads and writes the cache).",
        default=0.0,
        cli_type=float,
    ),
    RunOption(
        "max_tokens",
        "generation",
        "--max-tokens",
        help="Most tokens the model may write in one reply.",
        default=4096,
        cli_type=int,
    ),
    RunOption(
        "seed",
        "generation",
        "--seed",
        help="Provider sampling seed where supported.",
        default=None,
        cli_type=int | None,
    ),
    RunOption(
        "reasoning_effort",
        "generation",
        "--reasoning-effort",
        help="Reasoning models: none, minimal, low, medium, high or xhigh (Chat Completions "
        "reasoning_effort, Responses reasoning.effort).",
        default=None,
        cli_type=str | None,
    ),
    RunOption(
        "thinking_budget",
        "generation",
        "--thinking-budget",
        help="Anthropic extended thinking: tokens the model may think before answering (uses the default "
        "temperature; such replies are not cached).",
        default=None,
        cli_type=int | None,
    ),
    RunOption(
        "tool_choice",
        "generation",
        "--tool-choice",
        help="auto, required, none, or a tool name to force (sent as the API's tool_choice).",
        default="auto",
        cli_type=str,
    ),
    RunOption(
        "parallel_tool_calls",
        "generation",
        "--parallel-tool-calls",
        help="on or off: whether the model may make several calls in one answer.",
        default=True,
        cli_type=str,
        cli_default="on",
        from_cli=_parallel_calls,
    ),
    RunOption(
        "stream",
        "generation",
        "--stream",
        help="Stream answers (tool-call deltas assembled, time to first token recorded), as deployed.",
        default=False,
        cli_type=bool,
    ),
)
"""Every run option, in the order ``callbench run --help`` lists them."""

OPTIONS: dict[str, RunOption] = {option.name: option for option in RUN_OPTIONS}

GENERATION_TIMEOUT = "timeout_s"
"""The generation setting that follows ``--request-timeout`` (the one a resume may change)."""

FLAGS: dict[str, str] = {
    **{option.name: option.flag for option in RUN_OPTIONS if option.flag},
    GENERATION_TIMEOUT: "--request-timeout",
}
"""The command-line flag of each option (and of each generation setting), named in error messages."""


def names(*, group: Group | None = None, on_resume: OnResume | None = None) -> tuple[str, ...]:
    """The options of ``group`` and/or with the resume rule ``on_resume``, in table order."""
    return tuple(
        option.name
        for option in RUN_OPTIONS
        if (group is None or option.group == group) and (on_resume is None or option.on_resume == on_resume)
    )


VERDICT_FIELDS = tuple(name for name in names(on_resume="must-match") if OPTIONS[name].group != "generation")
"""Recorded ``RunConfig`` fields a resumed run must keep: they change verdicts (so do the generation
settings, compared one by one)."""
OVERRIDABLE_FIELDS = names(on_resume="may-override")
"""Recorded fields a resumed run may change; each change is recorded in the resume event."""
UNRECORDED_FIELDS = names(on_resume="not-recorded") + ("resume",)
"""Left out of ``run.json``'s config: how a run is shown or where it executes, never what it measures
(and whether this start was a resume, which the resume events say)."""
