"""npm MCP servers the tests drive, installed by the CI step ``.ci/background.d/30-npm-mcp.sh`` into
the test cache (``CALLBENCH_NPM_PREFIX``, which ``tests/conftest.py`` sets); a test that needs one and
finds it missing runs that step itself (CI reports no skipped tests)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NPM_SETUP = ROOT / ".ci" / "background.d" / "30-npm-mcp.sh"
MEMORY_PACKAGE = "@modelcontextprotocol/server-memory"


def npm_prefix() -> Path:
    return Path(os.environ.get("CALLBENCH_NPM_PREFIX") or Path.home() / ".cache" / "callbench-test-npm")


def memory_server(version: str) -> Path:
    """The prefix holding ``MEMORY_PACKAGE`` at ``version``, installed by the CI step when missing."""
    assert shutil.which("node"), "node is needed for the reference memory server (Node 20 or later)"
    prefix = npm_prefix()
    meta = prefix / "node_modules" / MEMORY_PACKAGE / "package.json"

    def installed() -> str | None:
        return json.loads(meta.read_text())["version"] if meta.is_file() else None

    if installed() != version:
        env = {**os.environ, "CALLBENCH_NPM_PREFIX": str(prefix)}
        subprocess.run(["bash", str(NPM_SETUP)], check=True, timeout=600, env=env)
    assert installed() == version, f"{NPM_SETUP} installed {installed()} of {MEMORY_PACKAGE}, not {version}"
    return prefix
