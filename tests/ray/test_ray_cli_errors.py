"""``--backend ray`` without Ray, and an address where no cluster answers: one line, exit 2, no
traceback, no run folder."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from callbench.harness.backends import RAY_MISSING

CLI = "import sys; from callbench.cli.main import main; {prelude}; sys.exit(main(sys.argv[1:]))"


RAY_RUN = ("run", "-s", "starter", "-m", "oracle", "--backend", "ray")
"""The command every test here starts from: a starter run on the Ray backend."""


def cli(*args: str, prelude: str = "pass") -> subprocess.CompletedProcess[str]:
    code = CLI.format(prelude=prelude)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)


def lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def test_backend_ray_without_ray_says_how_to_install_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = cli(
        *RAY_RUN,
        "--out",
        str(out),
        prelude="sys.modules['ray'] = None",  # import ray now fails as if it were not installed
    )
    assert done.returncode == 2, done.stderr
    assert lines(done) == [f"callbench: error: {RAY_MISSING}"]
    assert not out.exists()


def test_unreachable_ray_address_is_one_line_within_seconds(tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.monotonic()
    done = cli(
        *RAY_RUN,
        "--ray-address",
        "127.0.0.1:1",
        "--out",
        str(out),
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 2, done.stderr
    shown = lines(done)
    assert len(shown) == 1 and "--ray-address 127.0.0.1:1" in shown[0] and "Traceback" not in shown[0], shown
    assert "no Ray cluster answers there" in shown[0]
    assert not out.exists()


def test_ray_address_needs_backend_ray(tmp_path: Path) -> None:
    done = cli("run", "-s", "starter", "-m", "oracle", "--ray-address", "auto", "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert lines(done) == ["callbench: error: --ray-address must be used with --backend ray (got 'auto')"]


def test_watch_and_agent_stay_on_the_local_backend(tmp_path: Path) -> None:
    import asyncio

    import pytest

    from callbench.errors import ConfigError
    from callbench.harness.config import RunConfig
    from callbench.harness.engine import run_async

    watch = RunConfig(suites=("starter",), model="oracle", backend="ray", watch=True, out_dir=tmp_path / "w")
    with pytest.raises(ConfigError, match=r"^--watch prints rounds as this process plays them; use it with"):
        asyncio.run(run_async(watch))
    agent = RunConfig(suites=("starter",), agent="cmd:true", backend="ray", out_dir=tmp_path / "a")
    with pytest.raises(ConfigError, match=r"^--backend ray plays models; an --agent run uses the local"):
        asyncio.run(run_async(agent))
    assert not (tmp_path / "w").exists() and not (tmp_path / "a").exists()


def test_ray_address_auto_without_a_cluster_is_one_line(tmp_path: Path) -> None:
    done = cli(
        *RAY_RUN,
        "--ray-address",
        "auto",
        "--out",
        str(tmp_path / "r"),
        # 'auto' finds a cluster through <RAY_TMPDIR>/ray/ray_current_cluster, then any gcs_server process
        # on the machine: an empty folder and no process scan keep this test from joining a session
        # another test (or test worker) has started
        prelude="; ".join(
            (
                "import os",
                "os.environ.pop('RAY_ADDRESS', None)",
                f"os.environ['RAY_TMPDIR'] = {str(tmp_path)!r}",
                "import ray._private.services as services",
                "import functools",
                "services.find_gcs_addresses = functools.lru_cache(maxsize=None)(lambda: [])",
            )
        ),
    )
    assert done.returncode == 2
    assert lines(done) == [
        "callbench: error: --ray-address auto: no Ray cluster runs on this machine; start one with "
        "'ray start --head', or leave --ray-address out to start a local Ray instance"
    ]
    assert not (tmp_path / "r").exists()


def test_ray_workers_is_checked_before_anything_runs(tmp_path: Path) -> None:
    out = str(tmp_path / "r")
    zero = cli("run", "-s", "starter", "-m", "oracle", "--backend", "ray", "--ray-workers", "0", "--out", out)
    assert zero.returncode == 2
    assert lines(zero) == ["callbench: error: --ray-workers must be an integer of at least 1 (got 0)"]
    local = cli("run", "-s", "starter", "-m", "oracle", "--ray-workers", "2", "--out", out)
    assert local.returncode == 2
    assert lines(local) == ["callbench: error: --ray-workers must be used with --backend ray (got 2)"]
    assert not (tmp_path / "r").exists()
