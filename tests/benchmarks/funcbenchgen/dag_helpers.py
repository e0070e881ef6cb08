"""Shared helpers for the DAG tests: run one case through the real round loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from callbench.benchmarks.funcbenchgen.executor import DagExecutor
from callbench.benchmarks.funcbenchgen.scorer import DagScorer
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy
from callbench.providers.base import Provider
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.messages import GenerationSettings
from callbench.types.trace import Trace
from callbench.types.verdict import Verdict


def play(suite: Suite, case: Case, provider: Provider) -> tuple[Trace, Verdict]:
    """Run ``case`` with ``provider`` through the harness loop and score it with ``dag``."""
    episode = Episode(case, suite.candidate_tools(case), ModePolicy("production-parity"), suite.system_prompt)
    session = DagExecutor().start(case, Path("."), suite)
    trace = asyncio.run(run_episode(episode, provider.for_case(case), session, GenerationSettings()))
    return trace, DagScorer().score(case, trace)


def record_of(case: Case, verdict: Verdict, trial: int = 1) -> dict:
    """A records.jsonl-like line holding what summaries keep of a case run."""
    return {
        "case_id": case.id,
        "template": case.template,
        "trial": trial,
        "status": "completed",
        "verdicts": {"dag": verdict.model_dump(mode="json")},
    }
