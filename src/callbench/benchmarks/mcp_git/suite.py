"""The ``mcp-git`` suite: 24 cases over the 12 tools of ``mcp-server-git``.

The contracts come from the server's own listing, bundled in ``tools.json`` (so loading the suite
starts no process; a test checks the bundle still equals the installed server's listing) and made
strict by :func:`callbench.tools.mcp_source.contracts_from_tools`, exactly as ``--tools mcp:...`` does.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

from callbench.benchmarks.mcp_git.executor import GitMcpExecutor
from callbench.mcp.client import McpTool
from callbench.plugin import DEFAULT_TIERS, ConfigError, Suite, SuiteOptions, ToolRegistry, read_cases
from callbench.tools.mcp_source import contracts_from_tools

HERE = Path(__file__).parent
SCORERS = [*DEFAULT_TIERS, "state-match"]
"""The three strict tiers plus the diagnostic state check (it reads the Git state)."""
SERVER_NAME = "stdio:python -m mcp_server_git"
SYSTEM_PROMPT = (
    "You are a software assistant with tools that read and change a Git repository. The repository is "
    'at /repo: pass repo_path "/repo" to every tool. Use only the supplied tools and call them instead '
    "of describing calls. Ground every argument in the user request or in earlier tool results. When "
    "the request is complete, reply with a short final answer."
)


def bundled_tools() -> list[McpTool]:
    """The server's tool listing as bundled with the suite."""
    raw = json.loads((HERE / "tools.json").read_text(encoding="utf-8"))
    return [
        McpTool(
            name=item["name"],
            description=item["description"],
            input_schema=item["inputSchema"],
            annotations=item.get("annotations", {}),
        )
        for item in raw
    ]


def load_registry() -> tuple[ToolRegistry, list[str]]:
    """The strict contracts of the bundled listing, and the notes on what was made strict."""
    return contracts_from_tools(SERVER_NAME, bundled_tools())


def require_server_and_git() -> None:
    """One line before any case runs when the server package or the git program is missing."""
    if importlib.util.find_spec("mcp_server_git") is None:
        raise ConfigError(
            "suite 'mcp-git' needs the package 'mcp-server-git': pip install 'callbench[mcp-git]'"
        )
    if shutil.which("git") is None:
        raise ConfigError("suite 'mcp-git' needs the 'git' program on PATH")


def load_suite(spec: str, options: SuiteOptions) -> Suite:
    """Catalog loader of ``mcp-git`` (takes no options)."""
    if spec:
        raise ConfigError(f"suite 'mcp-git' takes no options (got {spec!r})")
    require_server_and_git()
    registry, notes = load_registry()
    return Suite(
        name="mcp-git",
        cases=read_cases(HERE / "cases.yaml"),
        registry=registry,
        executor=GitMcpExecutor(),
        scorers=list(SCORERS),
        system_prompt=SYSTEM_PROMPT,
        description="Git tasks on a live mcp-server-git over stdio, one fresh repository per case.",
        source="callbench:mcp-git",
        metadata={"schema_notes": notes, "server": SERVER_NAME},
    )
