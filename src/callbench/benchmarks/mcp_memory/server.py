"""The reference memory server: the pinned npm package, where it is found, how it is started and seeded.

The server is ``@modelcontextprotocol/server-memory`` at exactly :data:`VERSION`, run with ``node``
from an npm prefix (``npm install --prefix PREFIX``): ``$CALLBENCH_NPM_PREFIX`` when set, else
``~/.cache/callbench/npm``; a global install is found with ``CALLBENCH_NPM_PREFIX=$(npm prefix -g)``.
Nothing is looked up until a live server is needed (:func:`find_server`), so a ``--replay`` of the
suite needs neither Node.js nor the package.

Each server keeps its graph in ``{workdir}/memory.jsonl`` (``MEMORY_FILE_PATH``), its own fresh folder
under ``case`` isolation; the reset hook copies the seed graph there before the case's first call (the
server reads its file on every call, so a file written after it started is the one it serves).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

from callbench.mcp.client import McpServerSpec
from callbench.mcp.isolation import ResetHook
from callbench.plugin import ConfigError

PACKAGE = "@modelcontextprotocol/server-memory"
VERSION = "2026.8.31"
"""The pinned release: the bundled listing (``tools.json``), the cases and the shipped cassettes are
this version's."""
SCRIPT = "dist/index.js"
"""The package's ``mcp-server-memory`` program."""
PREFIX_ENV = "CALLBENCH_NPM_PREFIX"
DEFAULT_PREFIX = "~/.cache/callbench/npm"
SUITE = "mcp-memory"
GRAPH_FILE = "memory.jsonl"
SEED = Path(__file__).with_name("seed.jsonl")
SERVER_TEXT = f"stdio:MEMORY_FILE_PATH={{workdir}}/{GRAPH_FILE} npx -y {PACKAGE}@{VERSION}"
"""How the server is named in ``run.json``, manifests and cassettes: the portable form of the command
(``npx`` starts the same program of the same release); callbench runs the installed script with
``node`` instead, so that no start waits for the registry."""
SEED_RESET = ResetHook(command=f'cp -- {shlex.quote(str(SEED))} "{{workdir}}/{GRAPH_FILE}"')
"""Before a case's first call: the seed graph, copied into its server's folder."""


def prefixes() -> list[Path]:
    """The npm prefixes searched, in order."""
    chosen = os.environ.get(PREFIX_ENV)
    return [Path(chosen).expanduser()] if chosen else [Path(DEFAULT_PREFIX).expanduser()]


def install_line() -> str:
    chosen = os.environ.get(PREFIX_ENV)
    prefix = shlex.quote(chosen) if chosen else DEFAULT_PREFIX
    return f"npm install --prefix {prefix} {PACKAGE}@{VERSION}"


def find_server() -> tuple[str, Path]:
    """``node`` and the pinned package's script; one line saying how to install what is missing."""
    node = shutil.which("node")
    if node is None:
        raise ConfigError(
            f"suite '{SUITE}' needs Node.js (20 or later) with 'node' on PATH for {PACKAGE}: install it "
            "from https://nodejs.org or your system's packages (apt-get install nodejs npm)"
        )
    other: tuple[Path, str] | None = None
    for prefix in prefixes():
        for modules in (prefix / "node_modules", prefix / "lib" / "node_modules"):  # local, global (-g)
            folder = modules / PACKAGE
            try:
                version = str(json.loads((folder / "package.json").read_text(encoding="utf-8"))["version"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if version == VERSION and (folder / SCRIPT).is_file():
                return node, folder / SCRIPT
            other = other or (folder, version)
    if other is not None:
        raise ConfigError(
            f"suite '{SUITE}' is pinned to {PACKAGE}@{VERSION} but {other[0]} holds {other[1]}: "
            f"{install_line()}"
        )
    line = f"suite '{SUITE}' needs the npm package '{PACKAGE}@{VERSION}': {install_line()}"
    if not os.environ.get(PREFIX_ENV):
        line += f" (or set {PREFIX_ENV} to the npm prefix it is installed under)"
    raise ConfigError(line)


def server_spec(node: str, script: Path) -> McpServerSpec:
    """The server as started: ``node SCRIPT`` with its graph in ``{workdir}``."""
    return McpServerSpec(
        kind="stdio",
        text=SERVER_TEXT,
        command=(node, str(script)),
        env=(("MEMORY_FILE_PATH", f"{{workdir}}/{GRAPH_FILE}"),),
    )


def placeholder_spec() -> McpServerSpec:
    """The spec before the package is looked for (a replay never looks): the default prefix's script."""
    script = Path(DEFAULT_PREFIX).expanduser() / "node_modules" / PACKAGE / SCRIPT
    return server_spec("node", script)
