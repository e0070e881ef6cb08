"""Item 24: the noisy agent draws its mistake per task, so both restatement arms get the same one."""

from __future__ import annotations

import random

from dag_helpers import play

from callbench.benchmarks.funcbenchgen.suite import load_suite
from callbench.providers.agents.noisy import MUTATIONS, NoisyAgent
from callbench.suites.resolve import load_suite as load_any
from callbench.suites.suite import SuiteOptions
from callbench.types.hashing import sha256_of


def _calls(trace) -> list[tuple[str, str]]:
    return [(c.tool, c.arguments_raw) for c in trace.calls]


def test_both_restatement_arms_get_the_same_mistake() -> None:
    suite = load_suite("n_core=5,10;depth=1,4;n_conn=0,5;n_dis=5;seeds=2;restate=both", SuiteOptions())
    by_task: dict[str, dict[str, object]] = {}
    for case in suite.cases:
        by_task.setdefault(case.id.removesuffix("-restate"), {})[case.metadata["arm"]] = case
    assert len(by_task) == 16 and all(len(arms) == 2 for arms in by_task.values())
    for seed in (1, 2, 3):
        agent = NoisyAgent(seed, None)
        for task_id, arms in by_task.items():
            plain, restate = (play(suite, arms[a], agent.for_case(arms[a])) for a in ("plain", "restate"))
            assert _calls(plain[0]) == _calls(restate[0]), (seed, task_id)
            assert plain[0].final_text == restate[0].final_text, (seed, task_id)


def test_the_plain_arm_keeps_its_draw() -> None:
    """The plain arm's case id is the task id, so its mistake is the one drawn before the change."""
    suite = load_suite("n_core=5;depth=2;n_conn=3;seeds=3;restate=both", SuiteOptions())
    for case in suite.cases:
        rng = random.Random(int(sha256_of(f"7:{case.suite}:{case.id.removesuffix('-restate')}")[:16], 16))
        expected = rng.choice((*MUTATIONS, "none", "none", "none"))
        assert NoisyAgent(7, None).for_case(case).mutation == expected, case.id


def test_other_suites_still_draw_per_case() -> None:
    suite = load_any("starter")
    for case in suite.cases:
        rng = random.Random(int(sha256_of(f"3:{case.key}")[:16], 16))
        assert NoisyAgent(3, None).for_case(case).mutation == rng.choice((*MUTATIONS, "none", "none", "none"))
