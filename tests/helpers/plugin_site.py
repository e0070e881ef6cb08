"""Install a plugin package the way a user does (pip), into a folder of its own, and run the
``callbench`` CLI with that folder on the path: the plugin tests share these two steps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def install_plugin(package: Path, target: Path) -> Path:
    """``pip install --no-deps --target TARGET PACKAGE`` (no build isolation: setuptools is here);
    returns ``target``."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(package),
        ],
        check=True,
        capture_output=True,
    )
    return target


def run_cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``callbench ARGS`` in a child process that sees the plugins installed in ``site``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", *args], env=env, cwd=cwd, capture_output=True, text=True
    )
