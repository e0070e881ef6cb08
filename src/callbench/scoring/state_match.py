"""``state-match``: compare the executor state after the model's calls with the state after the gold path.

A diagnostic reported beside the strict tiers and never deciding them: a model that reaches the
right final state by another valid route (other tool, other order) is visible here even when the
call-level tiers fail it, and a model that passes the call checks but leaves extra changes behind
shows up too.

The gold state is obtained by replaying the case's expected steps, in order, in a fresh session of
the suite's executor (``$ref`` values taken from the replay's own results, call-only steps not
executed). It is cached per case.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from callbench.harness.trace import Trace
from callbench.providers.agents.realize import realize
from callbench.scoring.base import Reason, Verdict
from callbench.scoring.refs import follow_path
from callbench.suites.case import REF_PATTERN, Case

NAME = "state-match"


class StateMatchScorer:
    """Catalog entry ``state-match``; built as ``StateMatchScorer(suite)``."""

    name = NAME

    def __init__(self, suite: Any = None) -> None:
        self.suite = suite
        self._gold: dict[str, dict[str, Any] | None] = {}

    def score(self, case: Case, trace: Trace) -> Verdict:
        """Compare ``trace.final_state`` with the gold final state, key by key."""
        if trace.final_state is None:
            return _not_applicable("the executor recorded no final state (stateless executor)")
        gold = self.gold_state(case)
        if gold is None:
            return _not_applicable("the suite's executor cannot replay the gold path")
        keys = sorted(set(gold) | set(trace.final_state))
        differing = [k for k in keys if gold.get(k) != trace.final_state.get(k)]
        reasons = [Reason(code="state_mismatch", message=f"state '{k}' differs from the gold path's")
                   for k in differing]
        passed = not differing
        rationale = "final state equals the gold path's" if passed else \
            f"final state differs in {len(differing)} of {len(keys)} parts: {', '.join(differing)}"
        details = {"applicable": True, "differing": {k: {"gold": gold.get(k), "actual": trace.final_state.get(k)}
                                                     for k in differing}}
        return Verdict(scorer=NAME, passed=passed, partial=1.0 - len(differing) / max(1, len(keys)),
                       reasons=reasons, rationale=rationale, details=details)

    def gold_state(self, case: Case) -> dict[str, Any] | None:
        """The state after the gold path (cached per case)."""
        if case.key not in self._gold:
            self._gold[case.key] = replay_gold(self.suite, case)
        return self._gold[case.key]


def _not_applicable(why: str) -> Verdict:
    # Passed so that stateless runs do not read as failures; ``applicable`` says the check did not run.
    return Verdict(scorer=NAME, passed=True, partial=None, rationale=f"not applicable: {why}",
                   warnings=[why], details={"applicable": False})


def replay_gold(suite: Any, case: Case) -> dict[str, Any] | None:
    """Execute the expected steps in a fresh executor session; ``None`` when that is impossible."""
    if suite is None:
        return None
    from callbench.harness.engine import resolve_executor

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
            for step in case.expected:
                tool = step.tools[0]
                contract = registry.find(tool)
                for _ in range(step.times):
                    if step.call_only:
                        continue
                    args = realize(step.arguments, lookup, contract.parameters if contract else None)
                    outcome = session.call(tool, args)
                    if outcome.ok:
                        results[step.id] = outcome.result
            return session.snapshot()
        finally:
            session.close()
