"""``state-match``: compare the executor state after the model's calls with the state after the gold path.

A diagnostic reported beside the strict tiers and never deciding them: a model that reaches the
right final state by another valid route (other tool, other order) is visible here even when the
call-level tiers fail it, and a model that passes the call checks but leaves extra changes behind
shows up too.

The gold state is obtained by replaying the case's expected steps, in order, in a fresh session of
the suite's executor (``$ref`` values taken from the replay's own results, call-only steps not
executed). It is cached per case. For a read-only workflow the gold state is the initial state, so
the check then says whether the model left the state untouched; ``details.gold_changes_state`` and
the run-level ``aggregate`` keep the state-changing workflows apart.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbench.executors.base import resolve_executor, run_sync
from callbench.scoring.base import Scorer
from callbench.scoring.serving import with_serving_reasons
from callbench.types.case import REF_PATTERN, Case
from callbench.types.dsl import follow_path, realize
from callbench.types.summary import Aggregate
from callbench.types.trace import Trace
from callbench.types.verdict import Reason, Verdict

NAME = "state-match"


@dataclass(frozen=True)
class GoldStates:
    """The executor state before any call and after the gold path."""

    initial: dict[str, Any] | None
    final: dict[str, Any] | None


class StateMatchScorer(Scorer):
    """Catalog entry ``state-match``; built as ``StateMatchScorer(suite)``."""

    name = NAME

    def __init__(self, suite: Any = None) -> None:
        self.suite = suite
        self._gold: dict[str, GoldStates | None] = {}

    def score(self, case: Case, trace: Trace) -> Verdict:
        """Compare ``trace.final_state`` with the gold final state, key by key."""
        if trace.final_state is None:
            return _not_applicable("the executor recorded no final state (stateless executor)")
        return with_serving_reasons(compare(self.gold_states(case), trace.final_state), trace)

    async def ascore(self, case: Case, trace: Trace) -> Verdict:
        """As :meth:`score`; the gold path is replayed without blocking the event loop."""
        if trace.final_state is None:
            return _not_applicable("the executor recorded no final state (stateless executor)")
        return with_serving_reasons(compare(await self.agold_states(case), trace.final_state), trace)

    def gold_states(self, case: Case) -> GoldStates | None:
        """Initial state and state after the gold path (cached per case)."""
        if case.key not in self._gold:
            self._gold[case.key] = run_sync(replay_gold(self.suite, case))
        return self._gold[case.key]

    async def agold_states(self, case: Case) -> GoldStates | None:
        """As :meth:`gold_states`, awaited (the engine's path)."""
        if case.key not in self._gold:
            self._gold[case.key] = await replay_gold(self.suite, case)
        return self._gold[case.key]

    def gold_state(self, case: Case) -> dict[str, Any] | None:
        """The state after the gold path."""
        states = self.gold_states(case)
        return states.final if states else None

    def aggregate(self, records: Iterable[Any]) -> Aggregate:
        """Run-level figures, with state-changing workflows counted apart from read-only ones
        (``records``: case records or record dicts)."""
        # counted one record at a time: the records may be a stream of a million read from disk
        applicable = changing = matched = left_unchanged = 0
        for record in records:
            verdict = _verdict_of(record)
            if verdict is None or not verdict.metrics.get("applicable"):
                continue
            applicable += 1
            if verdict.metrics.get("gold_changes_state"):
                changing += 1
                matched += verdict.passed
            else:
                left_unchanged += verdict.passed
        return Aggregate(
            {
                "applicable": applicable,
                "state_changing_cases": changing,
                "state_changing_matched": matched,
                "state_changing_accuracy": matched / changing if changing else None,
                "read_only_cases": applicable - changing,
                "read_only_left_unchanged": left_unchanged,
            }
        )


def _verdict_of(record: Any) -> Verdict | None:
    verdicts = record.get("verdicts", {}) if isinstance(record, dict) else getattr(record, "verdicts", {})
    verdict = verdicts.get(NAME)
    if isinstance(verdict, dict):
        return Verdict.model_validate(verdict)
    return verdict


def compare(states: GoldStates | None, actual: dict[str, Any]) -> Verdict:
    """The state-match verdict of ``actual`` against the gold path's final state."""
    if states is None or states.final is None:
        return _not_applicable("the suite's executor cannot replay the gold path")
    gold = states.final
    keys = sorted(set(gold) | set(actual))
    differing = [k for k in keys if gold.get(k) != actual.get(k)]
    reasons = [
        Reason(code="state_mismatch", message=f"state '{k}' differs from the gold path's") for k in differing
    ]
    passed = not differing
    rationale = (
        "final state equals the gold path's"
        if passed
        else f"final state differs in {len(differing)} of {len(keys)} parts: {', '.join(differing)}"
    )
    details = {
        "applicable": True,
        "gold_changes_state": states.initial != gold,
        "differing": {k: {"gold": gold.get(k), "actual": actual.get(k)} for k in differing},
    }
    # metrics survive the slim records the run summary is built from; details do not.
    metrics = {"applicable": 1.0, "gold_changes_state": float(states.initial != gold)}
    return Verdict(
        scorer=NAME,
        passed=passed,
        partial=1.0 - len(differing) / max(1, len(keys)),
        reasons=reasons,
        rationale=rationale,
        details=details,
        metrics=metrics,
    )


def _not_applicable(why: str) -> Verdict:
    # Neither a pass nor a failure: the verdict is marked not applicable and left out of every rate.
    return Verdict(
        scorer=NAME,
        passed=False,
        partial=None,
        rationale=f"not applicable: {why}",
        warnings=[why],
        details={"applicable": False},
        metrics={"applicable": 0.0},
        applicable=False,
    )


async def replay_gold(suite: Any, case: Case) -> GoldStates | None:
    """Execute the expected steps in a fresh executor session; ``None`` when that is impossible."""
    if suite is None:
        return None
    executor = resolve_executor(suite.executor_name(case))
    registry = suite.registry_for(case)
    results: dict[str, Any] = {}

    def lookup(ref: str) -> tuple[bool, Any]:
        match = REF_PATTERN.match(ref)
        if not match or match.group("step") not in results:
            return False, None
        return follow_path(results[match.group("step")], match.group("path") or "")

    with tempfile.TemporaryDirectory(prefix="callbench-gold-") as workdir:
        session = executor.start(case, Path(workdir), suite)
        try:
            initial = session.snapshot()
            for step in case.expected:
                tool = step.tools[0]
                contract = registry.find(tool)
                for _ in range(step.times):
                    if step.call_only:
                        continue
                    args = realize(step.arguments, lookup, contract.parameters if contract else None)
                    outcome = await session.call(tool, args)
                    if outcome.ok:
                        results[step.id] = outcome.result
            return GoldStates(initial, session.snapshot())
        finally:
            await session.aclose()  # a tool server started for the replay is stopped with it
