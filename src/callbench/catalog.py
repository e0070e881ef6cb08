"""One registry per kind, with lazy entries and "did you mean".

Kinds: suite, provider, executor, scorer, CLI command set.

Built-ins register exactly as third-party packages do: through the entry-point group ``callbench``,
whose objects are called with the :class:`Catalog`. callbench's own entry point is
:func:`register_builtins`. Entries are ``"module:attr"`` strings imported on first use, so
optional dependencies are only needed for what a run actually uses.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
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
        self.provided_by: dict[str, Plugin] = {}
        """Name -> the plugin that registered it (entries registered outside plugin loading: none)."""
        self._loading: Plugin | None = None

    def register(self, name: str, target: Any, *, replace: bool = False) -> None:
        if name in self._entries and not replace and self._entries[name] != target:
            owner = self.provided_by.get(name)
            by = f" by {owner.label}" if owner is not None else ""
            raise UserError(f"{self.kind} {name!r} is already registered{by}")
        self._entries[name] = target
        if self._loading is not None:
            self.provided_by[name] = self._loading
            self._loading.provides.setdefault(self.kind, []).append(name)

    def _forget(self, plugin: Plugin) -> None:
        """Drop what ``plugin`` registered (it failed half-way)."""
        for name in [n for n, owner in self.provided_by.items() if owner is plugin]:
            self._entries.pop(name, None)
            del self.provided_by[name]

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


EXTRAS_HINT = "; install it (see the README's extras)"


def _import(path: str, label: str, hint: str = EXTRAS_HINT) -> Any:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # callbench's own optional modules are "not available"; any other missing module (a
        # third-party package, a plugin's own module, even one named callbench_*) is named
        if exc.name and exc.name.split(".")[0] != "callbench":
            raise UserError(f"{label} needs the module {exc.name!r}, which is not installed{hint}") from None
        raise UserError(
            f"{label} is not available in this installation (module {module_name} is missing)"
        ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UserError(f"{label}: module {module_name} has no {attr!r}") from None


@dataclass
class Plugin:
    """One ``callbench`` entry point: the distribution that ships it and what it registered."""

    entry_point: str
    target: str
    """``module:attr`` of its register function."""
    distribution: str | None = None
    version: str | None = None
    provides: dict[str, list[str]] = field(default_factory=dict)
    """Kind (``suite``, ``provider``...) -> the names it registered."""
    error: str | None = None
    """Why it was skipped (it failed to import or to register); ``None`` when it loaded."""

    @property
    def label(self) -> str:
        """``entry point`` (``distribution version``) for messages."""
        shipped = f" from {self.distribution} {self.version or ''}".rstrip() if self.distribution else ""
        return f"plugin {self.entry_point!r}{shipped}"


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
        self.plugins: list[Plugin] = []
        """Every entry point found, loaded or not, in load order."""
        self.warnings: list[str] = []
        """One line per broken plugin or name collision (the CLI prints them once)."""

    def _registries(self) -> tuple[Registry[Any], ...]:
        return (self.suites, self.providers, self.executors, self.scorers, self.commands)

    def load_plugin(self, plugin: Plugin) -> None:
        """Call ``plugin``'s register function; a plugin that fails to import or to register is
        skipped whole (what it registered is dropped) and named in :attr:`warnings`, so every other
        suite keeps working."""
        self.plugins.append(plugin)
        default_before = self.default_suite
        for registry in self._registries():
            registry._loading = plugin
        try:
            _load_hook(plugin.entry_point, plugin.target)(self)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must never break the others
            plugin.error = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
            plugin.provides.clear()
            for registry in self._registries():
                registry._forget(plugin)
            self.default_suite = default_before
            self.warnings.append(f"{plugin.label} was skipped: {plugin.error}")
        finally:
            for registry in self._registries():
                registry._loading = None

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
    "python-bindings": "callbench.executors.python:SuiteBindingsExecutor",
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
        plugins = discover_plugins()
        fresh.warnings.extend(_collisions(plugins))
        for plugin in plugins:
            fresh.load_plugin(plugin)
        _CATALOG = fresh
    return _CATALOG


OWN_DISTRIBUTION = "callbench"


def discover_plugins() -> list[Plugin]:
    """Every ``callbench`` entry point, each with its distribution: callbench's own first (its core
    built-ins, then its benchmarks), then the others by name. Two entry points with one name are both
    kept (a plugin named like a built-in must not hide it)."""
    found = [Plugin(ep.name, ep.value, *_distribution_of(ep)) for ep in entry_points(group="callbench")]
    if not any(p.target == "callbench.catalog:register_builtins" for p in found):
        # A source tree without installed metadata: the package's own entry points, by name.
        own = {"builtins": "callbench.catalog:register_builtins", **BUILTIN_BENCHMARKS}
        found += [Plugin(name, target, OWN_DISTRIBUTION) for name, target in own.items()]
    return sorted(
        found,
        key=lambda p: (
            p.target != "callbench.catalog:register_builtins",
            p.distribution != OWN_DISTRIBUTION,
            p.entry_point,
            p.distribution or "",
        ),
    )


def _distribution_of(ep: Any) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def _collisions(plugins: list[Plugin]) -> list[str]:
    """One line per entry-point name that two distributions use (both are loaded)."""
    by_name: dict[str, list[Plugin]] = {}
    for plugin in plugins:
        by_name.setdefault(plugin.entry_point, []).append(plugin)
    return [
        f"entry point {name!r} is declared by "
        + " and by ".join(f"{p.distribution or '?'} ({p.target})" for p in same)
        + "; both are loaded, and a name they both register keeps the first"
        for name, same in by_name.items()
        if len(same) > 1
    ]


def _load_hook(name: str, value: str) -> Any:
    """The register function ``value`` (``module:attr``) of the entry point ``name``."""
    try:
        return _import(value, value, hint="")
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not break callbench with a traceback
        raise UserError(f"{value} failed to import: {type(exc).__name__}: {exc}") from None


def reset_catalog() -> None:
    """Forget the catalog (tests that install plugins call this)."""
    global _CATALOG
    _CATALOG = None
