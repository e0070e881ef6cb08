"""The dag suite: spec parsing, grid, case fields, JSONL round trip, CLI and the per-setting table."""

from __future__ import annotations

from pathlib import Path

import pytest
from dag_helpers import play, record_of

from callbench.benchmarks.funcbenchgen.planner import PlannerAgent
from callbench.benchmarks.funcbenchgen.scorer import aggregate, dag_table
from callbench.benchmarks.funcbenchgen.suite import grid, load_suite, parse_spec
from callbench.cli.main import main
from callbench.errors import ConfigError, SuiteError
from callbench.executors.base import run_sync
from callbench.harness.runfolder import slim_record
from callbench.providers.agents.noisy import NoisyAgent
from callbench.suites.suite import SuiteOptions
from callbench.types.records import CaseRecord


def test_grid_size_and_defaults() -> None:
    spec = parse_spec("n_core=5,10,20;depth=1,4;n_conn=0,5;n_dis=0,5;seeds=5")
    assert spec.seeds == (0, 100, 200, 300, 400)
    assert len(grid(spec)) == 3 * 2 * 2 * 2 * 5
    assert parse_spec("n_core=5").depth == (1,) and parse_spec("n_core=5").episode.cap == "fixed"


def test_impossible_depths_are_skipped_and_all_expands() -> None:
    points = grid(parse_spec("n_core=3,6;depth=1,4;seeds=1"))
    assert {(p.n_core, p.depth) for p in points} == {(3, 1), (6, 1), (6, 4)}
    assert [p.depth for p in grid(parse_spec("n_core=5;depth=all;seeds=1"))] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("n_core=5;dpth=2", "unknown key 'dpth'"),
        ("depth=2", "n_core is required"),
        ("n_core=five", "n_core='five' is not an integer"),
        ("n_core=5;mode=loud", "mode='loud' must be one of silent, explicit"),
        ("n_core=5;flags=magic", "unknown flag 'magic'"),
        ("n_core=5;depth=9", "no valid grid point"),
        ("n_core=5;depth", "must be key=value"),
        ("n_core=6000;depth=3", "n_core: Input should be less than or equal to 5000"),
        ("n_core=5;depth=2;n_conn=9000", "exceeds the limit of 5000 functions"),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_suite(spec, SuiteOptions())


def test_case_fields() -> None:
    suite = load_suite("n_core=5;depth=2;n_conn=3;seeds=1;restate=both;cap=official", SuiteOptions())
    assert suite.scorers == ["dag"] and suite.executor == "dag" and suite.system_prompt == ""
    plain, restate = suite.cases
    assert restate.id == plain.id + "-restate" and restate.executor_config["restate"] is True
    assert plain.max_calls == 10 and plain.harness_guidance is False and plain.system == ""
    assert plain.template == restate.template == "c5-d2-conn3-dis0-s0"
    assert plain.metadata["setting"] == "c5-d2-conn3-dis0" and plain.metadata["arm"] == "plain"
    assert [t.name for t in plain.inline_contracts()] == plain.executor_config["task"]["tool_order"]
    schema = plain.inline_contracts()[0].parameters
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
    assert all(p == {"type": "integer"} for p in schema["properties"].values())
    assert len(plain.expected) == 5 and plain.expected_answer is not None
    fixed = load_suite("n_core=5;depth=2;seeds=1", SuiteOptions()).cases[0]
    assert fixed.max_calls == 11  # an answer is still possible after 2 * n_core calls


def test_generate_cli_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tasks.jsonl"
    assert main(["generate", "dag", "n_core=5;depth=1,3;n_conn=2;seeds=2", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 4
    suite = load_suite(f"file={out};restate=on", SuiteOptions())
    assert len(suite.cases) == 4
    for case in suite.cases:
        assert play(suite, case, PlannerAgent())[1].passed
    assert main(["generate", "dag", "n_core=5;depth=8", "-o", str(out)]) == 2
    assert "no valid grid point" in capsys.readouterr().err


def test_bad_task_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    main(["generate", "dag", "n_core=5;depth=2;seeds=1", "-o", str(path)])
    good = path.read_text()
    path.write_text(good + good.replace('"depth":2', '"depth":3'))
    with pytest.raises(SuiteError, match=r"tasks.jsonl:2: task .* is invalid: longest path"):
        load_suite(f"file={path}", SuiteOptions())
    path.write_text("{}\n")
    with pytest.raises(SuiteError, match=r"tasks.jsonl:1: not a DAG task"):
        load_suite(f"file={path}", SuiteOptions())


def test_aggregate_table_and_restatement_effect() -> None:
    suite = load_suite("n_core=5;depth=1,4;seeds=3;restate=both", SuiteOptions())
    records = []
    for case in suite.cases:
        trace, verdict = play(suite, case, PlannerAgent())
        # Summaries read slimmed records (no verdict details): the aggregate must work from them.
        full = CaseRecord(
            key=case.key,
            suite="dag",
            case_id=case.id,
            category=case.category,
            harness_mode="production-parity",
            trace=trace,
            verdicts={"dag": verdict},
            template=case.template,
        )
        records.append(slim_record(full))
    records.append(
        {"status": "error", "case_id": "c5-d1-conn0-dis0-s0-t0", "template": "c5-d1-conn0-dis0-s0"}
    )
    summary = aggregate(records)
    assert [(r["setting"], r["arm"], r["n"], r["successes"]) for r in summary["rows"]] == [
        ("c5-d1-conn0-dis0", "plain", 3, 3),
        ("c5-d1-conn0-dis0", "restate", 3, 3),
        ("c5-d4-conn0-dis0", "plain", 3, 3),
        ("c5-d4-conn0-dis0", "restate", 3, 3),
    ]
    assert summary["rows"][0]["ci_low"] == pytest.approx(0.4385, abs=1e-3)  # Wilson, 3/3
    assert summary["rows"][0]["efficiency"] == 1.0 and summary["rows"][0]["mean_calls"] == 5.0
    assert summary["restatement"]["n_pairs"] == 6 and summary["restatement"]["difference"]["estimate"] == 0.0
    assert summary["errors"] == {"c5-d1-conn0-dis0": 1}
    table = dag_table(summary)
    assert summary["tables"] == [table]  # data the CLI and reports render, not preformatted text
    assert table.columns == ["setting", "arm", "n", "success", "95% CI", "strict", "lenient", "eff", "calls"]
    assert table.rows[2] == [
        "c5-d4-conn0-dis0",
        "plain",
        "3",
        "1.00",
        "[0.44,1.00]",
        "1.00",
        "1.00",
        "1.00",
        "5.0",
    ]
    assert table.alignment(1) == "left" and table.alignment(2) == "right"
    assert table.notes[0].startswith("success follows the strict rule")
    assert table.notes[1].startswith("restatement effect over 6 paired tasks: +0.000")


def test_aggregate_counts_failure_classes_per_setting() -> None:
    suite = load_suite("n_core=5;depth=2;n_conn=3;seeds=2", SuiteOptions())
    records = [record_of(c, play(suite, c, NoisyAgent(1, "wrong_value"))[1]) for c in suite.cases]
    row = aggregate(records)["rows"][0]
    assert row["successes"] == 0 and row["first_failures"] == {"incorrect_value": 2}
    assert row["failure_counts"]["incorrect_value"] == 2 and row["failure_counts"]["not_yet_known"] >= 2


def test_aggregate_without_both_arms_has_no_restatement_effect() -> None:
    suite = load_suite("n_core=5;depth=2;seeds=2", SuiteOptions())
    records = [record_of(c, play(suite, c, PlannerAgent())[1]) for c in suite.cases]
    assert aggregate(records)["restatement"] is None


def test_repeated_trials_use_a_task_clustered_interval() -> None:
    suite = load_suite("n_core=5;depth=2;seeds=2", SuiteOptions())
    records = [record_of(c, play(suite, c, PlannerAgent())[1], t) for c in suite.cases for t in (1, 2, 3)]
    row = aggregate(records)["rows"][0]
    assert row["n"] == 6 and row["successes"] == 6
    # Two independent tasks, not six: Wilson over tasks (a percentile bootstrap would give [1, 1]).
    assert row["ci_method"] == "wilson-clusters" and row["ci_low"] == pytest.approx(0.342, abs=1e-3)


def test_episode_options_reach_the_executor() -> None:
    from callbench.benchmarks.funcbenchgen.executor import DagExecutor
    from callbench.benchmarks.funcbenchgen.runtime import REMINDER_HEAD

    for spec, check in (
        ("restate=on", lambda out: out.ok and REMINDER_HEAD.strip() in out.content),
        (
            "mode=explicit",
            lambda out: not out.ok and out.content == '"Error occurred."' and out.result is None,
        ),
    ):
        suite = load_suite(f"n_core=5;depth=4;seeds=1;{spec}", SuiteOptions())
        case = suite.cases[0]
        session = DagExecutor().start(case, Path("."), suite)
        step = case.expected[0] if spec == "restate=on" else case.expected[-1]  # last: inputs unknown
        out = run_sync(session.call(step.tool, dict(step.arguments)))
        assert check(out), spec
        assert out.annotations["node_kind"] == "core"
