"""Run-level figures of ``tau2-reward``: pass^k as τ² reports it, the denominators stated, and the
simulator-fault table.

* **pass^k** (k = 1 … trials): over tasks, the mean of C(c, k) / C(n, k), where a task ran ``n``
  trials and ``c`` of them reached reward 1 (τ²'s estimator). Computed over the tasks whose every
  trial was scored by the agent (error records and simulator faults leave a task's trials short; such
  tasks are listed, never silently dropped).
* **Denominators**: the mean reward with error records excluded (τ²'s convention) and with them
  counted as failures, side by side; context overflows are scored failures and counted apart.
* **Simulator faults**: how many failed conversations the audit charged to the user, per rule, and
  the mean reward with those conversations counted as failures and excluded.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from math import comb
from typing import Any

from callbench.plugin import Aggregate, Table

NAME = "tau2-reward"
SAME_ANSWER_MIN = 5
"""A judge that charges the user in every one of at least this many conversations is flagged."""


def _field(record: Any, name: str, default: Any = None) -> Any:
    return record.get(name, default) if isinstance(record, Mapping) else getattr(record, name, default)


def _verdict(record: Any) -> dict[str, Any] | None:
    verdict = (_field(record, "verdicts") or {}).get(NAME)
    if verdict is None or isinstance(verdict, Mapping):
        return None if verdict is None else dict(verdict)
    return dict(verdict.model_dump(mode="json"))


def pass_hat_k(successes: Iterable[tuple[int, int]], k: int) -> float | None:
    """τ²'s pass^k over tasks given as (trials, successes); tasks with fewer than k trials are left out."""
    values = [comb(c, k) / comb(n, k) for n, c in successes if n >= k]
    return sum(values) / len(values) if values else None


def reward_figures(records: Iterable[Any]) -> Aggregate:
    """The figures and tables of one run's ``tau2-reward`` verdicts."""
    per_task: dict[str, list[float]] = defaultdict(list)
    short: set[str] = set()
    errors, overflows, faulted, scored = 0, 0, 0, 0
    rules: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    rewards_with_faults: list[float] = []
    for record in records:
        task = str(_field(record, "key", ""))
        if _field(record, "status") == "error":
            errors += 1
            short.add(task)
            continue
        verdict = _verdict(record)
        if verdict is None:
            continue
        reward = float((verdict.get("metrics") or {}).get("reward", 1.0 if verdict.get("passed") else 0.0))
        judged.update(_judge_outcome(verdict))
        faults = [
            str(r.get("message", ""))
            for r in verdict.get("reasons") or []
            if r.get("code") == "simulator_error"
        ]
        if faults:
            faulted += 1
            short.add(task)
            rewards_with_faults.append(0.0)
            rules.update(message.split(":", 1)[0] for message in faults)
            continue
        scored += 1
        per_task[task].append(reward)
        rewards_with_faults.append(reward)
        trace = _field(record, "trace")
        if trace is not None and _field(trace, "stop_reason") == "context_overflow":
            overflows += 1
    rewards = [r for values in per_task.values() for r in values]
    mean = sum(rewards) / len(rewards) if rewards else None
    counted = (sum(rewards) / (len(rewards) + errors)) if rewards or errors else None
    complete = [(len(v), sum(r == 1.0 for r in v)) for task, v in per_task.items() if task not in short]
    max_trials = max((n for n, _ in complete), default=0)
    pass_k = {str(k): pass_hat_k(complete, k) for k in range(1, max_trials + 1)}
    figures = {
        "mean_reward_errors_excluded": mean,
        "mean_reward_errors_as_failures": counted,
        "n_scored": scored,
        "n_error_records": errors,
        "n_context_overflow": overflows,
        "n_simulator_faults": faulted,
        "simulator_fault_rules": dict(rules),
        "simulator_fault_rate": faulted / (faulted + scored) if faulted + scored else None,
        "mean_reward_simulator_faults_as_failures": (
            sum(rewards_with_faults) / len(rewards_with_faults) if rewards_with_faults else None
        ),
        "pass_hat_k": pass_k,
        "tasks_short_of_trials": sorted(short),
        "audit_judge": dict(judged),
    }
    return Aggregate(figures, [_table(figures)])


JUDGE_OUTCOMES = {1.0: ["asked", "found"], 0.0: ["asked", "clean"], -1.0: ["asked", "unparsable"]}


def _judge_outcome(verdict: dict[str, Any]) -> list[str]:
    """How the audit judge answered for one verdict (its ``audit_judge`` metric): ``asked`` plus
    ``found``, ``clean`` or ``unparsable``, or ``not_asked`` (offline re-scoring without its cached
    finding); nothing when it was not needed."""
    value = (verdict.get("metrics") or {}).get("audit_judge")
    if value is None:
        return []
    return JUDGE_OUTCOMES.get(float(value), ["not_asked"])


def _judge_note(counts: Mapping[str, int]) -> str | None:
    """One line on the audit judge, or ``None`` when it was never needed. A judge that never answered
    as asked is said so first: its findings are missing, not clean."""
    if not counts:
        return None
    asked, unparsable = counts.get("asked", 0), counts.get("unparsable", 0)
    line = (
        f"audit judge: asked about {asked} failed conversation(s), found simulator faults in "
        f"{counts.get('found', 0)}, unparsable replies {unparsable}"
    )
    if counts.get("not_asked"):
        line += f", not asked (offline re-scoring, no cached finding) {counts['not_asked']}"
    if asked and unparsable == asked:
        line = "WARNING: the audit judge never answered as asked; " + line
    elif asked >= SAME_ANSWER_MIN and counts.get("found", 0) == asked:
        line = (
            "WARNING: the audit judge found a fault in every conversation (check it before trusting it); "
            + line
        )
    return line


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _table(figures: dict[str, Any]) -> Table:
    rows = [
        [
            "mean reward, error records excluded (τ²'s convention)",
            _pct(figures["mean_reward_errors_excluded"]),
        ],
        ["mean reward, error records counted as failures", _pct(figures["mean_reward_errors_as_failures"])],
        [
            "mean reward, simulator faults counted as failures",
            _pct(figures["mean_reward_simulator_faults_as_failures"]),
        ],
    ]
    rows += [[f"pass^{k}", _pct(v)] for k, v in figures["pass_hat_k"].items()]
    notes = [
        f"{figures['n_scored']} conversations scored; {figures['n_error_records']} error records "
        f"(infrastructure, re-run by --resume); {figures['n_context_overflow']} context overflows "
        "(scored failures)",
        f"simulator faults: {figures['n_simulator_faults']} "
        f"(rate {_pct(figures['simulator_fault_rate'])}%), excluded from the agent's figures"
        + (
            " — " + ", ".join(f"{rule} {n}" for rule, n in sorted(figures["simulator_fault_rules"].items()))
            if figures["simulator_fault_rules"]
            else ""
        ),
    ]
    judge_line = _judge_note(figures["audit_judge"])
    if judge_line:
        notes.append(judge_line)
    if figures["tasks_short_of_trials"]:
        notes.append(f"pass^k leaves out {len(figures['tasks_short_of_trials'])} task(s) short of trials")
    return Table(title="τ² reward", columns=["figure", "%"], rows=rows, align=["left", "right"], notes=notes)
