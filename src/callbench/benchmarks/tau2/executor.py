"""Executor ``tau2``: a fresh τ² environment per case and trial, answering calls as τ² does.

The agent's calls and the user's calls on its own tools (the telecom domain's phone) go to the same
environment through ``Environment.get_response``, as τ²'s orchestrator sends them: a tool's refusal
is its ``Error: ...`` text, heard by the caller. Schema-invalid calls whose arguments parsed are
passed on too (``sees_invalid_calls``): τ² executes whatever the agent sends, and the reward replays
exactly that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from callbench.benchmarks.tau2.data import environments, final_state, response_text, tool_contracts
from callbench.plugin import Case, ConfigError, Executor, ExecutorSession, Suite, ToolContract, ToolOutcome

ERROR_PREFIX = "Error: "


class Tau2Session(ExecutorSession):
    """One conversation's environment."""

    sees_invalid_calls: ClassVar[bool] = True

    def __init__(self, env: Any, task: Any = None) -> None:
        self.env = env
        self.task = task
        self.count = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        return self._respond(name, arguments, "assistant")

    def user_tools(self) -> list[ToolContract]:
        return tool_contracts(self.env.user_tools)

    async def call_user_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        return self._respond(name, arguments, "user")

    def _respond(self, name: str, arguments: dict[str, Any], requestor: str) -> ToolOutcome:
        self.count += 1
        text, error = response_text(self.env, name, arguments, requestor, f"c{self.count}")
        if error:
            return ToolOutcome(ok=False, error=text.removeprefix(ERROR_PREFIX), content=text)
        return ToolOutcome(ok=True, result=text, content=text)

    def snapshot(self) -> dict[str, Any] | None:
        """The environment's end state as τ²'s reward reads it: the database hashes and the task's
        assertions (the scorer then need not replay the conversation; a trace without it is replayed)."""
        return {"tau2": final_state(self.env, self.task)}


class Tau2Executor(Executor):
    """Makes each case's session from its task (``executor_config``: ``domain``, ``task_id``)."""

    name = "tau2"

    def __init__(self, domain: str | None = None, tasks: dict[str, Any] | None = None) -> None:
        self.domain = domain
        self.tasks = dict(tasks or {})

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        config = case.executor_config
        domain = str(config.get("domain") or self.domain or "")
        task = self._task(case, suite, domain)
        return Tau2Session(environments(domain).for_task(task), task)

    def _task(self, case: Case, suite: Suite, domain: str) -> Any:
        task_id = str(case.executor_config.get("task_id", case.id))
        tasks = self.tasks or suite.metadata.get("tau2_tasks") or {}
        if task_id not in tasks:
            raise ConfigError(f"{case.key}: no τ² task {task_id!r} in domain {domain!r}")
        return tasks[task_id]
