"""The option groups of a run: every bad value is one ``ConfigError`` line naming the field (and
its CLI flag) before anything runs; good values are normalised."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import callbench
from callbench.errors import ConfigError
from callbench.harness.config import (
    OBJECT_SPEC,
    EngineLimits,
    OptionError,
    Output,
    RunConfig,
    Selection,
    config_from_dict,
)

BAD_GROUPS = [
    (Selection, {"trials": 0}, r"Selection\.trials \(--trials\) must be an integer of at least 1, got 0"),
    (Selection, {"limit": -1}, r"Selection\.limit \(--limit\) must be an integer of at least 0 or None"),
    (Selection, {"k": 0}, r"Selection\.k \(--k\) must be a positive integer or .all. or None, got 0"),
    (Selection, {"k": "most"}, r"Selection\.k \(--k\) .* got 'most'"),
    (Selection, {"k": True}, r"Selection\.k"),
    (Selection, {"case_ids": [1]}, r"Selection\.case_ids \(--case\) must be a list of non-empty strings"),
    (Selection, {"executor": ""}, r"Selection\.executor \(--executor\)"),
    (Selection, {"suite_options": ["a=b"]}, r"Selection\.suite_options \(--option\) must be a mapping"),
    (Selection, {"data": 3}, r"Selection\.data \(--data\) must be a path or None, got 3"),
    (EngineLimits, {"concurrency": 0}, r"EngineLimits\.concurrency \(--concurrency\) must be an integer"),
    (EngineLimits, {"concurrency": 2.5}, r"EngineLimits\.concurrency"),
    (EngineLimits, {"delay_s": -1}, r"EngineLimits\.delay_s \(--delay\) must be a number of at least 0"),
    (EngineLimits, {"rpm": 0}, r"EngineLimits\.rpm \(--rpm\) must be a positive number or None, got 0"),
    (EngineLimits, {"tpm": float("inf")}, r"EngineLimits\.tpm \(--tpm\)"),
    (EngineLimits, {"max_connections": 0}, r"EngineLimits\.max_connections \(--max-connections\)"),
    (EngineLimits, {"max_retries": -1}, r"EngineLimits\.max_retries \(--max-retries\)"),
    (EngineLimits, {"max_retry_time_s": float("nan")}, r"EngineLimits\.max_retry_time_s \(--max-retry-"),
    (EngineLimits, {"request_timeout_s": 0}, r"EngineLimits\.request_timeout_s \(--request-timeout\)"),
    (EngineLimits, {"cache": "yes"}, r"EngineLimits\.cache \(--no-cache\) must be True or False, got 'yes'"),
    (EngineLimits, {"price_table": ""}, r"EngineLimits\.price_table \(--price-table\) must be a path"),
    (Output, {"progress": "loud"}, r"Output\.progress \(--progress\) must be one of auto, rich, plain, q"),
    (Output, {"watch": 1}, r"Output\.watch \(--watch\) must be True or False"),
    (Output, {"runs_root": None}, r"Output\.runs_root must be a path, got None"),
    (Output, {"resume": True}, r"Output\.resume needs Output\.out_dir"),
]


@pytest.mark.parametrize(
    ("group", "values", "message"),
    BAD_GROUPS,
    ids=[f"{g.__name__}-{next(iter(v))}" for g, v, _ in BAD_GROUPS],
)
def test_a_bad_option_is_one_line_naming_the_field(group: type, values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        group(**values)
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match=message):  # the flat config checks the same way
        RunConfig(**values)


BAD_CALLS = [
    ({"selection": {"limit": 1}}, r"selection must be a callbench\.Selection, got dict"),
    ({"limits": Selection()}, r"limits must be a callbench\.EngineLimits, got Selection"),
    ({"model": 42}, r"model must be a model string .* or a Provider object, got 42"),
    ({"model": " "}, r"model must be a model string"),
    ({"suite": 7}, r"suites must be a suite spec or a Suite object or a list of them, got int"),
    ({"suite": ["starter", None]}, r"suite must be a suite spec or a Suite object, got None"),
    ({"tiers": [3]}, r"tier must be a scorer name or a scorer factory, got 3"),
    (
        {"mode": "turbo"},
        r"unknown harness mode .turbo. \(one of production-parity, oracle-assisted, agent-under-test\)",
    ),
    ({"generation": {"temperature": "hot"}}, r"GenerationSettings\.temperature: .* \(got 'hot'\)"),
    ({"generation": {"colour": 1}}, r"GenerationSettings\.colour: Extra inputs are not permitted"),
    ({"generation": {"temperature": -1}}, r"GenerationSettings\.temperature \(--temperature\) must be a nu"),
    ({"generation": {"temperature": 2.1}}, r"GenerationSettings\.temperature .* from 0 to 2, got 2\.1"),
    ({"generation": {"max_tokens": 0}}, r"GenerationSettings\.max_tokens \(--max-tokens\) must be an integ"),
    ({"generation": {"seed": -3}}, r"GenerationSettings\.seed \(--seed\) must be an integer from 0"),
    ({"generation": {"reasoning_effort": "max"}}, r"GenerationSettings\.reasoning_effort .* one of none, "),
    ({"generation": {"thinking_budget": 0}}, r"GenerationSettings\.thinking_budget \(--thinking-budget\)"),
    ({"generation": {"timeout_s": 0}}, r"GenerationSettings\.timeout_s \(--request-timeout\) must be a po"),
]


@pytest.mark.parametrize(
    ("kwargs", "message"), BAD_CALLS, ids=[f"{next(iter(k))}{i}" for i, (k, _) in enumerate(BAD_CALLS)]
)
def test_evaluate_refuses_bad_arguments_before_running(
    tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    kwargs = {"suite": "starter", "model": "oracle", "output": Output(out_dir=tmp_path / "r"), **kwargs}
    with pytest.raises(ConfigError, match=message) as caught:
        callbench.evaluate(**kwargs)
    assert "\n" not in str(caught.value) and not (tmp_path / "r").exists()


def test_good_values_are_normalised() -> None:
    selection = Selection(case_ids="weather_paris", k=" ALL ", data="data", suite_options={"n": 1})
    assert (selection.case_ids, selection.k, selection.data) == (("weather_paris",), "all", Path("data"))
    assert Selection(k="12").k == 12
    limits = EngineLimits(cache_path="c.db", price_table=Path("p.yaml"), rpm=30)
    assert (limits.cache_path, limits.price_table, limits.rpm) == (Path("c.db"), Path("p.yaml"), 30)
    config = RunConfig(
        suites="starter",
        tiers="all",
        out_dir="runs/x",
        case_ids=["a"],  # type: ignore[arg-type]
        settings={"max_tokens": 10},
    )  # type: ignore[arg-type]
    assert (config.suites, config.tiers, config.out_dir, config.case_ids) == (
        ("starter",),
        ("all",),
        Path("runs/x"),
        ("a",),
    )
    assert config.settings.max_tokens == 10


def test_from_groups_is_the_flat_config() -> None:
    config = RunConfig.from_groups(
        ["starter"],
        "oracle",
        "all",
        "oracle-assisted",
        selection=Selection(limit=2, k=5),
        limits=EngineLimits(concurrency=3),
        generation={"seed": 7},
        output=Output(out_dir="o", progress="plain"),
    )
    assert config == RunConfig(
        suites=("starter",),
        model="oracle",
        tiers=("all",),
        harness_mode="oracle-assisted",
        limit=2,
        k=5,
        concurrency=3,
        out_dir=Path("o"),
        settings=callbench.GenerationSettings(seed=7),
        progress="plain",
    )
    assert config.groups() == (
        Selection(limit=2, k=5),
        EngineLimits(concurrency=3),
        Output(out_dir="o", progress="plain"),
    )


def test_a_recorded_config_with_objects_is_not_rebuilt() -> None:
    with pytest.raises(ConfigError, match=r"held Python objects \(suites, model\)"):
        config_from_dict({"suites": [OBJECT_SPEC, "starter"], "model": OBJECT_SPEC})
    assert config_from_dict({"suites": ["starter"], "model": "oracle"}, limit=1).limit == 1


def test_a_bad_option_names_the_command_line_option_alone_for_the_cli() -> None:
    with pytest.raises(OptionError) as caught:
        EngineLimits(concurrency=-5)
    assert caught.value.cli_message() == "--concurrency must be an integer of at least 1 (got -5)"
    with pytest.raises(OptionError) as caught:
        EngineLimits(rpm=0.0)
    assert caught.value.cli_message() == "--rpm must be a positive number (got 0)"  # no "or None" for a flag
    with pytest.raises(OptionError) as caught:
        callbench.GenerationSettings(temperature=-0.5) and RunConfig(settings={"temperature": -0.5})
    assert caught.value.cli_message() == "--temperature must be a number from 0 to 2 (got -0.5)"
