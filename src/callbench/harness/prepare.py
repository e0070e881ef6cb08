"""Preparing a run: suites, scorers, model, header; resume checks.

Reading and writing the run folder on disk is :mod:`callbench.harness.runfolder`'s.
"""

from __future__ import annotations

import itertools
import os
import platform
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.catalog import catalog
from callbench.errors import ConfigError, UserError
from callbench.executors.base import Executor, resolve_executor
from callbench.harness.config import (
    FLAGS,
    OBJECT_SPEC,
    ModelRef,
    RunConfig,
    SuiteRef,
    TierRef,
    config_from_dict,
    config_to_dict,
    recorded_objects,
)
from callbench.harness.conversation import UserSimulatorConfig
from callbench.harness.modes import ModePolicy, prompt_template_hash
from callbench.harness.runfolder import (
    RUN_FILE,
    iter_records,
    read_header,
    set_aside_torn_tail,
    write_header,
)
from callbench.harness.runlock import RunLock, acquire
from callbench.harness.tool_isolation import apply_isolation, isolation_records
from callbench.providers.agent_under_test import AgentRunner, parse_agent
from callbench.providers.base import Provider
from callbench.providers.model import Model, build_model
from callbench.providers.presets import documented_key_variables
from callbench.providers.reachability import check_endpoint
from callbench.scoring.lint import suite_notes
from callbench.secrets import (
    blank_url_credentials,
    has_blanked_url_password,
    register_environment_keys,
    register_url_credentials,
)
from callbench.suites.loader import load_suite_path
from callbench.suites.resolve import load_suite, looks_like_path
from callbench.suites.suite import Suite
from callbench.tools.manifest import registry_manifest
from callbench.types.case import Case
from callbench.types.manifest import ToolSourceManifest, ToolSourcesChanged, diff_manifests
from callbench.types.names import did_you_mean
from callbench.types.records import ResumeEvent, RunHeader, SuiteInfo
from callbench.types.run_options import GENERATION_TIMEOUT, OVERRIDABLE_FIELDS, VERDICT_FIELDS
from callbench.types.version import __version__

if TYPE_CHECKING:
    from callbench.harness.agent_model import AgentModelSetup
    from callbench.harness.cassettes import RunCassette


@dataclass
class Prepared:
    run_dir: Path
    header: RunHeader
    suites: list[Suite]
    scorers: dict[str, dict[str, Any]]
    model: Model | None
    """The model callbench's loop drives; ``None`` when an agent under test plays instead."""
    completed: set[tuple[str, int]] = field(default_factory=set)
    """(key, trial) of the records already completed in the run folder (a resumed run); error records
    are re-run. Only the ids are kept: the summary reads the records from disk when the run ends."""
    executors: dict[str, Executor] = field(default_factory=dict)
    agent: AgentRunner | None = None
    """``--agent``: the user's agent application, run per case against the case's MCP endpoint."""
    lock: RunLock | None = None
    """The run folder's lock, held until the run has written its summary."""
    cassette: RunCassette | None = None
    """``--record`` / ``--replay``: the run's cassette (:mod:`callbench.harness.cassettes`)."""
    agent_model: AgentModelSetup | None = None
    """``--agent`` with its model served through callbench (:mod:`callbench.harness.agent_model`)."""
    simulator: UserSimulatorConfig | None = None
    """``--user-model``: the simulated user of the run's conversation cases."""

    def done(self) -> set[tuple[str, int]]:
        """(key, trial) pairs already completed."""
        return self.completed

    def executors_in_use(self) -> list[Executor]:
        """The executors :meth:`executor_for` made (to close when the run ends)."""
        return list(self.executors.values())

    def executor_for(self, suite: Suite, case: Case, override: str | Executor | None) -> Executor:
        return shared_executor(self.executors, suite, case, override)


def shared_executor(
    executors: dict[str, Executor], suite: Suite, case: Case, override: str | Executor | None
) -> Executor:
    """The executor ``case`` runs on (``override`` or the suite's choice), made once per name and kept
    in ``executors`` (the run closes them when it ends)."""
    target = override or suite.executor_name(case)
    key = target if isinstance(target, str) else f"{suite.name}:{id(target)}"
    if key not in executors:
        executors[key] = resolve_executor(target)
    return executors[key]


def load_suites(config: RunConfig, cassette: RunCassette | None = None) -> list[Suite]:
    """The run's suites: specs loaded (with the run's loader options), ``Suite`` objects as given."""
    if config.tools is not None:
        return apply_isolation(config, _suites_on_mcp_tools(config, config.tools, cassette))
    suites = [
        spec
        if isinstance(spec, Suite)
        else load_suite(spec, data=config.data, registry=config.registry, **config.suite_options)
        for spec in config.suites
    ]
    _check_unique_names(suites)
    return apply_isolation(config, suites)  # of the suites whose tools run on a live MCP server


def _suites_on_mcp_tools(config: RunConfig, spec: str, cassette: RunCassette | None = None) -> list[Suite]:
    """Path suites whose registry is a live MCP server's tool listing and whose calls go to it."""
    from callbench.executors.mcp import load_mcp_tools

    for ref in config.suites:
        if isinstance(ref, Suite) or not looks_like_path(ref):
            name = ref.name if isinstance(ref, Suite) else ref
            raise ConfigError(
                f"--tools {spec}: applies to suites given as a path (cases that call the server's tools); "
                f"{name!r} brings its own tools"
            )
    # one line naming the server if it cannot start or lists a bad schema; replayed: nothing starts
    source = load_mcp_tools(spec) if cassette is None else cassette.tool_source(spec)
    suites = []
    for ref in config.suites:
        suite = load_suite_path(str(ref), tools=source.registry, executor=source.executor())
        suite.metadata["tool_source"] = {"spec": spec, "notes": list(source.notes)}
        suite.metadata["tool_manifest"] = source.manifest
        suites.append(suite)
    _check_unique_names(suites)
    return suites


def _check_unique_names(suites: list[Suite]) -> None:
    names = [s.name for s in suites]
    if len(set(names)) != len(names):
        raise ConfigError(f"the same suite appears twice in one run: {names}")


def check_selection(suites: Sequence[Suite], case_ids: Sequence[str]) -> None:
    """Every ``--case`` must name a case of some suite of the run; one line names the first that
    does not, with the closest ids (or a few of them) so the next try can succeed."""
    for selector in case_ids:
        if any(suite.select([selector]) for suite in suites):
            continue
        ids = [case.id for suite in suites for case in suite.cases]
        names = ("suites " if len(suites) > 1 else "suite ") + ", ".join(repr(s.name) for s in suites)
        close = did_you_mean(selector, ids + [i.rpartition("/")[2] for i in ids if "/" in i])
        close = "" if close.startswith(" (available") else close
        shown = ", ".join(ids[:8]) + (f", ... ({len(ids)} in all)" if len(ids) > 8 else "")
        known = f"; its ids: {shown}" if ids else "; it has no cases"
        raise UserError(f"--case {selector!r}: no case of {names} has this id{close}{known}")


def build_scorers(suite: Suite, tiers: Sequence[TierRef]) -> dict[str, Any]:
    """The suite's scorers by name: catalog names or factories ``f(suite)``; none given = the suite's
    defaults; ``all`` = its scorers plus the strict tiers where they apply (``Suite.expand_scorers``)."""
    table: dict[str, Any] = {}
    for ref in suite.expand_scorers(list(tiers)):
        if isinstance(ref, str):
            table[ref] = catalog().scorers.get(ref)(suite)
        else:
            scorer = ref(suite)
            table[scorer.name] = scorer
    return table


def diagnostic_scorers(suites: Sequence[Suite], scorers: dict[str, dict[str, Any]]) -> list[str]:
    """The scorers whose rows are diagnostic: those diagnostic for every suite that runs them."""
    names = list(dict.fromkeys(name for table in scorers.values() for name in table))
    return [
        name
        for name in names
        if all(name in s.diagnostic_scorers([name]) for s in suites if name in scorers.get(s.name, {}))
    ]


def build_run_model(model: ModelRef, config: RunConfig) -> Model:
    """The run's model: a model string through the catalog, or a ``Provider`` object as given,
    wrapped with the run's retries, limits and cache either way."""
    if isinstance(model, Provider):
        return Model.from_config(model, config, config.settings)
    return build_model(model, config)


def model_label(model: ModelRef) -> str:
    """``run.json``'s ``model``: the model string, or for a provider object its own description."""
    if isinstance(model, str):
        return model
    info = model.describe()
    name, detail = str(info.get("provider") or model.name), str(info.get("model") or "")
    return f"{name}:{detail}" if detail and detail != name else name


def _spec(ref: SuiteRef) -> str:
    return ref if isinstance(ref, str) else OBJECT_SPEC


def _provenance(spec: SuiteRef) -> dict[str, str | None]:
    """The distribution (and its version) whose plugin registered the suite ``spec`` names."""
    if not isinstance(spec, str):
        return {}
    owner = catalog().suites.provided_by.get(spec.split(":", 1)[0])
    return {"plugin": owner.distribution, "plugin_version": owner.version} if owner is not None else {}


def _executor_name(executor: str | Executor) -> str:
    """A suite's executor as run.json names it: the catalog name, or the instance's ``name``."""
    return executor if isinstance(executor, str) else str(getattr(executor, "name", OBJECT_SPEC))


def _executor_label(executor: str | Executor | None) -> str | None:
    return executor if executor is None or isinstance(executor, str) else OBJECT_SPEC


def prepare_run(config: RunConfig) -> Prepared:
    """Load suites, scorers and model, write ``run.json`` (checking a resumed run's identity)."""
    if not config.suites:
        # The one place the default suite is looked up: whichever installed plugin declares one.
        config = replace(config, suites=(catalog().require_default_suite(),))
    if config.resume and config.out_dir is not None and (config.out_dir / RUN_FILE).exists():
        recorded = read_header(config.out_dir).options.get("config")
        if recorded:  # before anything loads: a conflicting option is one line, nothing else runs
            check_resume_config(config.out_dir, recorded, config)
    if config.price_table is not None or os.environ.get("CALLBENCH_PRICES"):
        from callbench.harness.usage import price_table

        price_table(config.price_table)  # a bad file (or $CALLBENCH_PRICES): fails now, not after the run
    # Keys of the environment and the keys file, whichever this run uses: an agent, a tool or a
    # tool server may print any of them, and no record, report or watcher may show it.
    register_environment_keys(documented_key_variables())
    if isinstance(config.model, str):
        register_url_credentials(config.model)
    cassette = None
    if config.record is not None or config.replay is not None or config.replay_miss != "strict":
        from callbench.harness.cassettes import open_run_cassette

        cassette = open_run_cassette(config)  # a missing or corrupt cassette folder: one line, now
    suites = load_suites(config, cassette)
    agent_model: AgentModelSetup | None = None
    if config.agent is not None:  # the agent's model through callbench (docs/agents.md)
        from callbench.harness.agent_model import bind_tools, open_agent_model

        agent_model = open_agent_model(config)
        if cassette is not None:  # the tools as in any run; left out when only the model is taped
            cassette = bind_tools(cassette, suites, config.executor, agent_model)
    elif config.agent_model_proxy:
        raise ConfigError("--agent-model-proxy applies to --agent runs (the agent's own model)")
    elif cassette is not None:
        cassette.bind(suites, config.executor)  # tapes the suites' MCP servers (one line if none)
    check_selection(suites, config.case_ids)  # before the run folder exists
    scorers = {s.name: build_scorers(s, config.tiers) for s in suites}
    model: Model | None = None
    agent: AgentRunner | None = None
    if config.agent is not None:
        agent = parse_agent(config.agent)
        agent.preflight()  # a command not found, a service not listening: one line, before run.json
        if agent_model is not None:
            agent_model.check_agent(agent)
    else:
        model = build_run_model(config.model, config)
        check_endpoint(model.provider)  # a server that is not listening stops the run before run.json
    simulator = build_simulator(config, suites)
    header = _header(config, suites, scorers, model, agent)
    header.simulator = simulator.info if simulator is not None else None
    completed: set[tuple[str, int]] = set()
    if config.resume and config.out_dir is not None and (config.out_dir / RUN_FILE).exists():
        run_dir = config.out_dir
        lock = acquire(run_dir, "resume")  # before anything is read: a live run is never resumed twice
        try:
            n_previous, completed = _check_resume(run_dir, header)
            # The run keeps the header it started with (its provenance); this resume is appended to it.
            started = read_header(run_dir)
            event = _resume_event(run_dir, config, n_previous)
            event.tool_sources = _changed_tool_sources(run_dir, started, header)
            if cassette is not None:
                cassette.note(started, run_dir)
            if agent_model is not None:
                agent_model.note(started, run_dir)
            started.resumes.append(event)
            write_header(run_dir, started)
        except BaseException:
            lock.release()
            raise
        prepared = Prepared(
            run_dir, started, suites, scorers, model, completed, agent=agent, lock=lock, cassette=cassette
        )
        prepared.agent_model = agent_model
        prepared.simulator = simulator
        return prepared
    if config.out_dir is None:
        run_dir = new_run_folder(config.runs_root, _run_name(header))
    else:
        run_dir = config.out_dir
        if (run_dir / RUN_FILE).exists():
            raise UserError(
                f"{run_dir} already holds a run; pass --resume to continue it or choose another --out"
            )
    header.run_id = run_dir.name
    if cassette is not None:
        cassette.note(header)
    if agent_model is not None:
        agent_model.note(header)
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = acquire(run_dir, "run")
    write_header(run_dir, header)
    prepared = Prepared(
        run_dir, header, suites, scorers, model, completed, agent=agent, lock=lock, cassette=cassette
    )
    prepared.agent_model = agent_model
    prepared.simulator = simulator
    return prepared


def build_simulator(config: RunConfig, suites: Sequence[Suite]) -> UserSimulatorConfig | None:
    """``--user-model``'s simulated user (``None`` without it). Refused with one line when no selected
    case is a conversation, so a misplaced flag never passes unnoticed."""
    if config.user_model is None:
        return None
    if not any(case.user is not None for suite in suites for case in suite.cases):
        raise ConfigError("--user-model applies to conversation suites; no selected case has a user")
    model = build_model(config.user_model, config)
    check_endpoint(model.provider)
    return UserSimulatorConfig(
        model=model, spec=config.user_model, temperature=config.user_temperature, seed=config.user_seed
    )


def _header(
    config: RunConfig,
    suites: list[Suite],
    scorers: dict[str, dict[str, Any]],
    model: Model | None,
    agent: AgentRunner | None = None,
) -> RunHeader:
    policy = ModePolicy(config.harness_mode)
    return RunHeader(
        run_id="",
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        callbench_version=__version__,
        python_version=platform.python_version(),
        model=f"agent:{agent.spec}" if agent is not None else model_label(config.model),
        provider=agent.describe() if agent is not None else model.provider.describe() if model else {},
        settings=config.settings.model_dump(),
        harness_mode=config.harness_mode,
        harness_assistance=policy.assistance(),
        suites=[
            SuiteInfo(
                name=s.name,
                spec=_spec(spec),
                hash=s.hash,
                registry_hash=s.registry.hash,
                prompt_template_hash=prompt_template_hash(s.system_prompt),
                n_cases=len(s.cases),
                source=s.source,
                data=str(config.data) if config.data else None,
                data_versions=dict(s.metadata.get("data_versions") or {}),
                notes=suite_notes(s, list(scorers.get(s.name, ()))),
                version=s.version,
                executor=_executor_label(config.executor) or _executor_name(s.executor),
                **_provenance(spec),
            )
            for spec, s in zip(config.suites, suites, strict=True)
        ],
        scorers={name: list(table) for name, table in scorers.items()},
        diagnostic_scorers=diagnostic_scorers(suites, scorers),
        executor=_executor_label(config.executor),
        retrieval_k=config.k,
        suite_k={s.name: s.retrieval_k(config.k) for s in suites},
        trials=config.trials,
        options={**config.recorded_options(), **_tool_source(suites)},
        tool_sources=tool_manifests(config, suites),
    )


def tool_manifests(config: RunConfig, suites: list[Suite]) -> list[ToolSourceManifest]:
    """The run's manifest: one entry per tool source (:mod:`callbench.types.manifest`).

    ``--tools mcp:...`` brings the entry of the listing it loaded; a suite whose tools run on a live
    MCP server of its own (``mcp-git``) has that server asked for its own (one handshake and
    ``tools/list`` before the run, so a server that cannot start stops the run with one line); any
    other suite's entry is its registry's hashes. Suites sharing one server share its entry."""
    # An McpExecutor can only exist once its module was imported: no need to import it here otherwise.
    mcp = sys.modules.get("callbench.executors.mcp")
    entries: dict[str, ToolSourceManifest] = {}
    for spec, suite in zip(config.suites, suites, strict=True):
        executor = config.executor or suite.executor
        listed = suite.metadata.get("tool_manifest")
        if isinstance(listed, ToolSourceManifest):
            entry, key = listed, f"mcp:{listed.source}"
        elif mcp is not None and isinstance(executor, mcp.McpExecutor):
            key = f"mcp:{executor.spec.text}"
            entry = entries[key] if key in entries else mcp.probe_manifest(executor)
        else:
            owner = _provenance(spec)
            entry = registry_manifest(
                suite.name,
                suite.source,
                suite.registry,
                package=owner.get("plugin"),
                package_version=owner.get("plugin_version"),
            )
            key = f"suite:{suite.name}"
        known = entries.get(key, entry)
        entries[key] = known.model_copy(update={"suites": [*known.suites, suite.name]})
    return list(entries.values())


def _changed_tool_sources(
    run_dir: Path, started: RunHeader, now: RunHeader
) -> list[ToolSourceManifest] | None:
    """This resume's tool sources when they differ from those the run started with (or it recorded
    none), with one warning line saying what changed; ``None`` when they are the same."""
    if not now.tool_sources:
        return None
    if not started.tool_sources:
        return now.tool_sources
    diff = diff_manifests(started.tool_sources, now.tool_sources)
    if not diff.sources:
        return None
    changes = " | ".join(source.summary() for source in diff.sources)
    warnings.warn(
        ToolSourcesChanged(
            f"{run_dir}: resuming against other tool sources than the run started with: {changes} "
            "(records before and after this resume measured different tools; run.json's resumes keep "
            "this resume's manifest)"
        ),
        stacklevel=2,
    )
    return now.tool_sources


def _tool_source(suites: list[Suite]) -> dict[str, Any]:
    """``--tools mcp:...``: the server and what was done to its schemas that were not strict; every
    live MCP tool source's isolation."""
    sources = [s.metadata["tool_source"] for s in suites if "tool_source" in s.metadata]
    out: dict[str, Any] = {"tool_source": sources[0]} if sources else {}
    isolation = isolation_records(suites)  # each live MCP tool source's isolation, and why
    if isolation:
        out["tool_isolation"] = isolation
    return out


def _run_name(header: RunHeader) -> str:
    """``<UTC timestamp to the second>-<model>-<suites>``: the default run folder's name."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    names = "+".join(s.name for s in header.suites)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{header.model}-{names}").strip("-")
    return f"{stamp}-{slug[:60]}"


def new_run_folder(runs_root: Path, name: str) -> Path:
    """Create and return a run folder under ``runs_root`` that no other run holds: ``name``, or
    ``name-2``, ``name-3``... when runs started in the same second. ``mkdir`` claims the folder
    atomically, so two processes never share one."""
    runs_root.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        candidate = runs_root / (name if n == 1 else f"{name}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise AssertionError("unreachable")  # itertools.count never ends


# --- resuming ----------------------------------------------------------------------------------

# Which options a resumed run must keep and which it may change: callbench.types.run_options.
TIMEOUT_SETTING = GENERATION_TIMEOUT


def resume_config(run_dir: Path, generation: Mapping[str, Any] | None = None, **overrides: Any) -> RunConfig:
    """The config recorded in ``run_dir``'s ``run.json``, set to resume there, with ``overrides``
    (``RunConfig`` fields) and ``generation`` (settings fields) applied over the recorded values.

    A run started through the Python API with suites, a model, scorers or an executor given as
    objects cannot be rebuilt from ``run.json``: one error line says how to resume it instead.
    Overrides that would change verdicts are refused when the run starts (:func:`prepare_run`).
    """
    header = read_header(run_dir)
    recorded = header.options.get("config")
    if not recorded:
        raise ConfigError(f"{run_dir}: run.json has no recorded configuration; cannot resume")
    objects = recorded_objects(recorded)
    if objects:
        names = [s.name for s in header.suites if s.spec == OBJECT_SPEC]
        what = ", ".join(f"suites {names}" if name == "suites" and names else name for name in objects)
        raise ConfigError(
            f"{run_dir}: cannot resume from run.json: this run's {what} were Python objects, "
            "which run.json cannot rebuild; resume it from Python with the same objects: "
            "callbench.evaluate(suite, model, output=Output(out_dir=..., resume=True))"
        )
    model = recorded.get("model")
    if "model" not in overrides and isinstance(model, str) and has_blanked_url_password(model):
        raise ConfigError(
            f"{run_dir}: the model's base URL had a password, which run.json does not keep "
            f"({model}): resume with --model and the same model with its password"
        )
    if generation:
        overrides["settings"] = {**recorded.get("settings", {}), **generation}
    return config_from_dict(recorded, out_dir=run_dir, resume=True, **overrides)


def _blanked(value: Any) -> Any:
    """``value`` as run.json stores it: a password in a URL blanked."""
    return blank_url_credentials(value) if isinstance(value, str) else value


def _shown(value: Any) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return repr(value)


def _flag(name: str) -> str:
    flag = FLAGS.get(name)
    return f"{flag} ({name})" if flag and flag.lstrip("-") != name.replace("_", "-") else flag or name


def check_resume_config(run_dir: Path, recorded: Mapping[str, Any], config: RunConfig) -> dict[str, Any]:
    """Compare a resumed run's config with the one it started with.

    Raises:
        UserError: one line naming the first option that would change verdicts (model, suites,
            tiers, mode, k, executor, suite options, a generation setting), its recorded value and
            the given one.

    Returns:
        The overridable options that differ, ``{field: {"recorded": old, "given": new}}``.
    """
    now = config_to_dict(config)
    old_settings, new_settings = dict(recorded.get("settings") or {}), dict(now["settings"])
    differences = [(name, recorded.get(name), now.get(name)) for name in VERDICT_FIELDS]
    differences += [
        (key, old_settings.get(key), new_settings.get(key))
        for key in sorted(set(old_settings) | set(new_settings))
        if key != TIMEOUT_SETTING
    ]
    for name, old, new in differences:
        if name in recorded or name in old_settings:
            if old != new and old != _blanked(new):  # run.json keeps no password of a base URL
                raise UserError(
                    f"{run_dir}: cannot resume: {_flag(name)} was {_shown(old)} when the run started, "
                    f"given {_shown(new)}; resume without it (the recorded value is used) or start a new run"
                )
    overrides = {
        name: {"recorded": recorded.get(name), "given": now.get(name)}
        for name in OVERRIDABLE_FIELDS
        if name in recorded and recorded.get(name) != now.get(name)
    }
    old_timeout, new_timeout = old_settings.get(TIMEOUT_SETTING), new_settings.get(TIMEOUT_SETTING)
    if TIMEOUT_SETTING in old_settings and old_timeout != new_timeout:
        overrides["settings." + TIMEOUT_SETTING] = {"recorded": old_timeout, "given": new_timeout}
    return overrides


def _resume_event(run_dir: Path, config: RunConfig, n_previous: int) -> ResumeEvent:
    recorded = read_header(run_dir).options.get("config")
    overrides = check_resume_config(run_dir, recorded, config) if recorded else {}
    return ResumeEvent(
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        callbench_version=__version__,
        python_version=platform.python_version(),
        previous_records=n_previous,
        overrides=overrides,
    )


def _check_resume(run_dir: Path, header: RunHeader) -> tuple[int, set[tuple[str, int]]]:
    """How many records the existing run has, and the (key, trial) of its completed ones (each
    record parsed and dropped in turn); refuses when the run's identity changed (the model,
    the mode, a suite's or registry's content; for objects, what they describe)."""
    old = read_header(run_dir)
    for field_name in ("model", "harness_mode"):
        # run.json keeps no password of a base URL: the given value is compared as it would be stored
        given = _blanked(getattr(header, field_name))
        if getattr(old, field_name) != given:
            raise UserError(
                f"{run_dir}: cannot resume: {field_name} was {getattr(old, field_name)!r}, "
                f"now {given!r} ({FLAGS[field_name]})"
            )
    old_hashes = {s.name: (s.hash, s.registry_hash) for s in old.suites}
    for suite in header.suites:
        if suite.name in old_hashes and old_hashes[suite.name] != (suite.hash, suite.registry_hash):
            raise UserError(
                f"{run_dir}: cannot resume: suite {suite.name!r} or its tool registry changed "
                "since the run started; start a new run"
            )
    set_aside_torn_tail(run_dir, why="resuming")  # before reading: one line says what was set aside
    n_records, completed = 0, set()
    for record in iter_records(run_dir):
        n_records += 1
        if record.status == "completed":
            completed.add(record.record_id)
    return n_records, completed
