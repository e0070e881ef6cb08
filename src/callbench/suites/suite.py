"""The ``Suite``: cases plus the registry, executor, scorers and prompt they run with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.hashing import sha256_of

DEFAULT_TIERS = ["native-function-contract", "real-tool-execution", "task-completion-execution"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with access to tools. Use only the supplied tools. Call tools instead "
    "of describing calls. Ground every argument in the user request or in earlier tool results; do not "
    "invent values. When the request is complete, reply with a short final answer."
)


@dataclass(frozen=True)
class SuiteOptions:
    """Options a suite loader receives from the CLI or API."""

    data: Path | None = None
    """``--data``: a local path to the source data set, for loaders that need one."""
    registry: Path | None = None
    """``--registry``: a tool registry folder for suites that do not carry their own."""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Suite:
    """A named collection of cases with everything needed to run and score them."""

    name: str
    cases: list[Case]
    registry: ToolRegistry = field(default_factory=ToolRegistry)
    executor: str | Any = "contract"
    """Default executor: a catalog name or an :class:`callbench.executors.base.Executor` instance (typed
    loosely here because suites sit below executors in the layers)."""
    scorers: list[str] = field(default_factory=lambda: list(DEFAULT_TIERS))
    """Default scorers when the user asks for none."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    description: str = ""
    version: str = "1"
    source: str = ""
    """Where the suite came from (file, folder, package data, generator spec)."""
    default_k: int | None = 24
    """Top-k tool retrieval when the run does not set ``--k`` (``None``: offer every candidate)."""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for case in self.cases:
            if not case.suite:
                case.suite = self.name

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON of all cases (metadata excluded) and the system prompt."""
        return sha256_of({"cases": [c.hash_payload() for c in self.cases], "system": self.system_prompt})

    def registry_for(self, case: Case) -> ToolRegistry:
        """The registry the case runs against: the suite's plus the case's inline contracts."""
        inline = case.inline_contracts()
        return self.registry.merged(inline) if inline else self.registry

    def candidate_tools(self, case: Case) -> list[ToolContract]:
        """The candidate pool for retrieval: the case's tools, or the whole registry."""
        registry = self.registry_for(case)
        names = case.tool_names()
        if not names:
            return list(registry)
        return [registry.get(name) for name in names]

    def retrieval_k(self, requested: int | str | None) -> int | None:
        """The k to use: the run's ``--k`` (``"all"`` = every tool) or the suite default."""
        if requested is None:
            return self.default_k
        return None if requested == "all" else int(requested)

    def executor_name(self, case: Case) -> str | Any:
        return case.executor or self.executor
