"""The catalog's fallback list of built-in benchmarks (used from a source tree without installed
metadata) must name exactly the entry points pyproject.toml declares, or the two drift apart."""

from __future__ import annotations

import tomllib
from pathlib import Path

from callbench.catalog import BUILTIN_BENCHMARKS

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_fallback_benchmarks_match_the_declared_entry_points() -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]["callbench"]
    assert declared.pop("builtins") == "callbench.catalog:register_builtins"
    assert declared == BUILTIN_BENCHMARKS
    benchmarks = {
        p.name for p in (PYPROJECT.parent / "src" / "callbench" / "benchmarks").iterdir() if p.is_dir()
    }
    assert set(BUILTIN_BENCHMARKS) == benchmarks - {"__pycache__"}
