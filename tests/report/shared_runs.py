"""Run folders of real ``callbench run`` invocations, built once per test run and shared.

Several browser test modules need the same real run (the oracle on every genomics case: ~3 s of CPU
and a CLI start-up each time). :func:`shared_run` builds it once for the whole test run: under
pytest-xdist in the run's base temporary folder, shared by its workers only (the first worker to
need it builds it under a file lock, the others wait and reuse it), otherwise in this session's own.
A run that failed leaves no ready mark, so the next test that needs it runs it again and reports the
failure itself. Callers must treat the folder as read-only (reports are written elsewhere).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Under xdist, a worker's base temp is <run>/popen-gwN: its parent is shared by this run's
    workers only. Without xdist, the session's own base temp (its parent holds other sessions)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_run(tmp_path_factory: pytest.TempPathFactory, *argv: str) -> Path:
    """The folder of ``callbench run ARGV --out FOLDER --progress quiet``, run once per test run."""
    digest = hashlib.sha256("\0".join(argv).encode()).hexdigest()[:12]
    root = shared_root(tmp_path_factory) / "shared-runs"
    root.mkdir(parents=True, exist_ok=True)
    folder, ready = root / digest, root / f"{digest}.ready"
    with FileLock(str(root / f"{digest}.lock")):
        if not ready.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            cmd = ["callbench", "run", *argv, "--out", str(folder), "--progress", "quiet"]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{' '.join(cmd)}:\n{done.stdout}{done.stderr}"
            ready.write_text(" ".join(argv) + "\n", encoding="utf-8")
    return folder
