"""``examples/plugin-weather`` (issue 27, item 7): the plugin ``docs/plugins.md`` walks through,
installed as a user installs it and run through the console script: it passes ``callbench check``,
its state check and its own scorer judge real calls, and ``run.json`` names it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_site import install_plugin
from plugin_site import run_cli as callbench

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin-weather"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("weather") / "site"
    install_plugin(EXAMPLE, target)
    return target


def test_the_example_plugin_passes_its_self_test(site: Path, tmp_path: Path) -> None:
    done = callbench(site, "check", "weather-demo", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASS") == 5 and "weather-units" in done.stdout


def test_its_tools_state_and_scorer_judge_a_run(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "oracle"
    done = callbench(
        site, "run", "-s", "weather-demo", "-m", "oracle", "--progress", "quiet", "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert {name: figures["accuracy"] for name, figures in summary["tiers"].items()} == {
        "native-function-contract": 1.0,
        "real-tool-execution": 1.0,
        "task-completion-execution": 1.0,
        "state-match": 1.0,
        "weather-units": 1.0,
    }
    records = {r["case_id"]: r for r in map(json.loads, (out / "records.jsonl").read_text().splitlines())}
    assert records["log_lima"]["trace"]["final_state"] == {
        "logged": [{"station_id": "LIM-2", "value": 18.25}]
    }
    suite = json.loads((out / "run.json").read_text())["suites"][0]
    assert (suite["plugin"], suite["plugin_version"], suite["version"]) == (
        "callbench-plugin-weather",
        "0.1.0",
        "0.1.0",
    )
    noisy = tmp_path / "noisy"
    done = callbench(
        site,
        "run",
        "-s",
        "weather-demo",
        "-m",
        "noisy:1",
        "--progress",
        "quiet",
        "-o",
        str(noisy),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    tiers = json.loads((noisy / "summary.json").read_text())["tiers"]
    assert tiers["task-completion-execution"]["accuracy"] < 1.0
