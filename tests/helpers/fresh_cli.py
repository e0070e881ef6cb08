"""The ``callbench`` console script of a fresh install, for CLI tests (see ``tests/cli/conftest.py``).

A virtual environment with no system site packages gets ``pip install <repo>`` with nothing but the
declared runtime dependencies, so an import the project forgot to declare (``click`` was one) fails
there as it would for a user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]
READY = ".callbench-fresh-ready"
"""Written into the venv once its install succeeded: a worker that waited on the lock reuses it."""


@dataclass(frozen=True)
class FreshCli:
    """Runs the installed console script; ``cwd`` is a scratch folder unless given."""

    script: Path
    scratch: Path

    def run(
        self,
        *argv: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 180,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        base["COLUMNS"] = "200"  # tables wide enough that assertions do not depend on wrapping
        return subprocess.run(
            [str(self.script), *argv],
            cwd=cwd or self.scratch,
            env={**base, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
        )


def assert_clean_error(done: subprocess.CompletedProcess[str], code: int, says: str | Sequence[str]) -> str:
    """Exit ``code``, no traceback anywhere, and the message(s) in stderr. Returns stderr."""
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    assert done.returncode == code, f"exit {done.returncode}, expected {code}:\n{output}"
    for text in [says] if isinstance(says, str) else says:
        assert text in done.stderr, f"{text!r} not in stderr:\n{done.stderr}"
    return done.stderr


def install_fresh(venv: Path, scratch: Path) -> FreshCli:
    """Create ``venv`` and install the repository into it (about a minute with a warm pip cache)."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(REPO)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert install.returncode == 0, f"pip install of the project failed:\n{install.stdout}{install.stderr}"
    return FreshCli(script=venv / "bin" / "callbench", scratch=scratch)


def shared_fresh(shared_root: Path, scratch: Path) -> FreshCli:
    """The fresh install at ``shared_root/fresh-venv``, built by whichever process gets there first.

    Under pytest-xdist every worker runs session fixtures for itself; the venv (a minute of pip)
    is built once for the whole run: the first worker builds it under a file lock, the others wait
    on the lock and reuse it. A failed install leaves no ready mark, so the next worker retries and
    reports the same failure for its own tests. ``scratch`` stays per worker (tests write
    ``runs/`` there)."""
    venv = shared_root / "fresh-venv"
    with FileLock(str(shared_root / "fresh-venv.lock")):
        if not (venv / READY).is_file():
            shutil.rmtree(venv, ignore_errors=True)  # what a failed attempt left
            install_fresh(venv, scratch)
            (venv / READY).write_text("ok\n", encoding="utf-8")
    return FreshCli(script=venv / "bin" / "callbench", scratch=scratch)


def start_prefetch(shared_root: Path) -> subprocess.Popen[bytes] | None:
    """Start building ``shared_root/fresh-venv`` in a background process, once per test run.

    Called by every xdist worker when its collection holds a test that uses the fixture: the first
    one to create the ``started`` mark starts ``python fresh_cli.py SHARED_ROOT`` (which takes the
    lock and builds), the others return None. The workers meanwhile run other tests; the fixture
    then waits on the lock instead of a worker idling a minute behind another. pip's output goes to
    ``fresh-venv.log``; a failed prefetch leaves no ready mark, so the fixture builds and reports."""
    try:
        (shared_root / "fresh-venv.started").open("x").close()
    except FileExistsError:
        return None
    log = (shared_root / "fresh-venv.log").open("wb")
    with log:
        return subprocess.Popen(
            [sys.executable, __file__, str(shared_root)], stdout=log, stderr=subprocess.STDOUT
        )


if __name__ == "__main__":
    root = Path(sys.argv[1])
    shared_fresh(root, root / "prefetch-scratch")
