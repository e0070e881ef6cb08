"""A newcomer's selections through the installed console script: case files with a typo, a
``--case`` that selects nothing or is copied from a report, and ``--tier all`` on suites with their
own scorers. Each mistake is exit 2 with one line naming what to fix, before any run folder exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fresh_cli import FreshCli, assert_clean_error

TOOL = """\
name: get_weather
description: Current weather of a city.
parameters:
  type: object
  properties:
    city: {type: string}
    unit: {type: string, default: celsius}
  required: [city]
"""


def suite_folder(root: Path, arguments: str) -> Path:
    folder = root / "my_suite"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "get_weather.yaml").write_text(TOOL)
    (folder / "cases.yaml").write_text(
        "cases:\n"
        "  - id: paris\n    instruction: Weather in Paris?\n"
        "    expected: [{tool: get_weather, arguments: {city: Paris}}]\n"
        "  - id: rome\n    instruction: Weather in Rome?\n"
        f"    expected: [{{tool: get_weather, arguments: {arguments}}}]\n"
    )
    return folder


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ("{citty: Rome}", "step 'get_weather': argument key 'citty' is not a parameter of get_weather"),
        ("{city: {$anyy: true}}", "step 'get_weather': argument 'city': unknown DSL marker '$anyy'"),
    ],
)
def test_a_typo_in_a_case_file_stops_loading_naming_file_case_step_and_key(
    fresh_cli: FreshCli, tmp_path: Path, arguments: str, says: str
) -> None:
    folder = suite_folder(tmp_path, arguments)
    done = fresh_cli.run("run", "-s", str(folder), "-m", "oracle", "--out", str(tmp_path / "run"))
    stderr = assert_clean_error(done, 2, [f"{folder / 'cases.yaml'}:5: case 'rome': ", says])
    assert len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_case_that_does_not_exist_is_named_with_the_ids_that_do(
    fresh_cli: FreshCli, tmp_path: Path
) -> None:
    done = fresh_cli.run("run", "-s", "starter", "-m", "oracle", "--case", "weather_pari", cwd=tmp_path)
    stderr = assert_clean_error(
        done, 2, ["--case 'weather_pari': no case of suite 'starter'", "did you mean 'weather_paris'"]
    )
    assert len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()  # no empty run folder


def test_the_case_id_a_report_shows_selects_the_case(fresh_cli: FreshCli, tmp_path: Path) -> None:
    # `genomics` shows complex/load_all_tracks; the part's own suite takes that form too, and the
    # combined suite takes the bare id.
    for suite, selector, key in (
        ("genomics-complex", "complex/load_all_tracks", "genomics-complex:load_all_tracks"),
        ("genomics", "load_all_tracks", "genomics:complex/load_all_tracks"),
    ):
        out = tmp_path / suite
        done = fresh_cli.run("run", "-s", suite, "-m", "oracle", "--case", selector, "--out", str(out))
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
        assert [r["key"] for r in records] == [key]


def test_tier_all_keeps_the_suites_scorers_and_mixes_with_named_tiers(
    fresh_cli: FreshCli, tmp_path: Path
) -> None:
    out = tmp_path / "g"
    done = fresh_cli.run(
        "run", "-s", "genomics", "-m", "oracle", "--tier", "all", "--tier", "state-match",
        "--case", "simple/nav_goto_position", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "state-match (diagnostic)" in done.stdout
    header = json.loads((out / "run.json").read_text())
    assert header["scorers"]["genomics"] == [
        "native-function-contract", "real-tool-execution", "task-completion-execution", "state-match",
    ]  # fmt: skip
    assert header["diagnostic_scorers"] == ["state-match"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tiers"]["state-match"]["diagnostic"] is True
    assert "diagnostic" not in summary["tiers"]["native-function-contract"]
    shown = fresh_cli.run("show", str(out), "--format", "md")
    assert shown.returncode == 0 and "| state-match (diagnostic) |" in shown.stdout
    assert "| native-function-contract |" in shown.stdout


def test_tier_all_on_dag_keeps_the_dag_scorer(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "d"
    done = fresh_cli.run(
        "run", "-s", "dag:n_core=3;depth=1;seeds=1", "-m", "planner", "--tier", "all", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    header = json.loads((out / "run.json").read_text())
    assert header["scorers"]["dag"] == ["dag"]  # the strict tiers do not apply to DAG tasks
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tiers"]["dag"]["accuracy"] == 1.0
