"""FuncBenchGen-style task generator: a hidden function-dependency DAG turned into tools and a prompt.

Faithful to the official construction by default (see ``docs/dag-tasks.md``); the improvements in
:data:`~callbench.benchmarks.funcbenchgen.tasks.FLAGS` are opt-in and recorded in ``task.metadata``.

Example:
    >>> from callbench.benchmarks.funcbenchgen.generator import generate, make_params
    >>> task = generate(make_params(n_core=5, depth=2, n_conn=3, seed=100))
    >>> len(task.nodes), task.params.setting
    (8, 'c5-d2-conn3-dis0')
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from callbench.benchmarks.funcbenchgen.graph import RawGraph, add_connected, add_disconnected, build_core
from callbench.benchmarks.funcbenchgen.names import NameSource
from callbench.benchmarks.funcbenchgen.tasks import DagNode, DagParams, DagTask
from callbench.benchmarks.funcbenchgen.validate import validate_task
from callbench.plugin import ConfigError, sha256_of

GENERATOR_VERSION = "funcbenchgen-1"
MAX_FUNCTIONS = 5000
OFFICIAL_SHUFFLE_SEED = 42
PROMPT_HEAD = (
    "Using the tools at your disposal, use function(s) to compute and give me the correct value of "
    "variable {target}.\n"
)
PROMPT_TAIL = "You have all the information you need to get the correct result."


@dataclass(frozen=True)
class _Streams:
    """The random generators of one task; in faithful mode they are one shared stream."""

    core: random.Random
    distractors: random.Random
    func_names: random.Random
    var_names: random.Random
    types: random.Random
    values: random.Random
    shuffle: random.Random


def generate(params: DagParams) -> DagTask:
    """Generate one validated task.

    Args:
        params: Size, depth, distractors, style, seed, trial and improvement flags.

    Raises:
        ConfigError: The parameters cannot produce a task (e.g. ``depth >= n_core``).
    """
    check_params(params)
    streams = _streams(params)
    graph = RawGraph()
    core = build_core(graph, streams.core, params.n_core, params.depth)
    add_disconnected(graph, streams.distractors, params.n_dis)
    add_connected(graph, streams.distractors, core, params.n_conn)
    task = _assemble(params, graph, streams)
    problems = validate_task(task)
    if problems:  # a generator bug, never a user error
        raise AssertionError(f"generated task {task.id} is invalid: {'; '.join(problems)}")
    return task


def make_params(**values: Any) -> DagParams:
    """Build :class:`DagParams`, turning a validation failure into a one-line :class:`ConfigError`."""
    try:
        params = DagParams(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "parameters"
        raise ConfigError(f"dag parameter {field}: {first['msg']}") from None
    check_params(params)
    return params


def check_params(params: DagParams) -> None:
    """Raise :class:`ConfigError` for parameter sets that cannot produce a task."""
    if params.depth > params.n_core - 1:
        raise ConfigError(
            f"depth={params.depth} needs at least depth+1={params.depth + 1} core functions, "
            f"but n_core={params.n_core}; use depth <= {params.n_core - 1}"
        )
    total = params.n_core + params.n_conn + params.n_dis
    if total > MAX_FUNCTIONS:
        raise ConfigError(f"n_core+n_conn+n_dis={total} exceeds the limit of {MAX_FUNCTIONS} functions")
    if params.has("distinct_values") and _type_count_upper_bound(params) > 1000:
        raise ConfigError("distinct_values needs at most 1000 types (values are 0-999); use fewer functions")


def _type_count_upper_bound(params: DagParams) -> int:
    # One type per output plus one per external input (core side/first nodes and DIN roots).
    return params.n_core + params.n_conn + params.n_dis + (params.n_core - params.depth) + params.n_dis


def _derive(
    params: DagParams, stage: str, *, core_only: bool = False, with_trial: bool = False
) -> random.Random:
    """A generator seeded only by the parameters (a subset of them when ``core_only``)."""
    key: dict[str, Any] = {
        "seed": params.seed,
        "n_core": params.n_core,
        "depth": params.depth,
        "stage": stage,
    }
    if not core_only:
        key["params"] = params.model_dump(mode="json", exclude={"trial"})
    if with_trial:
        key["trial"] = params.trial
    return random.Random(int(sha256_of(key)[:16], 16))


def _streams(params: DagParams) -> _Streams:
    if params.has("seeded_shuffle"):
        shuffle = _derive(params, "shuffle")
    else:
        shuffle = random.Random(OFFICIAL_SHUFFLE_SEED)
    if params.has("stable_rng"):
        return _Streams(
            core=_derive(params, "core", core_only=True),
            distractors=_derive(params, "distractors"),
            func_names=_derive(params, "func_names", core_only=True),
            var_names=_derive(params, "var_names", core_only=True),
            types=_derive(params, "types", core_only=True),
            values=_derive(params, "values", core_only=True, with_trial=True),
            shuffle=shuffle,
        )
    # Faithful: one stream for the graph and its names (seeded by the graph seed) and one per
    # trial for values and noise inputs, like the official runner's graph and trial seeds.
    graph_rng = random.Random(params.seed)
    values = _derive(params, "trial", with_trial=True)
    return _Streams(graph_rng, graph_rng, graph_rng, graph_rng, graph_rng, values, shuffle)


def _assemble(params: DagParams, graph: RawGraph, streams: _Streams) -> DagTask:
    names = NameSource(streams.func_names)
    func_names = [names.draw("func") for _ in graph.kinds]
    var_type = _assign_types(params, graph, names.sharing(streams.types))
    nodes = _make_nodes(params, graph, func_names, var_type, names.sharing(streams.var_names))
    values = _draw_values(params, list(dict.fromkeys(var_type.values())), streams.values)
    prompt_vars, known = _prompt_inputs(params, graph, nodes, values, streams.values)
    target = nodes[graph.target]
    order = [n.name for n in nodes]
    streams.shuffle.shuffle(order)
    prompt = PROMPT_HEAD.format(target=target.output)
    prompt += "".join(f"Variable {name} = {value}\n" for name, value in prompt_vars.items())
    prompt += PROMPT_TAIL
    return DagTask(
        id=params.task_id,
        params=params,
        nodes=nodes,
        tool_order=order,
        target_node=target.name,
        target_variable=target.output,
        values=values,
        prompt_variables=prompt_vars,
        initial_known_types=known,
        prompt=prompt,
        metadata=_metadata(params, graph),
    )


def _assign_types(params: DagParams, graph: RawGraph, names: NameSource) -> dict[int, str]:
    """One type per variable bundle, in first-seen order (inputs, then output, node by node)."""
    supers = [names.draw("type") for _ in range(params.supertypes)]
    out: dict[int, str] = {}
    for node, inputs in enumerate(graph.inputs):
        for var in [*inputs, node]:
            if var in out:
                continue
            if supers:
                out[var] = f"{names.rng.choice(supers)} with {names.draw('subtype')}"
            else:
                out[var] = names.draw("type")
    return out


def _make_nodes(
    params: DagParams, graph: RawGraph, func_names: list[str], var_type: dict[int, str], names: NameSource
) -> list[DagNode]:
    """Give every occurrence a fresh variable name and write the descriptions."""
    nodes = []
    for node, inputs in enumerate(graph.inputs):
        in_names = [names.draw() for _ in inputs]
        out_name = names.draw()
        in_types = [var_type[v] for v in inputs]
        out_type = var_type[node]
        show_output = params.has("target_visible") and node == graph.target
        description = describe(params.style, in_names, in_types, out_name, out_type, show_output)
        nodes.append(
            DagNode(
                name=func_names[node],
                kind=graph.kinds[node],
                inputs=in_names,
                input_types=in_types,
                output=out_name,
                output_type=out_type,
                description=description,
            )
        )
    return nodes


def describe(
    style: str, inputs: list[str], in_types: list[str], output: str, out_type: str, show_output: bool = False
) -> str:
    """The official description templates (opaque: types only; named: names and types)."""
    if style == "named":
        parts = ", ".join(f"{name} ({kind})" for name, kind in zip(inputs, in_types, strict=True))
        noun = "variable" if len(inputs) == 1 else "variables"
        return f"Processes {noun} {parts} to produce variable {output} ({out_type})"
    parts = ", ".join(f"({kind})" for kind in in_types)
    produced = f"variable {output} ({out_type})" if show_output else f"({out_type})"
    return f"Processes inputs of types {parts} to produce {produced}"


def _draw_values(params: DagParams, types: list[str], rng: random.Random) -> dict[str, int]:
    values: dict[str, int] = {}
    used: set[int] = set()
    for kind in types:
        value = rng.randrange(1000)
        while params.has("distinct_values") and value in used:
            value = rng.randrange(1000)
        used.add(value)
        values[kind] = value
    return values


def _prompt_inputs(
    params: DagParams, graph: RawGraph, nodes: list[DagNode], values: dict[str, int], rng: random.Random
) -> tuple[dict[str, int], list[str]]:
    """Prompt variables (core external inputs plus ``noise_inputs`` DIN roots) and known types."""
    core_inputs: list[tuple[str, str]] = []
    other_inputs: list[tuple[str, str]] = []
    for index, node in enumerate(nodes):
        for var, name, kind in zip(graph.inputs[index], node.inputs, node.input_types, strict=True):
            if var < 0:
                (core_inputs if node.kind == "core" else other_inputs).append((name, kind))
    other_inputs.sort()
    noise = (
        rng.sample(other_inputs, min(params.noise_inputs, len(other_inputs))) if params.noise_inputs else []
    )
    shown = sorted(core_inputs + noise)
    known = [kind for _, kind in core_inputs + other_inputs]
    return {name: values[kind] for name, kind in shown}, known


def _metadata(params: DagParams, graph: RawGraph) -> dict[str, Any]:
    return {
        "generator": GENERATOR_VERSION,
        "faithful": not params.flags,
        "flags": list(params.flags),
        "setting": params.setting,
        "n_functions": len(graph.kinds),
        "n_edges": sum(len(graph.producers(n)) for n in range(len(graph.kinds))),
        "min_calls": params.n_core,
    }


def tool_schemas(task: DagTask) -> list[dict[str, Any]]:
    """The tools in offer order, as OpenAI-style function entries (the official schema)."""
    by_name = task.node_map()
    return [_schema(by_name[name]) for name in task.tool_order]


def _schema(node: DagNode) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": node.name,
            "description": node.description,
            "strict": True,
            "parameters": parameters_schema(node),
        },
    }


def parameters_schema(node: DagNode) -> dict[str, Any]:
    """Strict integer-only schema: every input required, nothing else allowed."""
    return {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in node.inputs},
        "required": list(node.inputs),
        "additionalProperties": False,
    }
