"""The ``mcp-git`` executor: the core ``mcp`` executor plus a fresh repository per case.

The server runs once per run (isolation ``run``: :mod:`callbench.executors.mcp`) with the fixed Git
environment of :mod:`.repo`; the cases are kept apart by their arguments. Models and expected calls
name the repository ``/repo``; a session maps that logical path (and paths under it) to its case's own
copy, and maps the real path back in the replies, so the gold arguments are the same for every case
and the model never sees a temporary folder. Any other ``repo_path`` is refused without reaching the
server: a model must not read or change repositories outside its case.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from callbench.benchmarks.mcp_git.repo import GIT_ENV, LOGICAL_ROOT, git_state, make_repository
from callbench.executors.mcp import McpExecutor, McpSession
from callbench.mcp.client import McpServerSpec
from callbench.plugin import Case, ExecutorSession, Suite, ToolOutcome, freeze, tool_server_replayed

SERVER_COMMAND = (sys.executable, "-m", "mcp_server_git")


def server_spec() -> McpServerSpec:
    """``python -m mcp_server_git`` over stdio, with the fixed Git environment."""
    spec = McpServerSpec(kind="stdio", text="stdio:python -m mcp_server_git", command=SERVER_COMMAND)
    return spec.with_env(GIT_ENV)


class GitMcpExecutor(McpExecutor):
    """Forwards calls to ``mcp-server-git``; every case works on its own copy of the known repository."""

    name = "mcp-git"
    declared_isolation = "run"
    declared_isolation_why = (
        "every case works on a repository of its own (its repo_path), so one server serves them all"
    )

    def __init__(self, spec: McpServerSpec | None = None) -> None:
        super().__init__(spec or server_spec())

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        if tool_server_replayed():  # --replay: no server reads it; the cassette holds its states
            return GitMcpSession(self, workdir / "repo")
        return GitMcpSession(self, make_repository(workdir / "repo"))


class GitMcpSession(McpSession):
    """One case: its repository, the logical-path mapping and the Git state as the snapshot."""

    def __init__(self, executor: McpExecutor, repository: Path) -> None:
        super().__init__(executor)
        self.repository = repository

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        path = arguments.get("repo_path")
        if isinstance(path, str) and self._real(path) is None:
            return ToolOutcome.failure(
                f"Repository path {path!r} is not available: the repository is {LOGICAL_ROOT}"
            )
        return await super().call(name, arguments)

    def _real(self, path: str) -> str | None:
        logical = path.rstrip("/") or "/"
        if logical == LOGICAL_ROOT:
            return str(self.repository)
        if logical.startswith(LOGICAL_ROOT + "/") and ".." not in logical.split("/"):
            return str(self.repository) + logical[len(LOGICAL_ROOT) :]
        return None

    def map_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        path = arguments.get("repo_path")
        if not isinstance(path, str):
            return arguments
        return {**arguments, "repo_path": self._real(path)}

    def map_text(self, text: str) -> str:
        return text.replace(str(self.repository), LOGICAL_ROOT)

    def snapshot(self) -> dict[str, Any] | None:
        if not (self.repository / ".git").exists():
            return None
        return freeze(git_state(self.repository))
