"""The scripts in bench/ are not run by CI (they time things): this keeps them from rotting unseen.

Each one must import (so every callbench name it uses still exists after a move) and every repository
path it names must exist.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((REPO / "bench").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_imports_and_its_paths_exist(script: Path) -> None:
    saved_path = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # runs the module body only: main() is behind __name__
    finally:
        sys.path[:] = saved_path
    inside = [v for v in vars(module).values() if isinstance(v, Path) and v.is_relative_to(REPO)]
    missing = [str(p.relative_to(REPO)) for p in inside if not p.exists()]
    assert not missing, f"{script.name} names paths that do not exist: {missing}"
    assert callable(getattr(module, "main", None)), f"{script.name} has no main()"


def test_there_are_bench_scripts() -> None:
    assert len(SCRIPTS) >= 8
