"""Write τ² results of the mock domain as τ² itself writes them: the test input of ``callbench import
tau2`` that callbench did not export.

Usage: ``<tau2 venv>/bin/python native_results.py OUT_DIR``. Writes ``OUT_DIR/results.json`` (one
file, ``Results.save``) and ``OUT_DIR/folder/`` (the results-folder form of newer τ² releases:
``results.json`` without the simulations, with a ``simulation_index``, and one
``simulations/<id>.json`` per simulation), and prints one JSON line per simulation: its id, task,
trial, termination reason and the reward τ²'s own evaluator gave it (stored in its ``reward_info``).

The conversations are written by hand with τ²'s message classes; every tool message is what the
package's mock environment answered, and the reward is ``evaluate_simulation``'s. It runs in the
reference venv (.ci/background.d/40-tau2-venv.sh): the evaluator imports litellm.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

STOP = "###STOP###"


def environment(task: Any) -> Any:
    """The mock environment in the task's initial state, as τ²'s orchestrator sets it up."""
    from tau2.domains.mock.environment import get_environment

    env = get_environment()
    state = task.initial_state
    if state is not None:
        env.set_state(
            initialization_data=state.initialization_data,
            initialization_actions=state.initialization_actions,
            message_history=state.message_history or [],
        )
    return env


class Conversation:
    """Messages of one simulation, tool messages answered by the task's environment."""

    def __init__(self, task: Any, greeting: bool = True) -> None:
        from tau2.data_model.message import AssistantMessage

        self.env = environment(task)
        self.count = 0
        history = list(task.initial_state.message_history or []) if task.initial_state else []
        opening = [AssistantMessage(role="assistant", content="Hi! How can I help you today?", cost=0.0)]
        self.messages: list[Any] = history or (opening if greeting else [])

    def user(self, text: str) -> Conversation:
        from tau2.data_model.message import UserMessage

        self.messages.append(UserMessage(role="user", content=text, cost=0.001))
        return self

    def agent(self, text: str | None = None, **call: Any) -> Conversation:
        from tau2.data_model.message import AssistantMessage, ToolCall

        calls = None
        if call:
            self.count += 1
            name = call.pop("name")
            calls = [ToolCall(id=f"call_{self.count}", name=name, arguments=call, requestor="assistant")]
        usage = {"prompt_tokens": 100 * self.count + 50, "completion_tokens": 20}
        self.messages.append(
            AssistantMessage(role="assistant", content=text, tool_calls=calls, cost=0.002, usage=usage)
        )
        for tool_call in calls or []:
            self.messages.append(self.env.get_response(tool_call))
        return self


def simulations(tasks: dict[str, Any]) -> list[tuple[Any, Any, str, int, bool]]:
    """(task, conversation, termination, trial, skipped) of every simulation written."""
    create = tasks["create_task_1"]
    history = tasks["update_task_with_message_history"]
    update = tasks["update_task_1"]
    return [
        (
            create,
            Conversation(create)
            .user("Please create a task called 'Important Meeting' for user_1.")
            .agent(name="create_task", user_id="user_1", title="Important Meeting")
            .agent("I created the task 'Important Meeting' for user_1.")
            .user(STOP),
            "user_stop",
            0,
            False,
        ),
        (
            create,
            Conversation(create)
            .user("Please create a task called 'Important Meeting' for user_1.")
            .agent(name="create_task", user_id="user_1", title="Meeting")
            .agent("Created the task 'Meeting'.")
            .user(STOP),
            "user_stop",
            1,
            False,
        ),
        (
            history,
            Conversation(history)
            .user("Please mark it as completed.")
            .agent(name="update_task_status", task_id="task_2", status="completed")
            .agent("task_2 is now completed. ###STOP###"),
            "agent_stop",
            0,
            False,
        ),
        (
            update,
            Conversation(update)
            .user("Mark task_1 as completed please.")
            .agent(name="get_users")
            .agent(name="update_task_status", task_id="task_9", status="completed"),
            "max_steps",
            0,
            False,
        ),
        (update, Conversation(update, greeting=False), "agent_error", 1, True),
    ]


def main(argv: list[str]) -> int:
    from tau2.data_model.simulation import AgentInfo, Info, Results, RewardInfo, SimulationRun, UserInfo
    from tau2.domains.mock.environment import get_environment, get_tasks
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    out = Path(argv[0])
    tasks = {task.id: task for task in get_tasks()}
    runs = []
    for index, (task, conversation, termination, trial, skipped) in enumerate(simulations(tasks)):
        run = SimulationRun(
            id=f"sim-{index}",
            task_id=task.id,
            start_time="2026-01-02T03:04:05",
            end_time="2026-01-02T03:04:15",
            duration=10.0,
            termination_reason=termination,
            messages=conversation.messages,
            trial=trial,
            seed=300 + trial,
            agent_cost=0.01,
            skipped=skipped,
        )
        if skipped:
            run.reward_info = RewardInfo(reward=0.0)
        else:
            run.reward_info = evaluate_simulation(
                run, task, EvaluationType.ALL, solo_mode=False, domain="mock"
            )
        runs.append(run)
    info = Info(
        git_commit="0000000",
        num_trials=2,
        max_steps=200,
        max_errors=10,
        user_info=UserInfo(implementation="user_simulator", llm="gpt-4.1", llm_args={"temperature": 0.0}),
        agent_info=AgentInfo(implementation="llm_agent", llm="gpt-4.1-mini", llm_args={"temperature": 0.0}),
        environment_info=get_environment().get_info(),
        seed=300,
    )
    used = sorted({run.task_id for run in runs})
    results = Results(info=info, tasks=[tasks[t] for t in used], simulations=runs)
    out.mkdir(parents=True, exist_ok=True)
    results.save(out / "results.json")
    write_folder(results, out / "folder")
    for run in runs:
        line = {"id": run.id, "task_id": run.task_id, "trial": run.trial}
        line.update(termination=run.termination_reason.value, reward=run.reward_info.reward)
        print(json.dumps(line))
    return 0


def write_folder(results: Any, folder: Path) -> None:
    """The results-folder form (τ² releases after 26.3 write it for long runs): metadata and an index
    in ``results.json``, each simulation in ``simulations/<id>.json``."""
    meta = results.model_dump(mode="json", exclude={"simulations"})
    meta["simulation_index"] = [
        {
            "id": run.id,
            "task_id": run.task_id,
            "trial": run.trial,
            "reward": run.reward_info.reward,
            "termination_reason": run.termination_reason.value,
            "agent_cost": run.agent_cost,
            "duration": run.duration,
        }
        for run in results.simulations
    ]
    (folder / "simulations").mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    for run in results.simulations:
        (folder / "simulations" / f"{run.id}.json").write_text(
            run.model_dump_json(indent=2), encoding="utf-8"
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
