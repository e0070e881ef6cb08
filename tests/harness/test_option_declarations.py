"""Each run option declared once (issue 27, item 9): the CLI's parameters, the config fields and their
defaults, the resume rules and the API's keywords all come from ``callbench.types.run_options``, and
whatever could drift from it is held to it here."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest
import typer

import callbench.harness.config as config_module
from callbench.api import RunOptions
from callbench.cli.run import RUN_PARAMETERS, run
from callbench.errors import UserError
from callbench.harness.config import RunConfig, config_to_dict
from callbench.harness.prepare import check_resume_config
from callbench.types.messages import GenerationSettings
from callbench.types.run_options import (
    FLAGS,
    OPTIONS,
    OVERRIDABLE_FIELDS,
    RUN_OPTIONS,
    UNRECORDED_FIELDS,
    VERDICT_FIELDS,
    RunOption,
)

# A value other than the default for every option a resume compares; a new option must add one here,
# which is the point: its resume rule is then exercised below.
OTHER_VALUES: dict[str, Any] = {
    "suites": ("genomics",),
    "model": "refuse",
    "agent": "cmd:echo",
    "tiers": ("native-function-contract",),
    "harness_mode": "oracle-assisted",
    "k": 3,
    "executor": "contract",
    "data": "elsewhere",
    "registry": "tools-elsewhere",
    "tools": "mcp:stdio:server",
    "tools_isolation": "shared",
    "user_model": "oracle",
    "user_seed": 5,
    "user_temperature": 0.7,
    "shuffle": 7,
    "record": "cassette",
    "replay": "cassette",
    "replay_miss": "model-visible",
    "agent_model_proxy": {"openai": "http://127.0.0.1:9/v1"},
    "agent_otel": True,
    "suite_options": {"size": "small"},
    "case_ids": ("a",),
    "limit": 2,
    "trials": 3,
    "case_timeouts": {"*": 30.0},
    "recover_text_calls": True,
    "size_limits": {"reply": "2MB"},
    "concurrency": 3,
    "delay_s": 0.5,
    "rpm": 60.0,
    "tpm": 1000.0,
    "max_connections": 2,
    "max_retries": 1,
    "max_retry_time_s": 10.0,
    "request_timeout_s": 30.0,
    "cache": False,
    "cache_path": "cache.sqlite",
    "price_table": "prices.yaml",
    "temperature": 0.7,
    "max_tokens": 512,
    "seed": 7,
    "reasoning_effort": "low",
    "thinking_budget": 100,
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "stream": True,
}


def test_every_config_field_is_declared_and_its_default_comes_from_the_declaration() -> None:
    own = {f.name: f for f in dataclasses.fields(RunConfig)}
    declared = {o.name for o in RUN_OPTIONS if o.group != "generation"}
    assert set(own) - {"settings"} == declared
    defaults = RunConfig()
    for name in declared:
        assert getattr(defaults, name) == OPTIONS[name].default, name
        assert own[name].metadata["option"] is OPTIONS[name]
    settings = GenerationSettings()
    for option in RUN_OPTIONS:
        if option.group == "generation":
            assert getattr(settings, option.name) == option.default


def test_a_declaration_without_its_field_or_a_field_without_a_declaration_fails_at_import(
    monkeypatch,
) -> None:
    stray = RunOption("warp_speed", "limits", "--warp-speed", help="Go faster.", default=1, cli_type=int)
    monkeypatch.setattr(config_module, "RUN_OPTIONS", (*RUN_OPTIONS, stray))
    monkeypatch.setitem(config_module.OPTIONS, "warp_speed", stray)
    with pytest.raises(AssertionError, match="'warp_speed' is declared in 'limits' but has no field"):
        config_module._check_declarations()
    monkeypatch.undo()
    monkeypatch.setattr(config_module, "OPTIONS", {k: v for k, v in OPTIONS.items() if k != "concurrency"})
    monkeypatch.setattr(
        config_module, "RUN_OPTIONS", tuple(o for o in RUN_OPTIONS if o.name != "concurrency")
    )
    with pytest.raises(AssertionError, match="field 'concurrency' \\(limits\\) is not a declared run option"):
        config_module._check_declarations()


def test_the_run_command_takes_every_declared_flag_with_its_help_and_default() -> None:
    parameters = inspect.signature(run).parameters
    assert list(parameters)[1:] == list(RUN_PARAMETERS)
    command = typer.main.get_command(_app())
    by_name = {p.name: p for p in command.params}
    for option in RUN_OPTIONS:
        if option.flag is None:
            assert option.name not in by_name
            continue
        param = by_name[option.name]
        assert option.flag in param.opts, option.name
        assert param.help == option.help
        if option.short:
            assert option.short in param.opts
        if not param.multiple:
            assert param.default == option.shown_default, option.name


def test_the_api_keywords_are_the_declared_options() -> None:
    keywords = set(typing.get_type_hints(RunOptions))
    groups = {o.name for o in RUN_OPTIONS if o.group in ("selection", "limits", "output")}
    assert keywords == groups | {"settings", "harness_mode", "agent"}


def test_the_resume_lists_are_the_declared_rules() -> None:
    recorded = set(config_to_dict(RunConfig()))
    assert not recorded & set(UNRECORDED_FIELDS)
    assert set(VERDICT_FIELDS) | set(OVERRIDABLE_FIELDS) <= recorded
    assert all(OPTIONS[name].changes_verdicts for name in VERDICT_FIELDS)
    assert not any(OPTIONS[name].changes_verdicts for name in OVERRIDABLE_FIELDS)
    assert FLAGS["concurrency"] == "--concurrency" and FLAGS["timeout_s"] == "--request-timeout"


@pytest.mark.parametrize("option", [o for o in RUN_OPTIONS if o.on_resume in ("must-match", "may-override")])
def test_a_resume_refuses_exactly_the_options_that_change_verdicts(option: RunOption, tmp_path: Path) -> None:
    """Each recorded option, given another value on resume, is refused when it changes verdicts and
    listed as an override otherwise: the rule comes from its declaration alone."""
    base = RunConfig(suites=("starter",), model="baseline")
    recorded = config_to_dict(base)
    value = OTHER_VALUES[option.name]
    if option.group == "generation":
        changed = dataclasses.replace(base, settings=base.settings.model_copy(update={option.name: value}))
    else:
        changed = dataclasses.replace(base, **{option.name: value})
    if option.changes_verdicts:
        with pytest.raises(UserError, match=f"cannot resume: {option.flag or option.name}"):
            check_resume_config(tmp_path, recorded, changed)
    else:
        overrides = check_resume_config(tmp_path, recorded, changed)
        assert list(overrides) == [option.name]


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("run")(run)
    return app


def test_the_readmes_resume_lists_are_the_declared_ones() -> None:
    """README's "Resuming a run" names the options that must match and those a resume may change."""
    import re

    text = " ".join((Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split())
    must = text[
        text.index("Options that would change verdicts") : text.index("must match, or the resume stops")
    ]
    may = text[
        text.index("Options that cannot change a verdict") : text.index("`run.json` keeps how the run")
    ]
    flags = re.compile(r"`(--[a-z-]+)`")
    expected_must = {o.flag for o in RUN_OPTIONS if o.on_resume == "must-match"}
    expected_may = {o.flag for o in RUN_OPTIONS if o.on_resume == "may-override" and o.flag}
    assert set(flags.findall(must)) == expected_must
    assert set(flags.findall(may)) == expected_may
