"""The ``Suite``: cases plus the registry, executor, scorers and prompt they run with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from callbench.suites.check import check_suite
from callbench.tools.registry import ToolRegistry
from callbench.tools.retrieve import select_tools
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.hashing import sha256_of
from callbench.types.suite_options import SuiteOptions as SuiteOptions  # re-exported: loaders import it here

DEFAULT_TIERS = ["native-function-contract", "real-tool-execution", "task-completion-execution"]
ALL_SCORERS = "all"
"""The scorer name that stands for "this suite's scorers plus the strict tiers where they apply"."""
DIAGNOSTIC_SCORERS = ("state-match",)
"""Scorers that never decide a pass whatever the suite: their rows are labelled diagnostic."""

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with access to tools. Use only the supplied tools. Call tools instead "
    "of describing calls. Ground every argument in the user request or in earlier tool results; do not "
    "invent values. When the request is complete, reply with a short final answer."
)


BINDINGS_EXECUTOR = "python-bindings"
"""The executor of a suite that names its own Python tools (``bindings:`` in ``suite.yaml``)."""


@dataclass
class Suite:
    """A named collection of cases with everything needed to run and score them."""

    name: str
    cases: list[Case]
    registry: ToolRegistry = field(default_factory=ToolRegistry)
    executor: str | Any = "contract"
    """Default executor: a catalog name or an :class:`callbench.executors.base.Executor` instance (typed
    loosely here because suites sit below executors in the layers)."""
    bindings: Any = None
    """A path suite's own Python tools (:class:`callbench.suites.bindings.Bindings`), run by the
    ``python-bindings`` executor; ``None`` otherwise."""
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
    strict_tiers: bool = True
    """Whether the three strict tiers apply: ``--tier all`` adds them to :attr:`scorers`. A benchmark
    whose own primary scorer judges something the gold-path tiers do not (DAG, BFCL, ComplexFuncBench)
    sets ``False``; a tier named explicitly still runs there, and its row is labelled diagnostic."""

    def __post_init__(self) -> None:
        for case in self.cases:
            if not case.suite:
                case.suite = self.name
        # Every suite, however built: a case no call could ever meet stops loading here.
        check_suite(self.source or self.name, self.cases, self.registry)

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

    def offered_tools(self, case: Case, requested_k: int | str | None) -> list[ToolContract]:
        """The tools a case is offered: its candidates, top-k retrieved for its instruction. One
        rule for callbench's loop, an agent under test and ``serve-tools``."""
        return select_tools(case.prompt_text(), self.candidate_tools(case), self.retrieval_k(requested_k))

    def executor_name(self, case: Case) -> str | Any:
        return case.executor or self.executor

    def matches(self, case: Case, selector: str) -> bool:
        """Whether ``--case selector`` names ``case``. One rule wherever a case id is shown:

        * the case id (``load_all_tracks``) or its record key ``suite:id`` (``genomics-complex:...``);
        * in a suite that combines parts (``genomics``: ``complex/load_all_tracks``), the bare id
          after the last ``/`` (every part's case of that id);
        * in one part's suite (``genomics-complex``), the ``part/id`` form the combined suite shows,
          where ``part`` is the suite name or its last ``-`` segment."""
        if selector in (case.id, case.key) or case.id.endswith("/" + selector):
            return True
        part, _, tail = selector.rpartition("/")
        return bool(part) and tail == case.id and (part == self.name or self.name.endswith("-" + part))

    def select(self, selectors: Sequence[str]) -> list[Case]:
        """The cases ``selectors`` name (see :meth:`matches`), in suite order; none = every case."""
        if not selectors:
            return list(self.cases)
        return [case for case in self.cases if any(self.matches(case, s) for s in selectors)]

    def expand_scorers(self, refs: Sequence[Any]) -> list[Any]:
        """The scorers a run asks for, resolved for this suite: none = :attr:`scorers`; ``all`` = the
        suite's scorers plus the strict tiers when they apply. Names and ``all`` mix (a union in
        order of first mention, without duplicates); scorer factories pass through."""
        out: list[Any] = []
        for ref in refs or self.scorers:
            names = self.all_scorers() if ref == ALL_SCORERS else [ref]
            out.extend(name for name in names if name not in out)
        return out

    def all_scorers(self) -> list[str]:
        """What ``all`` means for this suite."""
        tiers = DEFAULT_TIERS if self.strict_tiers else []
        return list(dict.fromkeys([*self.scorers, *tiers]))

    def diagnostic_scorers(self, names: Sequence[str]) -> list[str]:
        """Those of ``names`` whose rows are diagnostic here: :data:`DIAGNOSTIC_SCORERS`, and the
        strict tiers on a suite where they do not apply (unless the suite lists them itself)."""
        return [
            name
            for name in names
            if name in DIAGNOSTIC_SCORERS
            or (name in DEFAULT_TIERS and not self.strict_tiers and name not in self.scorers)
        ]
