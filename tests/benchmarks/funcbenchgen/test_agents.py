"""planner and oracle solve every task; noisy runs count each failure class."""

from __future__ import annotations

import pytest
from dag_helpers import play

from callbench.benchmarks.funcbenchgen.planner import PlannerAgent, make_provider
from callbench.benchmarks.funcbenchgen.suite import load_suite
from callbench.providers.agents.noisy import NoisyAgent
from callbench.providers.agents.oracle import OracleAgent
from callbench.providers.base import Provider
from callbench.suites.suite import SuiteOptions
from callbench.types.messages import ModelTurn, ToolCall

# A sample of the paper's grid: n_core 5-40, shallow / middle / deepest depth, CIN and DIN 0-20.
GRID_SPECS = [
    f"n_core={n};depth={','.join(str(d) for d in sorted({1, n // 2, n - 1}))};n_conn=0,20;n_dis=0,20;seeds=1"
    for n in (5, 10, 20, 40)
]


@pytest.mark.parametrize("spec", GRID_SPECS)
def test_planner_solves_the_faithful_grid_with_efficiency_one(spec: str) -> None:
    suite = load_suite(spec + ";noise=3", SuiteOptions())
    for case in suite.cases:
        _, verdict = play(suite, case, PlannerAgent())
        assert verdict.passed, (case.id, verdict.rationale)
        assert verdict.metrics["efficiency"] == 1.0, case.id


@pytest.mark.parametrize(
    "extra", [";style=named;flags=seeded_shuffle", ";flags=target_visible+seeded_shuffle"]
)
def test_planner_is_exact_whenever_the_target_is_named(extra: str) -> None:
    suite = load_suite("n_core=10,20;depth=1,5,9;n_conn=20;n_dis=5;seeds=2" + extra, SuiteOptions())
    for case in suite.cases:
        trace, verdict = play(suite, case, PlannerAgent())
        assert verdict.passed and verdict.metrics["efficiency"] == 1.0, case.id
        # Parallel calls per layer: depth + 1 rounds of calls, then the answer.
        assert len(trace.rounds) == case.executor_config["task"]["params"]["depth"] + 2


def test_planner_never_reads_hidden_data() -> None:
    suite = load_suite("n_core=10;depth=4;n_conn=5;seeds=2", SuiteOptions())
    for case in suite.cases:
        stripped = case.model_copy(update={"executor_config": {**case.executor_config}})
        for tool in stripped.inline_contracts():
            tool.metadata.clear()  # the node kind lives in metadata, which models never see
        _, verdict = play(suite, stripped, PlannerAgent())
        assert verdict.passed


def test_planner_takes_no_options() -> None:
    from callbench.errors import ConfigError

    assert make_provider("").name == "planner"
    with pytest.raises(ConfigError):
        make_provider("fast")


@pytest.mark.parametrize("restate", ["off", "on"])
def test_oracle_solves_every_case(restate: str) -> None:
    suite = load_suite(f"n_core=5,20;depth=1,4;n_conn=0,10;n_dis=5;seeds=2;restate={restate}", SuiteOptions())
    for case in suite.cases:
        _, verdict = play(suite, case, OracleAgent())
        assert verdict.passed and verdict.metrics["efficiency"] == 1.0, case.id


@pytest.mark.parametrize(
    ("mutation", "first"),
    [
        ("wrong_value", "incorrect_value"),
        ("missing_key", "wrong_arg_count"),
        ("extra_key", "wrong_arg_count"),
        ("schema_invalid_value", "incorrect_value"),
        ("wrong_tool", "wrong_arg_count"),
    ],
)
def test_noisy_mutations_are_classed(mutation: str, first: str) -> None:
    suite = load_suite("n_core=5;depth=2;n_conn=3;seeds=1", SuiteOptions())
    _, verdict = play(suite, suite.cases[0], NoisyAgent(1, mutation))
    assert not verdict.passed
    assert verdict.details["first_failure"]["failure"] == first
    # The skipped value never becomes known, so every later dependent call is "not yet known".
    assert verdict.details["failure_counts"].get("not_yet_known", 0) >= 1


class _Script(Provider):
    """Plays fixed turns: each a list of (name, arguments or None for malformed JSON)."""

    name = "script"
    needs_network = False

    def __init__(self, turns: list[list[tuple[str, dict | None]]], answer: str = "done") -> None:
        self.turns = turns
        self.answer = answer

    async def generate(self, messages, tools, settings) -> ModelTurn:
        index = sum(1 for m in messages if m.role == "assistant")
        if index >= len(self.turns):
            return ModelTurn(text=self.answer)
        calls = [
            ToolCall(
                id=f"s{index}_{i}",
                name=name,
                arguments=args,
                arguments_raw="{" if args is None else "{}",
                parse_error=None if args is not None else "Expecting value",
            )
            for i, (name, args) in enumerate(self.turns[index])
        ]
        return ModelTurn(tool_calls=calls)


def test_scripted_noisy_run_counts_every_failure_class() -> None:
    suite = load_suite("n_core=5;depth=4;n_conn=2;n_dis=2;seeds=1", SuiteOptions())
    case = suite.cases[0]
    task = case.executor_config["task"]
    nodes = {n["name"]: n for n in task["nodes"]}
    steps = {s.tool: s for s in case.expected}
    a = nodes[case.expected[0].tool]
    b = next(n for n in task["nodes"] if n["kind"] == "core" and a["output_type"] in n["input_types"])
    conn = next(n for n in task["nodes"] if n["kind"] == "conn")
    true_a = steps[a["name"]].arguments
    wrong_a = {k: (v + 1) % 1000 for k, v in true_a.items()}
    turns = [
        [("func_nothere", {"x": 1})],  # unknown_function
        [(a["name"], None)],  # invalid_arguments (malformed JSON)
        [(a["name"], {})],  # wrong_arg_count
        [(b["name"], dict(steps[b["name"]].arguments))],  # not_yet_known (premature)
        [(a["name"], wrong_a)],  # incorrect_value -> wrong value shown
        [(a["name"], true_a)],  # correct
        [(conn["name"], {conn["inputs"][0]: 0})],  # a distractor call (maybe incorrect)
    ]
    _trace, verdict = play(suite, case, _Script(turns))
    counts = verdict.details["failure_counts"]
    for cls in (
        "unknown_function",
        "invalid_arguments",
        "wrong_arg_count",
        "not_yet_known",
        "incorrect_value",
    ):
        assert counts.get(cls, 0) >= 1, cls
    assert verdict.details["first_failure"]["failure"] == "unknown_function"
    assert verdict.details["distractor_calls"]["conn"] == 1
    assert [r["failure"] for r in verdict.details["per_call"][:6]] == [
        "unknown_function",
        "invalid_arguments",
        "wrong_arg_count",
        "not_yet_known",
        "incorrect_value",
        None,
    ]
    assert not verdict.passed and verdict.details["outcome"] == "incorrect"


@pytest.mark.parametrize(
    "options", [";restate=on", ";mode=explicit;errors=detailed", ";cap=official;scoring=lenient"]
)
def test_planner_is_unaffected_by_episode_options(options: str) -> None:
    suite = load_suite("n_core=10;depth=1,5,9;n_conn=10;n_dis=10;seeds=1;noise=2" + options, SuiteOptions())
    for case in suite.cases:
        _, verdict = play(suite, case, PlannerAgent())
        assert verdict.passed and verdict.metrics["efficiency"] == 1.0, (options, case.id)
