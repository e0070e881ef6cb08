"""The typed Python API: ``callbench.evaluate`` with suites and providers built in code, option
groups, the ``run`` alias with its flat keywords, and resuming a run that held Python objects."""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, get_type_hints

import pytest

import callbench
from callbench.api import RunOptions
from callbench.catalog import catalog
from callbench.errors import ConfigError, UserError
from callbench.executors.python import PythonExecutor
from callbench.harness.config import OBJECT_SPEC, EngineLimits, Output, RunConfig, Selection
from callbench.harness.runfolder import RECORDS_FILE, read_header
from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn
from callbench.providers.base import Provider
from callbench.scoring.tiers import completion_tier, contract_tier, execution_tier
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
TIER_FACTORIES = (contract_tier, execution_tier, completion_tier)


def tiny_suite(name: str = "tiny") -> Suite:
    """Two cases over one real tool, run by a python executor: nothing from the catalog."""
    integer = {"type": "integer"}
    parameters = {"type": "object", "properties": {"a": integer, "b": integer}, "required": ["a", "b"]}
    add = ToolContract(name="add", description="Add two integers.", parameters=parameters)
    cases = [
        Case.model_validate(
            {
                "id": cid,
                "instruction": f"Add {a} and {b}.",
                "expected": [{"tool": "add", "arguments": {"a": a, "b": b}}],
            }
        )
        for cid, a, b in (("two_and_three", 2, 3), ("five_and_seven", 5, 7))
    ]
    return Suite(
        name=name,
        cases=cases,
        registry=ToolRegistry([add]),
        executor=PythonExecutor({"add": lambda a, b: {"sum": a + b}}),
    )


class Adder(Provider):
    """Reads the two numbers off the request; gets the second one wrong when it is 7."""

    name = "adder"
    model = "v1"
    needs_network = False

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        if messages[-1].role == "tool":
            return text_turn("Done.")
        words = [w.strip(".") for w in messages[-1].content.split()]
        a, b = int(words[1]), int(words[3])
        return tool_call_turn("add", {"a": a, "b": 8 if b == 7 else b})


@pytest.fixture
def no_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every use of the global catalog fail, wherever a module bound it."""
    import callbench.api  # noqa: F401 - load the run path first, so its bindings get patched too
    import callbench.harness.engine  # noqa: F401

    original = sys.modules["callbench.catalog"].catalog

    def forbidden() -> Any:
        raise AssertionError("the global catalog was used")

    for name, module in list(sys.modules.items()):
        if name.startswith("callbench") and getattr(module, "catalog", None) is original:
            monkeypatch.setattr(module, "catalog", forbidden)


def outcomes(result: Any) -> dict[str, tuple[bool, ...]]:
    return {r.case_id: tuple(r.verdicts[t].passed for t in TIERS) for r in result.records}


def test_evaluate_runs_a_suite_and_provider_built_in_code_without_the_catalog(
    tmp_path: Path, no_catalog: None
) -> None:
    suite, provider = tiny_suite(), Adder()
    result = callbench.evaluate(
        suite, provider, tiers=TIER_FACTORIES, output=Output(out_dir=tmp_path / "run")
    )
    assert outcomes(result) == {"two_and_three": (True, True, True), "five_and_seven": (False, False, False)}
    wrong = next(r for r in result.records if r.case_id == "five_and_seven")
    assert "argument_mismatch" in wrong.verdicts["native-function-contract"].codes
    header = read_header(result.run_dir)
    assert [(s.name, s.spec, s.hash, s.registry_hash) for s in header.suites] == [
        ("tiny", OBJECT_SPEC, suite.hash, suite.registry.hash)
    ]
    assert header.model == "adder:v1" and header.provider == provider.describe()
    assert header.scorers == {"tiny": list(TIERS)}
    recorded = header.options["config"]
    assert recorded["suites"] == [OBJECT_SPEC] and recorded["model"] == OBJECT_SPEC
    assert recorded["tiers"] == [OBJECT_SPEC] * 3


def test_evaluate_takes_a_list_mixing_suite_names_and_objects(tmp_path: Path) -> None:
    result = callbench.evaluate(
        ["starter", tiny_suite()],
        "oracle",
        tiers="all",
        selection=Selection(limit=1),
        output=Output(out_dir=tmp_path / "run"),
    )
    header = read_header(result.run_dir)
    assert [(s.name, s.spec) for s in header.suites] == [("starter", "starter"), ("tiny", OBJECT_SPEC)]
    assert len(result.records) == 2
    assert all(all(v.passed for v in r.verdicts.values()) for r in result.records)


def test_an_executor_object_overrides_the_suites_executor(tmp_path: Path) -> None:
    doubled = PythonExecutor({"add": lambda a, b: {"sum": 2 * (a + b)}})
    result = callbench.evaluate(
        tiny_suite(),
        "oracle",
        selection=Selection(executor=doubled, limit=1),
        output=Output(out_dir=tmp_path / "run"),
    )
    assert result.records[0].trace.calls[0].result == {"sum": 10}
    assert read_header(result.run_dir).executor == OBJECT_SPEC


def test_an_in_memory_run_resumes_through_the_api_and_not_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from callbench.cli.main import main

    out = tmp_path / "run"
    suite, provider = tiny_suite(), Adder()
    callbench.evaluate(suite, provider, selection=Selection(limit=1), output=Output(out_dir=out))
    resumed = callbench.evaluate(suite, provider, output=Output(out_dir=out, resume=True))
    assert outcomes(resumed) == {"two_and_three": (True, True, True), "five_and_seven": (False, False, False)}
    assert len((out / RECORDS_FILE).read_text().splitlines()) == 2  # the first case was not run again

    with pytest.raises(UserError, match="cannot resume: model was 'adder:v1', now 'scripted'"):
        callbench.evaluate(suite, ScriptedProvider([]), output=Output(out_dir=out, resume=True))
    capsys.readouterr()
    assert main(["run", "--resume", str(out), "--progress", "quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "cannot resume from run.json" in error
    assert "suites ['tiny'], model were Python objects" in error and "resume=True" in error


def test_the_run_alias_keeps_todays_keywords(tmp_path: Path) -> None:
    cases = ["weather_paris", "starter:convert_distance"]
    kwargs: dict[str, Any] = dict(
        progress="quiet",
        cache=False,
        case_ids=cases,
        trials=2,
        concurrency=2,
        max_retries=1,
        harness_mode="oracle-assisted",
        settings=GenerationSettings(max_tokens=256),
        k="all",
        suite_options={},
    )
    old = callbench.run("starter", model="oracle", tier="all", out_dir=tmp_path / "old", **kwargs)
    new = callbench.evaluate(
        "starter",
        "oracle",
        tiers="all",
        mode="oracle-assisted",
        selection=Selection(case_ids=cases, trials=2, k="all"),
        limits=EngineLimits(cache=False, concurrency=2, max_retries=1),
        generation={"max_tokens": 256},
        output=Output(out_dir=tmp_path / "new"),
    )
    assert sorted((r.key, r.trial) for r in old.records) == [
        ("starter:convert_distance", 1),
        ("starter:convert_distance", 2),
        ("starter:weather_paris", 1),
        ("starter:weather_paris", 2),
    ]
    assert outcomes(old) == outcomes(new) and all(all(o) for o in outcomes(old).values())
    old_config, new_config = (read_header(r.run_dir).options["config"] for r in (old, new))
    assert old_config.pop("out_dir") != new_config.pop("out_dir") and old_config == new_config
    assert old_config["settings"]["max_tokens"] == 256 and old_config["k"] == "all"
    assert (old_config["cache"], old_config["trials"]) == (False, 2)
    assert old_config["harness_mode"] == "oracle-assisted"


def test_run_names_an_unknown_keyword_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown run option 'concurency' \(did you mean 'concurrency'"):
        callbench.run("starter", "oracle", out_dir=tmp_path / "r", concurency=2)  # type: ignore[call-arg]
    assert not (tmp_path / "r").exists()


def test_run_keywords_are_the_option_groups_fields() -> None:
    """``RunOptions`` (run's typed keywords), the groups and ``RunConfig`` list the same options."""
    group_names = {f.name for group in (Selection, EngineLimits, Output) for f in fields(group)}
    assert set(get_type_hints(RunOptions)) == group_names | {"settings", "harness_mode", "agent"}
    own = {"suites", "model", "agent", "tiers", "harness_mode", "settings"}
    assert {f.name for f in fields(RunConfig)} == group_names | own
    defaults = RunConfig()
    for group in (Selection(), EngineLimits(), Output()):
        for f in fields(group):
            assert getattr(defaults, f.name) == getattr(group, f.name), f.name


def test_the_default_suite_is_whatever_the_installed_plugin_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from callbench.cli.main import main

    monkeypatch.setattr(catalog(), "default_suite", "starter")
    api = callbench.evaluate(
        model="oracle", selection=Selection(limit=1), output=Output(out_dir=tmp_path / "api")
    )
    cli = ["run", "-m", "oracle", "--limit", "1", "--out", str(tmp_path / "cli"), "--progress", "quiet"]
    assert main(cli) == 0
    for run_dir in (api.run_dir, tmp_path / "cli"):
        assert [s.spec for s in read_header(run_dir).suites] == ["starter"]
    monkeypatch.setattr(catalog(), "default_suite", None)
    with pytest.raises(UserError, match="no default suite is installed"):
        callbench.evaluate(model="oracle", output=Output(out_dir=tmp_path / "none"))


def test_progress_is_quiet_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    callbench.evaluate(
        "starter", "oracle", selection=Selection(limit=1), output=Output(out_dir=tmp_path / "q")
    )
    assert capsys.readouterr().err == "" and not (tmp_path / "q" / "live.json").exists()
    callbench.evaluate(
        "starter",
        "oracle",
        selection=Selection(limit=1),
        output=Output(out_dir=tmp_path / "p", progress="plain"),
    )
    assert "starter:" in capsys.readouterr().err
    assert json.loads((tmp_path / "p" / "live.json").read_text())["finished"]
