"""τ² results files from callbench conversations: the JSON ``tau2 run`` saves (``info``, ``tasks``,
``simulations``), which τ²'s own tools read and view, and its evaluator re-scores.

Each simulation is one (case, trial) record: its messages in τ²'s shapes
(:mod:`callbench.benchmarks.tau2.trajectory`), its termination reason, and the reward callbench gave
it. Error records have no finished conversation and are left out (τ² writes none for them either);
the export says how many.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from callbench.benchmarks.tau2 import trajectory as tj
from callbench.benchmarks.tau2.data import task_digest
from callbench.plugin import Case, CaseRecord

MAX_STEPS = 200
MAX_ERRORS = 10


def simulation(case: Case, record: CaseRecord) -> dict[str, Any]:
    """One record as a τ² ``SimulationRun`` dict."""
    trace = record.trace
    start = datetime.fromtimestamp(record.started_at or 0.0, UTC)
    end = datetime.fromtimestamp((record.started_at or 0.0) + record.duration_ms / 1000, UTC)
    verdict = record.verdicts.get("tau2-reward")
    out: dict[str, Any] = {
        "id": f"{record.key}#{record.trial}",
        "task_id": case.id,
        "start_time": start.isoformat(),
        "end_time": end.isoformat(),
        "duration": record.duration_ms / 1000,
        "termination_reason": tj.termination_reason(trace),
        "messages": [
            {k: v for k, v in m.items() if v is not None or k == "content"} for m in tj.messages(case, trace)
        ],
        "trial": record.trial - 1,
        "seed": record.simulator.seed if record.simulator is not None else None,
    }
    if verdict is not None:
        out["reward_info"] = {
            "reward": verdict.details.get("reward", 0.0),
            "info": {"scorer": "callbench tau2-reward"},
        }
    return out


def results(
    domain: str,
    policy: str,
    tasks: dict[str, Any],
    cases: dict[str, Case],
    records: Iterable[CaseRecord],
    agent: str,
) -> tuple[dict[str, Any], int]:
    """A τ² ``Results`` dict for one domain's records, and how many error records were left out."""
    simulations, skipped, trials, user = [], 0, 1, None
    for record in records:
        if record.status == "error" or record.case_id not in cases:
            skipped += 1
            continue
        simulations.append(simulation(cases[record.case_id], record))
        trials = max(trials, record.trial)
        user = user or record.simulator
    used = sorted({s["task_id"] for s in simulations})
    info = {
        "git_commit": "",
        "num_trials": trials,
        "max_steps": MAX_STEPS,
        "max_errors": MAX_ERRORS,
        "user_info": {
            "implementation": "callbench_" + (user.kind if user is not None else "scripted"),
            "llm": user.model if user is not None else None,
            "llm_args": {"temperature": user.temperature}
            if user is not None and user.temperature is not None
            else None,
        },
        "agent_info": {"implementation": "callbench", "llm": agent, "llm_args": None},
        "environment_info": {"domain_name": domain, "policy": policy, "tool_defs": None},
        "seed": user.seed if user is not None else None,
    }
    out = {
        "timestamp": datetime.now(UTC).isoformat(),
        "info": info,
        "tasks": [task_digest(tasks[task_id]) for task_id in used],
        "simulations": simulations,
    }
    return out, skipped
