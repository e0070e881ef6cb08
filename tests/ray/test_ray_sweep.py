"""A sweep on the Ray backend: every cell runs on the shared Ray session and writes the records the
local backend writes (timing fields aside); a dead --ray-address stops the sweep before its folder exists."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from ray_suites import TIMING_FIELDS, differences, record_lines

from callbench.errors import ConfigError
from callbench.harness.sweep.runner import SweepOptions, run_sweep
from callbench.harness.sweep.spec import parse_sweep

SWEEP = "models: [oracle, 'noisy:3']\nsuites: [starter]\nmodes: [production-parity]\nlimit: 6\ntrials: 2\n"


def sweep(folder: Path, **options: Any) -> dict[str, Any]:
    spec = parse_sweep(folder.parent / "sweep.yaml", SWEEP)
    return asyncio.run(run_sweep(spec, folder, options=SweepOptions(**options)))


def test_a_sweep_on_ray_writes_what_the_local_backend_writes(ray_local: Any, tmp_path: Path) -> None:
    local = sweep(tmp_path / "local")
    remote = sweep(tmp_path / "ray", backend="ray")
    assert [c["status"] for c in remote["cells"]] == ["done", "done"]
    for a_cell, b_cell in zip(local["cells"], remote["cells"], strict=True):
        a = {(r["key"], r["trial"]): r for r in record_lines(tmp_path / "local" / a_cell["folder"])}
        b = {(r["key"], r["trial"]): r for r in record_lines(tmp_path / "ray" / b_cell["folder"])}
        assert sorted(a) == sorted(b) and len(a) == 12
        found = {path for key in a for path in differences(a[key], b[key])}
        assert found <= TIMING_FIELDS, sorted(found - TIMING_FIELDS)
    assert {c["n_completed"] for c in remote["cells"]} == {12}


def test_an_unreachable_ray_address_stops_the_sweep_before_its_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="127.0.0.1:1"):
        sweep(tmp_path / "never", backend="ray", ray_address="127.0.0.1:1")
    assert not (tmp_path / "never").exists()
