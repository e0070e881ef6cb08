"""A path suite's own Python tools: ``bindings:`` and ``state:`` in ``suite.yaml``.

::

    name: shop
    bindings: tools.py               # a file beside suite.yaml, or package.module, or ...:NAME
    state: tools.py:make_state       # optional: make_state(case, workdir) -> a fresh state per case

``bindings`` names where the implementations are: a Python file (relative to the suite folder) or an
importable module, whose functions are named like the tools; or ``FILE_OR_MODULE:NAME`` where ``NAME``
is a dict from tool name to function, or a module. With ``state``, each function is called
``fn(state, **arguments)`` and the state's ``snapshot()`` (when it has one) is what ``state-match``
compares; without it, ``fn(**arguments)``. A parameter named like a Python keyword (``from``) reaches
the function through ``**arguments``.

Everything is checked when the suite is built, never charged to a model: every contract has a
function and every named function a contract, and each function's signature accepts its contract's
parameters (and requires none the contract lacks). A problem is one line naming the file, the tool
and what is wrong.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import keyword
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from callbench.errors import SuiteError
from callbench.tools.registry import ToolRegistry

RENAMES = "__callbench_renames__"
"""Attribute of a wrapped tool function: contract parameter -> the Python name it is passed as."""


@dataclass(frozen=True)
class Bindings:
    """Tool name -> implementation, and the per-case state factory (if any)."""

    functions: Mapping[str, Callable[..., Any]]
    state_factory: Callable[..., Any] | None
    source: str
    """Where they came from (``suite.yaml``'s ``bindings`` value, resolved), for run.json."""


def load_bindings(spec: str, state: str | None, base: Path, registry: ToolRegistry, where: str) -> Bindings:
    """Import and check the bindings ``spec`` (and the state factory ``state``) of a suite whose
    folder is ``base``; ``where`` names the suite header in messages.

    Raises:
        SuiteError: one line naming the file, the tool and what is wrong.
    """
    target = _resolve(spec, base, where, "bindings")
    functions = _functions_of(target, registry, where, spec)
    state_factory = None
    if state is not None:
        factory = _resolve(state, base, where, "state")
        if not callable(factory) or isinstance(factory, ModuleType):
            raise SuiteError(f"{where}: state: {state!r} is not a function (write FILE_OR_MODULE:FUNCTION)")
        state_factory = factory
    functions = {name: _keyword_parameters(function, registry, name) for name, function in functions.items()}
    check_bindings(functions, registry, where, with_state=state_factory is not None)
    return Bindings(functions, state_factory, spec)


def _keyword_parameters(function: Any, registry: ToolRegistry, name: str) -> Any:
    """``function`` taking its contract's Python-keyword parameters (``from``) under the names a
    Python function can have (``from_``), as ``callbench contracts from-python`` writes them."""
    if name not in registry or not callable(function):
        return function
    try:
        accepted = set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return function
    renames = {
        parameter: f"{parameter}_"
        for parameter in registry.get(name).parameters.get("properties") or {}
        if keyword.iskeyword(parameter) and parameter not in accepted and f"{parameter}_" in accepted
    }
    if not renames:
        return function

    @functools.wraps(function)
    def renamed(*args: Any, **arguments: Any) -> Any:
        return function(*args, **{renames.get(key, key): value for key, value in arguments.items()})

    renamed.__dict__[RENAMES] = renames  # the load-time check binds the contract's names through it
    return renamed


def check_bindings(
    functions: Mapping[str, Callable[..., Any]], registry: ToolRegistry, where: str, *, with_state: bool
) -> None:
    """Every contract has a function; every function a contract; each signature takes its contract's
    parameters (after the state, when there is one)."""
    missing = [name for name in registry.names() if name not in functions]
    if missing:
        raise SuiteError(
            f"{where}: bindings: no function for the tool(s) {', '.join(map(repr, missing))}; "
            "every contract needs an implementation (or leave bindings out: the contract executor "
            "answers with synthetic results)"
        )
    extra = [name for name in functions if name not in registry]
    if extra:
        raise SuiteError(f"{where}: bindings: {', '.join(map(repr, extra))} has no contract in the registry")
    for name, function in functions.items():
        _check_signature(name, function, registry, where, with_state)


def _check_signature(
    name: str, function: Callable[..., Any], registry: ToolRegistry, where: str, with_state: bool
) -> None:
    if not callable(function):
        raise SuiteError(
            f"{where}: bindings: tool {name!r} is bound to a {type(function).__name__}, not a function"
        )
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin without a signature: nothing to check
    parameters = list(registry.get(name).parameters.get("properties") or {})
    leading = [None] if with_state else []
    renames = getattr(function, RENAMES, {})
    try:
        signature.bind(*leading, **{renames.get(p, p): None for p in parameters})
    except TypeError as exc:
        origin = _origin(function)
        shape = "fn(state, **arguments)" if with_state else "fn(**arguments)"
        raise SuiteError(
            f"{where}: bindings: {origin} cannot take the parameters of tool {name!r} "
            f"({', '.join(parameters) or 'none'}) as {shape}: {exc}"
        ) from None


def _origin(function: Callable[..., Any]) -> str:
    code = getattr(function, "__code__", None)
    label = getattr(function, "__qualname__", repr(function))
    return f"{code.co_filename}:{code.co_firstlineno} {label}" if code is not None else label


def _functions_of(
    target: Any, registry: ToolRegistry, where: str, spec: str
) -> dict[str, Callable[..., Any]]:
    if isinstance(target, Mapping):
        return {str(name): function for name, function in target.items()}
    if isinstance(target, ModuleType):
        exported = getattr(target, "__all__", None)
        names = list(exported) if exported is not None else registry.names()
        return {name: getattr(target, name) for name in names if hasattr(target, name)}
    raise SuiteError(
        f"{where}: bindings: {spec!r} is a {type(target).__name__}; name a module, a file or a dict"
    )


def _resolve(spec: str, base: Path, where: str, field: str) -> Any:
    """``FILE_OR_MODULE`` or ``FILE_OR_MODULE:NAME`` -> the module or the object."""
    location, _, attr = spec.rpartition(":") if _has_attr(spec) else (spec, "", "")
    module = import_location(location, base, where, field)
    if not attr:
        return module
    try:
        return getattr(module, attr)
    except AttributeError:
        raise SuiteError(f"{where}: {field}: {location} has no {attr!r}") from None


def _has_attr(spec: str) -> bool:
    """``a.py:NAME`` and ``pkg.mod:NAME`` name an attribute; a Windows drive (``C:\\x.py``) does not."""
    head, colon, tail = spec.rpartition(":")
    return bool(colon) and bool(tail) and "/" not in tail and "\\" not in tail and len(head) > 1


def import_location(location: str, base: Path, where: str, field: str) -> ModuleType:
    """The module at ``location``: a ``.py`` file (relative to ``base``) or an importable module name."""
    if location.endswith(".py"):
        path = (base / location).resolve()
        if not path.is_file():
            raise SuiteError(f"{where}: {field}: file {path} not found")
        # One module per file, under a name derived from its path: two suites' tools.py never clash.
        name = f"callbench_suite_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}_{path.stem}"
        if name in sys.modules:
            return sys.modules[name]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise SuiteError(f"{where}: {field}: cannot import {path}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the user's file: one line, not a traceback
            del sys.modules[name]
            raise SuiteError(
                f"{where}: {field}: {path} failed to import: {type(exc).__name__}: {exc}"
            ) from None
        return module
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        raise SuiteError(f"{where}: {field}: cannot import {location!r} ({exc})") from None
    except Exception as exc:  # noqa: BLE001
        raise SuiteError(
            f"{where}: {field}: {location} failed to import: {type(exc).__name__}: {exc}"
        ) from None
