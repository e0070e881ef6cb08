"""The ``dag`` suite: FuncBenchGen-style tasks generated on the fly from a parameter grid.

Spec (the text after ``dag:``), ``;``-separated ``key=value`` pairs, lists with ``,``::

    n_core=5,10,20;depth=1,4;n_conn=0,5;n_dis=0,5;seeds=5

Grid keys: ``n_core`` (required), ``depth`` (list or ``all`` = 1..n_core-1; default 1), ``n_conn``,
``n_dis`` (default 0), ``seeds`` (count; graph seeds 0, 100, 200, ... as the official runner) or
``seed`` (explicit list), ``trials`` (value draws per graph, default 1). Task keys: ``supertypes``
(5), ``style`` (opaque|named), ``noise`` (DIN-root values revealed), ``flags`` (``+``-joined
improvements). Episode keys: ``restate`` (off|on|both), ``mode`` (silent|explicit), ``cap``
(fixed|official), ``scoring`` (strict|lenient), ``errors`` (generic|detailed). ``file=PATH`` loads
tasks written by ``callbench generate dag`` instead of generating them.

Depths impossible for an ``n_core`` (depth >= n_core) are skipped; a grid with no valid point is
an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path

from pydantic import ValidationError

from callbench.benchmarks.funcbenchgen.generator import generate, make_params, parameters_schema
from callbench.benchmarks.funcbenchgen.tasks import FLAGS, DagParams, DagTask
from callbench.benchmarks.funcbenchgen.validate import validate_task
from callbench.plugin import (
    AnswerSpec,
    Case,
    ConfigError,
    ExpectedStep,
    Suite,
    SuiteError,
    SuiteOptions,
    ToolContract,
    did_you_mean,
)

_CHOICES = {
    "style": ("opaque", "named"),
    "restate": ("off", "on", "both"),
    "mode": ("silent", "explicit"),
    "cap": ("fixed", "official"),
    "scoring": ("strict", "lenient"),
    "errors": ("generic", "detailed"),
}
_LISTS = ("n_core", "depth", "n_conn", "n_dis", "seed")
_INTS = ("seeds", "trials", "supertypes", "noise")
KEYS = (*_LISTS, *_INTS, *_CHOICES, "flags", "file")


@dataclass(frozen=True)
class EpisodeOptions:
    """How each generated task is played and scored."""

    restate: bool = False
    mode: str = "silent"
    cap: str = "fixed"
    scoring: str = "strict"
    detailed_errors: bool = False


@dataclass(frozen=True)
class DagSpec:
    """A parsed suite spec."""

    n_core: tuple[int, ...] = ()
    depth: tuple[int, ...] | None = (1,)
    """None means every depth 1..n_core-1."""
    n_conn: tuple[int, ...] = (0,)
    n_dis: tuple[int, ...] = (0,)
    seeds: tuple[int, ...] = (0, 100, 200, 300, 400)
    trials: int = 1
    supertypes: int = 5
    style: str = "opaque"
    noise: int = 0
    flags: tuple[str, ...] = ()
    arms: tuple[bool, ...] = (False,)
    """Restatement arms to run (``restate=both`` gives both)."""
    episode: EpisodeOptions = field(default_factory=EpisodeOptions)
    file: str | None = None


def parse_spec(spec: str) -> DagSpec:
    """Parse ``key=value;...``; raises :class:`ConfigError` naming the bad key or value."""
    raw: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise ConfigError(f"dag spec: {part!r} must be key=value")
        if key not in KEYS:
            raise ConfigError(f"dag spec: unknown key {key!r}{did_you_mean(key, KEYS)}")
        raw[key] = value.strip()
    for key, choices in _CHOICES.items():
        if key in raw and raw[key] not in choices:
            raise ConfigError(f"dag spec: {key}={raw[key]!r} must be one of {', '.join(choices)}")
    return _build_spec(raw)


def _build_spec(raw: dict[str, str]) -> DagSpec:
    spec = DagSpec()
    lists = {k: _int_list(k, raw[k]) for k in _LISTS if k in raw and not (k == "depth" and raw[k] == "all")}
    ints = {k: _int(k, raw[k]) for k in _INTS if k in raw}
    if "file" not in raw and "n_core" not in lists:
        raise ConfigError("dag spec: n_core is required, e.g. dag:n_core=5,10;depth=1,4;seeds=5")
    seeds = lists.get("seed") or tuple(i * 100 for i in range(ints.get("seeds", 5)))
    flags = tuple(f for f in raw.get("flags", "").replace(",", "+").split("+") if f)
    for flag in flags:
        if flag not in FLAGS:
            raise ConfigError(f"dag spec: unknown flag {flag!r}{did_you_mean(flag, FLAGS)}")
    restate = raw.get("restate", "off")
    episode = EpisodeOptions(
        mode=raw.get("mode", "silent"),
        cap=raw.get("cap", "fixed"),
        scoring=raw.get("scoring", "strict"),
        detailed_errors=raw.get("errors") == "detailed",
    )
    return replace(
        spec,
        n_core=lists.get("n_core", ()),
        depth=None if raw.get("depth") == "all" else lists.get("depth", spec.depth),
        n_conn=lists.get("n_conn", spec.n_conn),
        n_dis=lists.get("n_dis", spec.n_dis),
        seeds=seeds,
        trials=ints.get("trials", 1),
        supertypes=ints.get("supertypes", 5),
        style=raw.get("style", "opaque"),
        noise=ints.get("noise", 0),
        flags=flags,
        arms={"off": (False,), "on": (True,), "both": (False, True)}[restate],
        episode=episode,
        file=raw.get("file"),
    )


def _int(key: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"dag spec: {key}={text!r} is not an integer") from None
    if value < 0:
        raise ConfigError(f"dag spec: {key}={value} must not be negative")
    return value


def _int_list(key: str, text: str) -> tuple[int, ...]:
    return tuple(_int(key, item.strip()) for item in text.split(",") if item.strip())


def grid(spec: DagSpec) -> list[DagParams]:
    """Every valid parameter set of the grid, in a stable order."""
    out: list[DagParams] = []
    for n_core, n_conn, n_dis in product(spec.n_core, spec.n_conn, spec.n_dis):
        depths = spec.depth if spec.depth is not None else tuple(range(1, n_core))
        for depth, seed, trial in product(depths, spec.seeds, range(spec.trials)):
            if not 1 <= depth <= n_core - 1:
                continue
            out.append(
                make_params(
                    n_core=n_core,
                    depth=depth,
                    n_conn=n_conn,
                    n_dis=n_dis,
                    supertypes=spec.supertypes,
                    style=spec.style,
                    noise_inputs=spec.noise,
                    seed=seed,
                    trial=trial,
                    flags=spec.flags,
                )
            )
    if not out:
        raise ConfigError(f"dag spec: no valid grid point (depth must be 1..n_core-1; n_core={spec.n_core})")
    return out


def load_tasks(path: Path) -> list[DagTask]:
    """Read tasks written by ``callbench generate dag``; errors name the file and line."""
    if not path.is_file():
        raise SuiteError(f"{path}: no such file")
    tasks = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = DagTask.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise SuiteError(f"{path}:{line_no}: not a DAG task: {str(exc).splitlines()[0]}") from None
        problems = validate_task(task)
        if problems:
            raise SuiteError(f"{path}:{line_no}: task {task.id} is invalid: {problems[0]}")
        tasks.append(task)
    return tasks


def tool_contracts(task: DagTask) -> list[ToolContract]:
    """The task's functions as inline contracts, in offer order."""
    nodes = task.node_map()
    return [
        ToolContract(
            name=name,
            description=nodes[name].description,
            category="dag",
            parameters=parameters_schema(nodes[name]),
            read_only=True,
            metadata={"node_kind": nodes[name].kind},
        )
        for name in task.tool_order
    ]


def expected_steps(task: DagTask) -> list[ExpectedStep]:
    """The core calls in topological layers (one model turn per layer), with literal true values.

    Values are literals rather than ``$ref``: the official tool result is the quoted text
    ``"Variable x = 5."``, which a ``$ref`` path cannot follow. Literal values are only correct
    once the producers ran in an earlier turn, which the layering guarantees.
    """
    producer = {n.output_type: n.name for n in task.nodes if n.kind == "core"}
    layer: dict[str, int] = {}
    remaining = [n for n in task.nodes if n.kind == "core"]
    while remaining:
        for node in remaining:
            if all(producer.get(t) in layer for t in node.input_types if t in producer):
                layer[node.name] = max(
                    (layer[producer[t]] + 1 for t in node.input_types if t in producer), default=0
                )
        remaining = [n for n in remaining if n.name not in layer]
    position = {n.name: i for i, n in enumerate(task.nodes)}
    nodes = task.node_map()
    steps = []
    for name in sorted(layer, key=lambda k: (layer[k], position[k])):
        node = nodes[name]
        args = {p: task.values[t] for p, t in zip(node.inputs, node.input_types, strict=True)}
        steps.append(ExpectedStep(id=name, tool=name, arguments=args, turn=layer[name] + 1))
    return steps


def build_case(task: DagTask, episode: EpisodeOptions) -> Case:
    """One case per task and restatement arm."""
    n_core = task.params.n_core
    arm = "restate" if episode.restate else "plain"
    return Case(
        id=f"{task.id}-{arm}" if episode.restate else task.id,
        category=f"dag-d{task.params.depth}",
        instruction=task.prompt,
        system="",
        tools=list(tool_contracts(task)),
        expected=expected_steps(task),
        expected_answer=AnswerSpec(contains=[f"{task.target_variable} = {task.target_value}"]),
        max_calls=2 * n_core if episode.cap == "official" else 2 * n_core + 1,
        max_rounds=2 * n_core + 2,
        executor="dag",
        executor_config={
            "task": task.model_dump(mode="json"),
            "mode": episode.mode,
            "restate": episode.restate,
            "detailed_errors": episode.detailed_errors,
            "cap": episode.cap,
            "scoring": episode.scoring,
        },
        harness_guidance=False,
        # The graph is the statistical unit: its trials and both restatement arms form one cluster.
        # (Clustering by setting would give a zero-width interval for a one-setting run.)
        template=f"{task.params.setting}-s{task.params.seed}",
        # task_key: both restatement arms are one task; seeded agents (noisy) draw per task so the
        # paired arm comparison is not confounded by different draws.
        metadata={
            "setting": task.params.setting,
            "arm": arm,
            "seed": task.params.seed,
            "task_key": task.id,
            "dag": task.metadata,
        },
    )


def load_suite(spec: str, options: SuiteOptions) -> Suite:
    """Build the ``dag`` suite from a spec (see the module docstring)."""
    parsed = parse_spec(spec)
    tasks = load_tasks(Path(parsed.file)) if parsed.file else [generate(p) for p in grid(parsed)]
    cases = [build_case(t, replace(parsed.episode, restate=arm)) for t in tasks for arm in parsed.arms]
    return Suite(
        name="dag",
        cases=cases,
        executor="dag",
        scorers=["dag"],
        strict_tiers=False,  # its own scorer is primary: `--tier all` does not add the gold-path tiers
        system_prompt="",
        description="FuncBenchGen-style tasks generated from a hidden function-dependency DAG",
        source=f"dag:{spec}",
        default_k=None,  # the agent must see every function, distractors included
        metadata={"spec": spec, "episode": parsed.episode.__dict__, "arms": list(parsed.arms)},
    )


__all__ = ["DagSpec", "EpisodeOptions", "build_case", "grid", "load_suite", "parse_spec"]
