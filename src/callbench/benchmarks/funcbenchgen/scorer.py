"""The ``dag`` scorer: success, efficiency and failure classes of FuncBenchGen-style episodes.

* **Success** (``strict``, default): the episode ended with an answer, the target function was
  executed with correct inputs, and the answer states the target value unambiguously. The
  official ``lenient`` rule (any standalone number equal to the value, and at least ``n_core``
  calls) is selectable per suite (``scoring=lenient``) and recorded in every verdict. Both rules
  are judged on every answer (``metrics.strict_success`` / ``metrics.lenient_success``), so the
  aggregate reports the lenient rate beside the strict one whichever rule decides.
* **Efficiency** = ``n_core / calls`` on successes (every call counts, invalid ones included).
* Per call: node kind and failure class (recovered by replaying the episode through a fresh
  runtime, so stored runs re-score offline), the first failure, and calls spent on distractors.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.funcbenchgen.answer import lenient_match, strict_match
from callbench.benchmarks.funcbenchgen.executor import new_runtime, task_of
from callbench.benchmarks.funcbenchgen.runtime import FAILURE_CLASSES, DagRuntime
from callbench.plugin import (
    Aggregate,
    Align,
    Interval,
    Reason,
    Scorer,
    Table,
    Verdict,
    accuracy_interval,
    paired_comparison,
)

if TYPE_CHECKING:
    from callbench.plugin import Case, Trace, TraceCall

NAME = "dag"
RULES = ("strict", "lenient")
"""Success rules: callbench's strict one (default) and the official lenient one."""


def classify_calls(case: Case, trace: Trace) -> tuple[list[dict[str, Any]], DagRuntime]:
    """Node kind and failure class of every call, replaying executed calls in order."""
    runtime = new_runtime(case)
    rows = []
    for call in trace.calls:
        node = runtime.nodes.get(call.tool)
        row: dict[str, Any] = {
            "index": call.index,
            "round": call.round,
            "tool": call.tool,
            "node_kind": node.kind if node else None,
            "failure": None,
            "cause": None,
        }
        if call.execution in ("ok", "error"):
            res = runtime.call(call.tool, call.arguments)
            row.update(failure=res.failure, cause=res.cause, correct=res.ok)
            recorded = call.annotations.get("failure", res.failure)
            if recorded != res.failure:
                row["annotation_mismatch"] = recorded
        elif call.execution == "rejected":
            row["failure"] = _static_class(runtime, call)
        else:
            row["failure"] = "not_executed"
        rows.append(row)
    return rows, runtime


def _static_class(runtime: DagRuntime, call: TraceCall) -> str:
    """Class of a call the harness rejected before execution (unknown tool, bad JSON, schema)."""
    node = runtime.nodes.get(call.tool)
    if node is None:
        return "unknown_function"
    args = call.arguments
    if not isinstance(args, dict):
        return "invalid_arguments"
    if set(args) != set(node.inputs):
        return "wrong_arg_count"
    if any(runtime.types[a] not in runtime.known for a in args):
        return "not_yet_known"
    return "incorrect_value"


class DagScorer(Scorer):
    """Scorer ``dag`` (see the module docstring). ``rule`` overrides the suite's choice."""

    name = NAME

    def __init__(self, suite: Any = None, rule: str | None = None) -> None:
        self.rule = rule

    def score(self, case: Case, trace: Trace) -> Verdict:
        task = task_of(case)
        cfg = case.executor_config
        rule = self.rule or cfg.get("scoring", "strict")
        rows, _ = classify_calls(case, trace)
        n_core, calls = task.params.n_core, len(trace.calls)
        answered = trace.stop_reason == "answer"
        target_done = any(r["tool"] == task.target_node and r.get("correct") for r in rows)
        # Both rules are judged on every answer: the suite's rule decides, the other is reported beside it.
        judged = {
            r: self._judge(
                r, task.target_variable, task.target_value, trace, answered, target_done, calls, n_core
            )
            for r in RULES
        }
        passed, reasons = judged[rule]
        failures = [r for r in rows if r["failure"] in FAILURE_CLASSES]
        first = failures[0] if failures else None
        kinds = Counter(r["node_kind"] for r in rows)
        core_done = {r["tool"] for r in rows if r.get("correct") and r["node_kind"] == "core"}
        details = {
            "rule": rule,
            "cap": cfg.get("cap", "fixed"),
            "mode": cfg.get("mode", "silent"),
            "restate": bool(cfg.get("restate", False)),
            "setting": task.params.setting,
            "task_id": task.id,
            "n_core": n_core,
            "calls": calls,
            "answered": answered,
            "outcome": "success" if passed else ("timeout" if not answered else "incorrect"),
            "target_value": task.target_value,
            "target_computed": target_done,
            "failure_counts": dict(Counter(r["failure"] for r in failures)),
            "poisoned": sum(1 for r in failures if r["cause"] == "poisoned"),
            "first_failure": first and {k: first[k] for k in ("index", "round", "tool", "failure", "cause")},
            "distractor_calls": {"conn": kinds.get("conn", 0), "dis": kinds.get("dis", 0)},
            "core_computed": len(core_done),
            "per_call": rows,
            "strict_success": judged["strict"][0],
            "lenient_success": judged["lenient"][0],
        }
        metrics = _metrics(calls, kinds, failures, bool(cfg.get("restate", False)), rule)
        metrics.update({f"{r}_success": float(judged[r][0]) for r in RULES})
        if passed:
            metrics["efficiency"] = n_core / calls
        partial = len(core_done) / n_core if passed else min(len(core_done) / n_core, 0.99)
        return Verdict(
            scorer=NAME,
            passed=passed,
            partial=partial,
            reasons=reasons,
            details=details,
            metrics=metrics,
            rationale=_rationale(passed, reasons, rule, calls, n_core),
        )

    @staticmethod
    def _judge(
        rule: str,
        target: str,
        value: int,
        trace: Trace,
        answered: bool,
        target_done: bool,
        calls: int,
        n_core: int,
    ) -> tuple[bool, list[Reason]]:
        if not answered:
            return False, [
                Reason(code="timeout", message=f"no final answer (stopped by {trace.stop_reason})")
            ]
        text = trace.final_text or ""
        if rule == "lenient":
            reasons = []
            if not lenient_match(text, value):
                reasons.append(Reason(code="answer_mismatch", message=f"the answer does not contain {value}"))
            if calls < n_core:
                reasons.append(Reason(code="too_few_calls", message=f"{calls} calls < n_core={n_core}"))
            return not reasons, reasons
        reasons = []
        if not target_done:
            reasons.append(
                Reason(code="target_not_computed", message="the target function never ran correctly")
            )
        ok, why = strict_match(text, target, value)
        if not ok:
            reasons.append(Reason(code="answer_mismatch", message=why))
        return not reasons, reasons

    def aggregate(self, records: Iterable[Any]) -> Aggregate:
        """Success rate per setting and arm with 95% intervals, and the restatement effect."""
        return Aggregate.from_dict(aggregate(records))


def _metrics(
    calls: int, kinds: Counter[Any], failures: list[dict[str, Any]], restate: bool, rule: str
) -> dict[str, float]:
    """Per-case numbers; they survive the slimmed records summaries read, unlike ``details``."""
    out = {
        "calls": float(calls),
        "distractor_calls": float(kinds.get("conn", 0) + kinds.get("dis", 0)),
        "conn_calls": float(kinds.get("conn", 0)),
        "dis_calls": float(kinds.get("dis", 0)),
        "restate": float(restate),
        "lenient_rule": float(rule == "lenient"),
    }
    for cls, count in Counter(r["failure"] for r in failures).items():
        out[f"failures.{cls}"] = float(count)
    if failures:
        out[f"first_failure.{failures[0]['failure']}"] = 1.0
    return out


def _rationale(passed: bool, reasons: list[Reason], rule: str, calls: int, n_core: int) -> str:
    if passed:
        return f"pass ({rule}): target value stated; efficiency {n_core}/{calls} = {n_core / calls:.2f}"
    return f"fail ({rule}): " + "; ".join(r.message for r in reasons)


@dataclass(frozen=True)
class Outcome:
    """What the aggregate needs from one record (full or slimmed, dict or ``CaseRecord``)."""

    setting: str
    arm: str
    task: str
    trial: int
    passed: bool
    metrics: dict[str, float]


def _field(record: Any, name: str, default: Any = None) -> Any:
    return record.get(name, default) if isinstance(record, Mapping) else getattr(record, name, default)


def outcome_of(record: Any) -> Outcome | None:
    """The record's ``dag`` outcome, or None when it has no ``dag`` verdict (e.g. an error record)."""
    verdict = (_field(record, "verdicts") or {}).get(NAME)
    if verdict is None:
        return None
    if not isinstance(verdict, Mapping):
        verdict = verdict.model_dump(mode="json")
    metrics = dict(verdict.get("metrics") or {})
    task = str(_field(record, "case_id", "") or "").removesuffix("-restate")
    return Outcome(
        setting=_setting(record, task),
        arm="restate" if metrics.get("restate") else "plain",
        task=task,
        trial=int(_field(record, "trial", 1) or 1),
        passed=bool(verdict.get("passed")),
        metrics=metrics,
    )


def _setting(record: Any, task: str) -> str:
    # Templates are "<setting>-s<seed>" and task ids "<setting>-s<seed>-t<trial>" (suites/dag.py).
    template = _field(record, "template") or task
    return str(template).rsplit("-s", 1)[0] or "?"


def aggregate(records: Iterable[Any]) -> dict[str, Any]:
    """Per (setting, arm): n, successes, Wilson CI, efficiency, failure classes; plus restatement.

    Reads only what slimmed records keep (case id, template, trial, pass flag, metrics). Error
    records (no ``dag`` verdict) are counted per setting, never scored.
    """
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    errors: Counter[str] = Counter()
    for rec in records:
        out = outcome_of(rec)
        if out is None:
            if _field(rec, "status") == "error":
                errors[_setting(rec, str(_field(rec, "case_id", "")))] += 1
            continue
        groups[(out.setting, out.arm)].append(out)
    rows = [_row(setting, arm, outs) for (setting, arm), outs in sorted(groups.items())]
    summary: dict[str, Any] = {"rows": rows, "restatement": _restatement(groups), "errors": dict(errors)}
    summary["tables"] = [dag_table(summary)]  # shown by the CLI and reports under the run summary
    return summary


def _row(setting: str, arm: str, outs: list[Outcome]) -> dict[str, Any]:
    wins = [o for o in outs if o.passed]
    effs = [o.metrics["efficiency"] for o in wins if "efficiency" in o.metrics]
    failures: Counter[str] = Counter()
    firsts: Counter[str] = Counter()
    for out in outs:
        for key, value in out.metrics.items():
            if key.startswith("failures."):
                failures[key.removeprefix("failures.")] += int(value)
            elif key.startswith("first_failure."):
                firsts[key.removeprefix("first_failure.")] += 1
    ci = _interval(outs)
    return {
        "setting": setting,
        "arm": arm,
        "n": len(outs),
        "successes": len(wins),
        "success_rate": ci.estimate,
        "ci_low": ci.low,
        "ci_high": ci.high,
        "ci_method": ci.method,
        "efficiency": sum(effs) / len(effs) if effs else None,
        "mean_calls": sum(o.metrics.get("calls", 0.0) for o in outs) / max(len(outs), 1),
        "rule": "lenient" if outs and outs[0].metrics.get("lenient_rule") else "strict",
        "strict_rate": _rate(outs, "strict_success"),
        "lenient_rate": _rate(outs, "lenient_success"),
        "failure_counts": dict(failures),
        "first_failures": dict(firsts),
    }


def _rate(outs: list[Outcome], metric: str) -> float | None:
    """Share of ``outs`` passing under one rule; None when a record predates the metric."""
    values = [o.metrics.get(metric) for o in outs]
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


def _interval(outs: list[Outcome]) -> Interval:
    """The report's accuracy interval with the task as cluster: Wilson when every task appears
    once, else a task-clustered bootstrap (widened with few tasks, Wilson over tasks at 0%/100%)."""
    records = [
        {"verdicts": {NAME: {"passed": o.passed}}, "template": o.task, "key": f"{o.task}#{o.trial}"}
        for o in outs
    ]
    return accuracy_interval(records, NAME)


def _restatement(groups: dict[tuple[str, str], list[Outcome]]) -> dict[str, Any] | None:
    """Paired restate-minus-plain difference over tasks run in both arms (None if one arm ran)."""
    pairs: dict[tuple[str, int], dict[str, bool]] = defaultdict(dict)
    for (_, arm), outs in groups.items():
        for out in outs:
            pairs[(out.task, out.trial)][arm] = out.passed
    both = sorted(k for k, v in pairs.items() if len(v) == 2)
    if not both:
        return None
    # Trials of one task are not independent: cluster the bootstrap by task.
    cmp = paired_comparison(
        [pairs[k]["restate"] for k in both], [pairs[k]["plain"] for k in both], [task for task, _ in both]
    )
    return {
        "n_pairs": len(both),
        **cmp.as_dict(),
        "note": "accuracy_a = with restatement, accuracy_b = without; difference = a - b",
    }


DAG_COLUMNS = ["setting", "arm", "n", "success", "95% CI", "strict", "lenient", "eff", "calls"]


def dag_table(summary: Mapping[str, Any]) -> Table:
    """The per-(setting, arm) table of :func:`aggregate` output, with the rule and effect notes.

    ``success`` (with its interval) follows each suite's rule; ``strict`` and ``lenient`` are both
    rules applied to the same answers, so a reader sees how much the official lenient match adds.
    """
    rows = []
    for row in summary["rows"]:
        eff = f"{row['efficiency']:.2f}" if row["efficiency"] is not None else "-"
        rows.append(
            [
                row["setting"],
                row["arm"],
                str(row["n"]),
                f"{row['success_rate']:.2f}",
                f"[{row['ci_low']:.2f},{row['ci_high']:.2f}]",
                _pct(row.get("strict_rate")),
                _pct(row.get("lenient_rate")),
                eff,
                f"{row['mean_calls']:.1f}",
            ]
        )
    notes = []
    rules = sorted({row["rule"] for row in summary["rows"]})
    if rules:
        notes.append(
            f"success follows the {'/'.join(rules)} rule; strict = explicit answer, target "
            "computed; lenient = official rule: any number equals the value, >= n_core calls"
        )
    effect: Mapping[str, Any] | None = summary.get("restatement")
    if effect:
        d = effect["difference"]
        notes.append(
            f"restatement effect over {effect['n_pairs']} paired tasks: {d['estimate']:+.3f} "
            f"[{d['low']:+.3f}, {d['high']:+.3f}] (McNemar p={effect['mcnemar_p']:.3g})"
        )
    right: list[Align] = ["right"] * (len(DAG_COLUMNS) - 2)
    align: list[Align] = ["left", "left", *right]  # setting and arm, then figures
    return Table(columns=DAG_COLUMNS, rows=rows, align=align, notes=notes)


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.2f}"
