"""One registry per kind, with lazy entries and "did you mean".

Kinds: suite, provider, executor, scorer, CLI command set.

Built-ins register exactly as third-party packages do: through the entry-point group ``callbench``,
whose objects are called with the :class:`Catalog`. callbench's own entry point is
:func:`register_builtins`. Entries are ``"module:attr"`` strings imported on first use, so
optional dependencies are only needed for what a run actually uses.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Generic, Literal, TypeVar

from callbench.errors import UserError
from callbench.types.names import did_you_mean

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
            raise UserError(
                f"{label} needs the package {exc.name!r}; install it (see the README's extras)"
            ) from None
        raise UserError(
            f"{label} is not available in this installation (module {module_name} is missing)"
        ) from None
    return getattr(module, attr)


class Catalog:
    """One registry per kind, plus the CLI commands that plugins add and the default suite."""

    def __init__(self) -> None:
        self.suites: Registry[Any] = Registry("suite")
        self.providers: Registry[Any] = Registry("provider")
        self.executors: Registry[Any] = Registry("executor")
        self.scorers: Registry[Any] = Registry("scorer")
        self.commands: Registry[Any] = Registry("command set")
        """``name -> register(app)``: a plugin's CLI commands, added to the ``callbench`` app at start."""
        self.default_suite: str | None = None
        """What ``callbench run`` runs without ``--suite`` (set by the plugin that provides it)."""

    def of(self, kind: Kind) -> Registry[Any]:
        return {
            "suite": self.suites,
            "provider": self.providers,
            "executor": self.executors,
            "scorer": self.scorers,
        }[kind]

    def set_default_suite(self, name: str) -> None:
        """Declare the embedded default suite; the first plugin to declare one keeps it."""
        if self.default_suite is None:
            self.default_suite = name

    def require_default_suite(self) -> str:
        """The default suite, or a one-line error when no installed plugin declares one."""
        if self.default_suite is None:
            raise UserError("no default suite is installed; pass --suite NAME (see `callbench suites`)")
        return self.default_suite


BUILTIN_PROVIDERS = {
    "oracle": "callbench.providers.agents.oracle:make_provider",
    "refuse": "callbench.providers.agents.refuse:make_provider",
    "noisy": "callbench.providers.agents.noisy:make_provider",
    "baseline": "callbench.providers.agents.baseline:make_provider",
    "openai": "callbench.providers.openai_compat:make_provider",
    "openai-responses": "callbench.providers.openai_responses:make_provider",
    "anthropic": "callbench.providers.anthropic:make_provider",
    "prompt": "callbench.providers.prompt_mode:make_provider",
    "hf": "callbench.providers.hf_local:make_provider",
    "vllm": "callbench.providers.endpoints:vllm",
    "sglang": "callbench.providers.endpoints:sglang",
    "ollama": "callbench.providers.endpoints:ollama",
    "llamacpp": "callbench.providers.endpoints:llamacpp",
    "deepseek": "callbench.providers.endpoints:deepseek",
    "openrouter": "callbench.providers.endpoints:openrouter",
    "azure": "callbench.providers.endpoints:azure",
    "together": "callbench.providers.endpoints:together",
    "groq": "callbench.providers.endpoints:groq",
    "fireworks": "callbench.providers.endpoints:fireworks",
    "gemini": "callbench.providers.endpoints:gemini",
    "moonshot": "callbench.providers.endpoints:moonshot",
    "lmstudio": "callbench.providers.endpoints:lmstudio",
    "llamacpp-python": "callbench.providers.endpoints:llamacpp_python",
}
BUILTIN_EXECUTORS = {
    "contract": "callbench.executors.contract:ContractExecutor",
}
BUILTIN_SCORERS = {
    "native-function-contract": "callbench.scoring.tiers:contract_tier",
    "real-tool-execution": "callbench.scoring.tiers:execution_tier",
    "task-completion-execution": "callbench.scoring.tiers:completion_tier",
    "state-match": "callbench.scoring.state_match:StateMatchScorer",
}
BUILTIN_BENCHMARKS = {
    "starter": "callbench.benchmarks.starter:register",
    "genomics": "callbench.benchmarks.genomics:register",
    "bfcl": "callbench.benchmarks.bfcl:register",
    "complexfuncbench": "callbench.benchmarks.complexfuncbench:register",
    "funcbenchgen": "callbench.benchmarks.funcbenchgen:register",
    "codexomics": "callbench.benchmarks.codexomics:register",
    "mcp_git": "callbench.benchmarks.mcp_git:register",
}
"""The benchmarks shipped in this package, as the entry points ``pyproject.toml`` declares. Only read
when the package metadata is missing (a source tree on ``PYTHONPATH``): names, never imports."""


def register_builtins(catalog: Catalog) -> None:
    """callbench's own entry point: registers the core built-ins (agents, providers, the contract
    executor, the strict tiers and state match) like any plugin would. Benchmarks register themselves."""
    for registry, table in (
        (catalog.providers, BUILTIN_PROVIDERS),
        (catalog.executors, BUILTIN_EXECUTORS),
        (catalog.scorers, BUILTIN_SCORERS),
    ):
        for name, target in table.items():
            registry.register(name, target)


_CATALOG: Catalog | None = None


def catalog() -> Catalog:
    """The process-wide catalog, filled from every ``callbench`` entry point on first use."""
    global _CATALOG
    if _CATALOG is None:
        fresh = Catalog()
        hooks = _entry_point_hooks()
        for name, value in hooks:
            _load_hook(name, value)(fresh)
        _CATALOG = fresh
    return _CATALOG


def _entry_point_hooks() -> list[tuple[str, str]]:
    """(name, "module:attr") of every plugin: callbench's own first, then the rest by name."""
    found = {ep.name: ep.value for ep in entry_points(group="callbench")}
    if "callbench.catalog:register_builtins" not in found.values():
        # A source tree without installed metadata: the package's own entry points, by name.
        found.update({"builtins": "callbench.catalog:register_builtins", **BUILTIN_BENCHMARKS})
    return sorted(found.items(), key=lambda item: (item[1] != "callbench.catalog:register_builtins", item[0]))


def _load_hook(name: str, value: str) -> Any:
    try:
        return _import(value, f"plugin entry point {name!r}")
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not break callbench with a traceback
        raise UserError(f"plugin entry point {name!r} ({value}) failed to load: {exc}") from None


def reset_catalog() -> None:
    """Forget the catalog (tests that install plugins call this)."""
    global _CATALOG
    _CATALOG = None
