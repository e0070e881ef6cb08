"""Resolve a suite spec (a catalog name with options, or a path) to a loaded ``Suite``.

Resolution order, first match wins:

1. a drive letter (``C:\\x``, ``C:/x``, ``C:x``) is a path;
2. a registered catalog name before the first ``:`` is that catalog suite, so options may hold
   paths (``dag:file=runs/tasks.jsonl``); a bare registered name (``starter``) is the catalog
   suite unless a file or folder of that name exists;
3. an existing file or folder is a path;
4. ``name:...`` with a name-like prefix goes to the catalog (whose error suggests a close name);
5. anything with ``/`` or ``\\`` or a suite-file suffix is a path.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from callbench.catalog import catalog
from callbench.errors import SuiteError
from callbench.suites.bindings import import_location
from callbench.suites.loader import load_suite_path
from callbench.suites.suite import Suite, SuiteOptions
from callbench.types.names import did_you_mean

PATH_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
# One letter before the colon is a drive, never a catalog name, whatever a plugin registers.
_DRIVE = re.compile(r"^[A-Za-z]:")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


_PYTHON_SUITE = re.compile(r"(?P<path>.+\.py)(?::(?P<name>[A-Za-z_][A-Za-z0-9_]*))?")
"""``suite.py`` or ``suite.py:function``: a suite defined in Python."""


def load_python_suite(path: Path, name: str, options: SuiteOptions) -> Suite:
    """The suite the function ``name`` of the Python file ``path`` returns (called with the run's
    :class:`SuiteOptions` when it takes an argument, else with none).

    Raises:
        SuiteError: the file is missing or fails to import, has no such function, or the function
            does not return a ``Suite`` (one line each).
    """
    where = f"{path}:{name}"
    if not path.is_file():
        raise SuiteError(f"{path}: suite file not found")
    module = import_location(path.name, path.parent, str(path), "suite")
    loader = getattr(module, name, None)
    if not callable(loader):
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise SuiteError(f"{where}: no function {name!r} in {path}{did_you_mean(name, found)}")
    try:
        takes_options = bool(inspect.signature(loader).parameters)
    except (TypeError, ValueError):
        takes_options = False
    try:
        suite = loader(options) if takes_options else loader()
    except SuiteError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's loader: one line, not a traceback
        raise SuiteError(f"{where}: the suite loader failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(suite, Suite):
        raise SuiteError(
            f"{where}: is not a suite loader: it returned a {type(suite).__name__}, not a callbench Suite"
        )
    if not suite.source:
        suite.source = str(path)
    return suite


def catalog_prefix(spec: str) -> str | None:
    """The registered suite name that ``spec`` (``name`` or ``name:options``) starts with, else None."""
    if _DRIVE.match(spec):
        return None
    name, colon, _ = spec.partition(":")
    if name not in catalog().suites:
        return None
    if not colon and Path(spec).exists():
        return None
    return name


def _reads_as_path(spec: str) -> bool:
    return "/" in spec or "\\" in spec or spec.endswith(PATH_SUFFIXES)


def looks_like_path(spec: str) -> bool:
    """True when ``spec`` names a file or folder rather than a catalog suite (see the module docstring)."""
    if catalog_prefix(spec) is not None:
        return False
    if _DRIVE.match(spec) or Path(spec).exists():
        return True
    name, colon, _ = spec.partition(":")
    if colon and _NAME.fullmatch(name):
        return False
    return _reads_as_path(spec)


def load_suite(
    spec: str, *, data: str | Path | None = None, registry: str | Path | None = None, **extra: object
) -> Suite:
    """Load a suite: ``starter``, ``genomics-simple``, ``dag:n_core=5;depth=2``, ``bfcl:simple_python``,
    or a path to a suite folder or case file."""
    options = SuiteOptions(
        data=Path(data) if data else None, registry=Path(registry) if registry else None, extra=dict(extra)
    )
    python_file = _PYTHON_SUITE.fullmatch(spec)
    if python_file is not None:
        return load_python_suite(Path(python_file["path"]), python_file["name"] or "load_suite", options)
    if looks_like_path(spec):
        return load_suite_path(spec, registry=options.registry)
    name, _, rest = spec.partition(":")
    suites = catalog().suites
    if name not in suites and _reads_as_path(spec):
        # Either a missing file whose name holds a colon or a mistyped catalog name with a path
        # option: say both in one line.
        raise SuiteError(
            f"{spec}: suite file or folder not found, and {name!r} is not a registered suite"
            f"{did_you_mean(name, suites.names())}"
        )
    factory = suites.get(name)
    suite = factory(rest, options)
    if not isinstance(suite, Suite):
        raise SuiteError(f"suite {spec!r}: loader returned {type(suite).__name__}, not a Suite")
    return suite
