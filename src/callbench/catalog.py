"""One registry per kind (suite, provider, executor, scorer) with lazy entries and "did you mean".

Built-ins register exactly as third-party packages do: through the entry-point group ``callbench``,
whose objects are called with the :class:`Catalog`. callbench's own entry point is
:func:`register_builtins`. Entries are ``"module:attr"`` strings imported on first use, so
optional dependencies are only needed for what a run actually uses.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Generic, Literal, TypeVar

from callbench._names import did_you_mean
from callbench.errors import UserError

Kind = Literal["suite", "provider", "executor", "scorer"]
T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> object, where an object may be given lazily as ``"module:attr"``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Any] = {}

    def register(self, name: str, target: Any, *, replace: bool = False) -> None:
        if name in self._entries and not replace and self._entries[name] != target:
            raise UserError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = target

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> Any:
        """The registered object, importing it on first use."""
        if name not in self._entries:
            raise UserError(f"unknown {self.kind} {name!r}{did_you_mean(name, self._entries)}")
        target = self._entries[name]
        if isinstance(target, str):
            target = _import(target, f"{self.kind} {name!r}")
            self._entries[name] = target
        return target


def _import(path: str, label: str) -> Any:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("callbench"):
            raise UserError(f"{label} needs the package {exc.name!r}; install it (see the README's extras)") from None
        raise UserError(f"{label} is not available in this installation (module {module_name} is missing)") from None
    return getattr(module, attr)


class Catalog:
    """The four registries."""

    def __init__(self) -> None:
        self.suites: Registry[Any] = Registry("suite")
        self.providers: Registry[Any] = Registry("provider")
        self.executors: Registry[Any] = Registry("executor")
        self.scorers: Registry[Any] = Registry("scorer")

    def of(self, kind: Kind) -> Registry[Any]:
        return {"suite": self.suites, "provider": self.providers, "executor": self.executors,
                "scorer": self.scorers}[kind]


BUILTIN_SUITES = {
    "starter": "callbench.suites.builtin.starter:load_suite",
    "genomics": "callbench.domains.genomics.suite:load_all",
    "genomics-simple": "callbench.domains.genomics.suite:load_simple",
    "genomics-complex": "callbench.domains.genomics.suite:load_complex",
    "dag": "callbench.suites.dag:load_suite",
    "complexfuncbench": "callbench.suites.complexfuncbench:load_suite",
    "bfcl": "callbench.suites.bfcl:load_suite",
    "codexomics": "callbench.suites.codexomics:load_suite",
}
BUILTIN_PROVIDERS = {
    "oracle": "callbench.providers.agents.oracle:make_provider",
    "refuse": "callbench.providers.agents.refuse:make_provider",
    "noisy": "callbench.providers.agents.noisy:make_provider",
    "baseline": "callbench.providers.agents.baseline:make_provider",
    "planner": "callbench.providers.agents.planner:make_provider",
    "openai": "callbench.providers.openai_compat:make_provider",
    "anthropic": "callbench.providers.anthropic:make_provider",
    "prompt": "callbench.providers.prompt_mode:make_provider",
    "hf": "callbench.providers.hf_local:make_provider",
    "vllm": "callbench.providers.presets:vllm",
    "sglang": "callbench.providers.presets:sglang",
    "ollama": "callbench.providers.presets:ollama",
    "llamacpp": "callbench.providers.presets:llamacpp",
    "deepseek": "callbench.providers.presets:deepseek",
    "openrouter": "callbench.providers.presets:openrouter",
    "azure": "callbench.providers.presets:azure",
    "together": "callbench.providers.presets:together",
    "groq": "callbench.providers.presets:groq",
    "fireworks": "callbench.providers.presets:fireworks",
}
BUILTIN_EXECUTORS = {
    "contract": "callbench.executors.contract:ContractExecutor",
    "dag": "callbench.executors.dag:DagExecutor",
    "replay": "callbench.executors.replay:ReplayExecutor",
    "bfcl-multi-turn": "callbench.executors.bfcl_multi_turn:BfclMultiTurnExecutor",
}
BUILTIN_SCORERS = {
    "native-function-contract": "callbench.scoring.tiers:contract_tier",
    "real-tool-execution": "callbench.scoring.tiers:execution_tier",
    "task-completion-execution": "callbench.scoring.tiers:completion_tier",
    "state-match": "callbench.scoring.state_match:StateMatchScorer",
    "dag": "callbench.scoring.dag:DagScorer",
    "complexeval": "callbench.scoring.complexeval:ComplexEvalScorer",
    "bfcl": "callbench.scoring.bfcl_ast:BfclScorer",
}


def register_builtins(catalog: Catalog) -> None:
    """callbench's own entry point: registers the built-ins like any plugin would."""
    for registry, table in ((catalog.suites, BUILTIN_SUITES), (catalog.providers, BUILTIN_PROVIDERS),
                            (catalog.executors, BUILTIN_EXECUTORS), (catalog.scorers, BUILTIN_SCORERS)):
        for name, target in table.items():
            registry.register(name, target)


_CATALOG: Catalog | None = None


def catalog() -> Catalog:
    """The process-wide catalog, filled from every ``callbench`` entry point on first use."""
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = Catalog()
        found = list(entry_points(group="callbench"))
        if not any(ep.value == "callbench.catalog:register_builtins" for ep in found):
            register_builtins(_CATALOG)  # running from a source tree without installed metadata
        for ep in sorted(found, key=lambda e: (e.value != "callbench.catalog:register_builtins", e.name)):
            try:
                hook = ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break callbench
                raise UserError(f"plugin entry point {ep.name!r} ({ep.value}) failed to load: {exc}") from None
            hook(_CATALOG)
    return _CATALOG


def reset_catalog() -> None:
    """Forget the catalog (tests that install plugins call this)."""
    global _CATALOG
    _CATALOG = None
