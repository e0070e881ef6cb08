"""Resolve a suite spec (a catalog name with options, or a path) to a loaded ``Suite``."""

from __future__ import annotations

from pathlib import Path

from callbench.catalog import catalog
from callbench.errors import SuiteError
from callbench.suites.base import Suite, SuiteOptions
from callbench.suites.loader import load_suite_path

PATH_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")


def looks_like_path(spec: str) -> bool:
    return "/" in spec or "\\" in spec or spec.endswith(PATH_SUFFIXES) or Path(spec).exists()


def load_suite(spec: str, *, data: str | Path | None = None, registry: str | Path | None = None,
               **extra: object) -> Suite:
    """Load a suite: ``starter``, ``genomics-simple``, ``dag:n_core=5;depth=2``, ``bfcl:simple_python``,
    or a path to a suite folder or case file."""
    options = SuiteOptions(data=Path(data) if data else None, registry=Path(registry) if registry else None,
                           extra=dict(extra))
    if looks_like_path(spec):
        return load_suite_path(spec, registry=options.registry)
    name, _, rest = spec.partition(":")
    factory = catalog().suites.get(name)
    suite = factory(rest, options)
    if not isinstance(suite, Suite):
        raise SuiteError(f"suite {spec!r}: loader returned {type(suite).__name__}, not a Suite")
    return suite
