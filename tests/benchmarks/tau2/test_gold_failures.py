"""The shipped list of τ² gold actions that fail in the package's own environment (the tau2 suites'
``expect_error`` steps) agrees with a replay of the gold actions."""

from __future__ import annotations

import pytest

from callbench.types.case import Case, ExpectedStep

pytest.importorskip("tau2.domains.mock.environment")

from callbench.benchmarks.tau2.data import DOMAINS, load_tasks  # noqa: E402
from callbench.benchmarks.tau2.reward import gold_run  # noqa: E402
from callbench.benchmarks.tau2.suite import gold_failures  # noqa: E402
from callbench.suites.resolve import load_suite  # noqa: E402

EVERY = 10
"""Besides every listed task, every 10th task of each domain is replayed (scripts/tau2_gold_failures.py
replays them all)."""


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_listed_failures_are_the_gold_actions_that_fail_in_a_replay(domain: str) -> None:
    listed = gold_failures(domain)
    tasks = load_tasks(domain, None)
    sample = [t for i, t in enumerate(tasks) if str(t.id) in listed or i % EVERY == 0]
    for task in sample:
        assert frozenset(gold_run(domain, task)[1]) == listed.get(str(task.id), frozenset()), task.id
    if domain == "retail":  # the lookups of a mistyped address or a wrong name that find nothing
        assert len(listed) == 18


def test_a_listed_gold_action_is_an_expect_error_step_of_its_case() -> None:
    suite = load_suite("tau2:retail")
    case = next(c for c in suite.cases if c.id == "38")
    steps = {s.id: s for s in case.expected}
    assert steps["38_0"].expect_error and not steps["38_1"].expect_error


def test_a_case_without_expected_errors_hashes_as_before_the_field_existed() -> None:
    plain = Case(id="c", instruction="hi", expected=[ExpectedStep(tool="t")])
    failing = plain.model_copy(update={"expected": [ExpectedStep(tool="t", expect_error=True)]})
    assert "expect_error" not in plain.hash_payload()["expected"][0]
    assert failing.hash_payload()["expected"][0]["expect_error"] is True
