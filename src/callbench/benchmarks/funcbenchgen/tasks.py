"""On-disk types of generated DAG tasks (FuncBenchGen style).

A :class:`DagTask` is everything one episode needs: the functions (as nodes with typed inputs and
one output), the true value of every type, the user prompt, the tool order and the parameters it
was generated from. It is a pure function of :class:`DagParams`, so the same parameters give a
byte-identical task on any machine.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1

NodeKind = Literal["core", "conn", "dis"]
"""``core``: an ancestor of the target (or the target); ``conn``: connected irrelevant node (CIN);
``dis``: disconnected irrelevant node (DIN)."""

Style = Literal["opaque", "named"]
"""``opaque``: descriptions list types only (the paper's runs); ``named``: names and types."""

Flag = Literal["stable_rng", "target_visible", "distinct_values", "seeded_shuffle"]
"""Improvements over the official generator; none is on by default.

* ``stable_rng``: independent generators per stage; the core graph, its names and the values depend
  only on (seed, n_core, depth, trial), so distractor sweeps are paired on the same core task.
* ``target_visible``: the target function's description names its output variable.
* ``distinct_values``: no two types share a value (the official draw allows collisions).
* ``seeded_shuffle``: the tool order is shuffled per task instead of with the fixed seed 42.
"""

FLAGS: tuple[str, ...] = ("stable_rng", "target_visible", "distinct_values", "seeded_shuffle")


class DagParams(BaseModel):
    """Generation parameters. Every field takes part in the task identity."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_core: int = Field(ge=2, le=5000)
    """Core functions: the minimum number of calls."""
    depth: int = Field(ge=1)
    """Edges on the longest path into the target (1 = star, n_core-1 = path)."""
    n_conn: int = Field(default=0, ge=0, le=20000)
    """Connected irrelevant nodes (type-compatible distractors hanging below core nodes)."""
    n_dis: int = Field(default=0, ge=0, le=20000)
    """Disconnected irrelevant nodes."""
    supertypes: int = Field(default=5, ge=0, le=1000)
    """Size of the shared supertype pool; 0 gives plain ``type_xyz`` types without subtypes."""
    style: Style = "opaque"
    noise_inputs: int = Field(default=0, ge=0)
    """How many DIN-root input values the prompt also reveals."""
    seed: int = Field(default=0, ge=0)
    """Graph seed (the official runner uses 0, 100, 200, ...)."""
    trial: int = Field(default=0, ge=0)
    """Trial index: values are redrawn per trial, the graph is not."""
    flags: tuple[Flag, ...] = ()

    @model_validator(mode="after")
    def _canonical_flags(self) -> DagParams:
        ordered = tuple(sorted(set(self.flags)))
        if ordered != self.flags:
            object.__setattr__(self, "flags", ordered)
        return self

    def has(self, flag: Flag) -> bool:
        """True when improvement ``flag`` is on."""
        return flag in self.flags

    @property
    def setting(self) -> str:
        """The setting id shared by all seeds and trials of one grid point."""
        parts = [f"c{self.n_core}", f"d{self.depth}", f"conn{self.n_conn}", f"dis{self.n_dis}"]
        if self.style != "opaque":
            parts.append(self.style)
        if self.supertypes != 5:
            parts.append(f"st{self.supertypes}")
        if self.noise_inputs:
            parts.append(f"noise{self.noise_inputs}")
        parts.extend(self.flags)
        return "-".join(parts)

    @property
    def task_id(self) -> str:
        """Unique id of the task: setting, seed and trial."""
        return f"{self.setting}-s{self.seed}-t{self.trial}"


class DagNode(BaseModel):
    """One function: named inputs, each with a type, and one output."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: NodeKind
    inputs: list[str]
    """Parameter names, in schema order."""
    input_types: list[str]
    output: str
    """Output variable name (shown in results as ``Variable <output> = <value>.``)."""
    output_type: str
    description: str


class DagTask(BaseModel):
    """A generated task. ``values`` maps every type to its true value."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    id: str
    params: DagParams
    nodes: list[DagNode]
    """Nodes in generation order: core (chain first), then DINs, then CINs."""
    tool_order: list[str]
    """Function names in the order the tools are offered."""
    target_node: str
    target_variable: str
    values: dict[str, int]
    """Type -> true value."""
    prompt_variables: dict[str, int]
    """Variables the prompt reveals, in prompt order (sorted by name)."""
    initial_known_types: list[str]
    """Types known at the start: every external input type, DIN roots included (official rule)."""
    prompt: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    def node(self, name: str) -> DagNode | None:
        """The node called ``name`` (None when absent)."""
        return self.node_map().get(name)

    def node_map(self) -> dict[str, DagNode]:
        """Function name -> node."""
        return {n.name: n for n in self.nodes}

    @property
    def target_value(self) -> int:
        """True value of the target variable."""
        return self.values[self.node_map()[self.target_node].output_type]

    def variable_types(self) -> dict[str, str]:
        """Every variable name (inputs and outputs) -> its type."""
        out: dict[str, str] = {}
        for node in self.nodes:
            out.update(zip(node.inputs, node.input_types, strict=True))
            out[node.output] = node.output_type
        return out
