"""One registry per kind, with lazy entries and "did you mean".

Kinds: suite, provider, executor, scorer, CLI command set.

Built-ins register exactly as third-party packages do: through the entry-point group ``callbench``,
whose objects are called with the :class:`Catalog`. callbench's own entry point is
:func:`register_builtins`. Entries are ``"module:attr"`` strings imported on first use, so
optional dependencies are only needed for what a run actually uses.

What an entry must be is said by one Protocol per kind (:class:`SuiteLoader`, :class:`ProviderFactory`,
:class:`ExecutorFactory`, :class:`ScorerFactory`, :class:`CommandSet`; ``callbench.plugin`` exports
them). The catalog sits below the suites, executors, scorers and providers in the layers, so these
Protocols describe what they return structurally, in terms of :mod:`callbench.types` only: a
``Suite``, ``Provider``, ``Executor`` or ``Scorer`` of ``callbench.plugin`` satisfies them, and the
code that builds one checks it is the real class where it needs more than the Protocol says.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from callbench.errors import UserError
from callbench.types.names import did_you_mean

if TYPE_CHECKING:
    # For the Protocols' annotations only: every CLI start imports the catalog, and these pull pydantic.
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    import typer

    from callbench.types.case import Case
    from callbench.types.contract import ToolContract
    from callbench.types.messages import GenerationSettings, Message, ModelTurn
    from callbench.types.records import CaseRecord
    from callbench.types.suite_options import SuiteOptions
    from callbench.types.summary import Aggregate
    from callbench.types.trace import Trace
    from callbench.types.verdict import Verdict

Kind = Literal["suite", "provider", "executor", "scorer"]
T = TypeVar("T")


# ---------------------------------------------------------------- what an entry must be


class SuiteLike(Protocol):
    """What the catalog knows of a suite: its name and cases (the whole contract is
    ``callbench.plugin.Suite``, which ``load_suite`` checks the loader returned)."""

    @property
    def name(self) -> str: ...

    @property
    def cases(self) -> Sequence[Case]: ...


class SuiteLoader(Protocol):
    """A ``catalog.suites`` entry: ``load(spec, options) -> Suite``, looked up by ``--suite name[:spec]``.

    ``spec`` is the text after ``name:`` (empty without one); ``options`` holds ``--data``,
    ``--registry`` and the API's extra keywords.
    """

    def __call__(self, spec: str, options: SuiteOptions, /) -> SuiteLike: ...


class ProviderLike(Protocol):
    """What every model or built-in agent answers: one conversation turn (the whole contract, with
    its optional hooks, is ``callbench.plugin.Provider``, which ``make_provider`` checks)."""

    name: str
    model: str

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn: ...


class ProviderFactory(Protocol):
    """A ``catalog.providers`` entry: ``make_provider(spec) -> Provider``, looked up by
    ``--model name[:spec]`` (``spec``: the text after ``name:``, e.g. the model id)."""

    def __call__(self, spec: str, /) -> ProviderLike: ...


class ExecutorLike(Protocol):
    """A factory of per-case tool sessions (the whole contract is ``callbench.plugin.Executor``,
    which ``resolve_executor`` checks the factory returned)."""

    name: str

    # ``suite`` is the run's Suite and the result an ExecutorSession, both above the catalog in the
    # layers: an executor may annotate them precisely, which a narrower type here would forbid.
    def start(self, case: Case, workdir: Path, suite: Any, /) -> object: ...

    async def aclose(self) -> None: ...


class ExecutorFactory(Protocol):
    """A ``catalog.executors`` entry: called without arguments (an ``Executor`` subclass, typically),
    looked up when ``Suite.executor`` or ``Case.executor`` is a name."""

    def __call__(self) -> ExecutorLike: ...


class ScorerLike(Protocol):
    """Every hook the harness calls on a scorer (``callbench.plugin.Scorer`` has them all, with
    defaults for ``ascore`` and ``aggregate``)."""

    name: str

    def score(self, case: Case, trace: Trace) -> Verdict: ...

    async def ascore(self, case: Case, trace: Trace) -> Verdict: ...

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate | None: ...


class ScorerFactory(Protocol):
    """A ``catalog.scorers`` entry: ``factory(suite) -> Scorer`` (a ``Scorer`` subclass, typically),
    looked up by the names in ``Suite.scorers`` and ``--tier``."""

    # ``suite`` is the run's Suite, which sits above the catalog in the layers: typed Any so that a
    # factory may annotate it as Suite (a Protocol's parameter may be no narrower than its users').
    def __call__(self, suite: Any, /) -> ScorerLike: ...


class CommandSet(Protocol):
    """A ``catalog.commands`` entry: ``register_commands(app)``, called once at CLI start to add
    commands (``app.add_typer``, or a shared group such as ``export``)."""

    def __call__(self, app: typer.Typer, /) -> None: ...


class PluginHook(Protocol):
    """A ``callbench`` entry point's object: ``register(catalog)``, called once per process."""

    def __call__(self, catalog: Catalog, /) -> None: ...


class Registry(Generic[T]):
    """Name -> object, where an object may be given lazily as ``"module:attr"``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}
        self.provided_by: dict[str, Plugin] = {}
        """Name -> the plugin that registered it (entries registered outside plugin loading: none)."""
        self._loading: Plugin | None = None

    def register(self, name: str, target: T | str, *, replace: bool = False) -> None:
        """Register ``target`` (the entry, or ``"module:attr"`` naming it) under ``name``."""
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

    def get(self, name: str) -> T:
        """The registered object, importing it on first use."""
        if name not in self._entries:
            raise UserError(f"unknown {self.kind} {name!r}{did_you_mean(name, self._entries)}")
        target = self._entries[name]
        if isinstance(target, str):
            # what the module holds is trusted to be the kind's entry (as a plugin's object is)
            imported: T = _import(target, f"{self.kind} {name!r}")
            self._entries[name] = imported
            return imported
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
        self.suites: Registry[SuiteLoader] = Registry("suite")
        self.providers: Registry[ProviderFactory] = Registry("provider")
        self.executors: Registry[ExecutorFactory] = Registry("executor")
        self.scorers: Registry[ScorerFactory] = Registry("scorer")
        self.commands: Registry[CommandSet] = Registry("command set")
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
        """The registry of ``kind`` (its entries' Protocol depends on the kind)."""
        registries: dict[Kind, Registry[Any]] = {
            "suite": self.suites,
            "provider": self.providers,
            "executor": self.executors,
            "scorer": self.scorers,
        }
        return registries[kind]

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
    "mcp_memory": "callbench.benchmarks.mcp_memory:register",
    "tau2": "callbench.benchmarks.tau2:register",
}
"""The benchmarks shipped in this package, as the entry points ``pyproject.toml`` declares. Only read
when the package metadata is missing (a source tree on ``PYTHONPATH``): names, never imports."""


def register_builtins(catalog: Catalog) -> None:
    """callbench's own entry point: registers the core built-ins (agents, providers, the contract
    executor, the strict tiers and state match) like any plugin would. Benchmarks register themselves."""
    for name, target in BUILTIN_PROVIDERS.items():
        catalog.providers.register(name, target)
    for name, target in BUILTIN_EXECUTORS.items():
        catalog.executors.register(name, target)
    for name, target in BUILTIN_SCORERS.items():
        catalog.scorers.register(name, target)


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


def _load_hook(name: str, value: str) -> PluginHook:
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
