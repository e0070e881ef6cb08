"""Generation controls and case limits from the command line (issue 25, item 3): each is checked before
anything runs, recorded in ``run.json``, and refused by ``--resume`` when it would change verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

import callbench
from callbench.errors import ConfigError, UserError
from callbench.harness.config import OptionError, RunConfig, Selection, case_time_limit
from callbench.harness.engine import with_time_limit
from callbench.harness.prepare import check_resume_config, resume_config
from callbench.harness.runfolder import read_header, read_records
from callbench.types.case import Case
from callbench.types.messages import GenerationSettings
from callbench.types.run_options import parse_case_timeouts, parse_on_off


def test_case_timeouts_parse_per_suite_and_for_all() -> None:
    assert parse_case_timeouts(["600"]) == {"*": 600.0}
    assert parse_case_timeouts(["300", "genomics=900"]) == {"*": 300.0, "genomics": 900.0}
    # A suite spec may itself hold '=' (dag:n_core=5): only the last '=' splits.
    assert parse_case_timeouts(["dag:n_core=5=30"]) == {"dag:n_core=5": 30.0}
    for bad, says in [
        ("soon", "'soon' is not a number"),
        ("0", "positive number of seconds"),
        ("-5", "positive number of seconds"),
        ("nan", "positive number of seconds"),
        ("=30", "SECONDS or SUITE=SECONDS"),
        ("starter=", "is not a number"),
    ]:
        with pytest.raises(ConfigError, match=says):
            parse_case_timeouts([bad])


def test_the_suite_limit_wins_over_the_general_one_which_replaces_the_cases_own() -> None:
    limits = {"*": 300.0, "genomics": 900.0}
    assert case_time_limit(limits, "genomics", 15.0) == 900.0
    assert case_time_limit(limits, "starter", 15.0) == 300.0
    assert case_time_limit({}, "starter", 15.0) == 15.0
    config = RunConfig(suites=("starter",), case_timeouts={"starter": 7.5})
    case = Case(id="c", instruction="x", timeout_s=120.0)
    assert with_time_limit(case, "starter", config).timeout_s == 7.5
    assert with_time_limit(case, "other", config) is case  # untouched when no limit applies
    with pytest.raises(OptionError, match="case_timeouts"):
        Selection(case_timeouts={"starter": 0})


def test_on_off_takes_the_usual_spellings_and_names_the_flag() -> None:
    assert parse_on_off("ON", "--x") is True and parse_on_off("off", "--x") is False
    with pytest.raises(ConfigError, match=r"--parallel-tool-calls must be on or off \(got 'maybe'\)"):
        parse_on_off("maybe", "--parallel-tool-calls")


def test_a_thinking_budget_must_leave_room_for_the_answer() -> None:
    with pytest.raises(OptionError) as caught:
        RunConfig(settings=GenerationSettings(max_tokens=4096, thinking_budget=4096))
    assert caught.value.cli_message() == (
        "--thinking-budget must be below --max-tokens (4096): the thinking budget is part of max tokens "
        "(got 4096)"
    )
    RunConfig(settings=GenerationSettings(max_tokens=4096, thinking_budget=2048))  # fine
    with pytest.raises(OptionError, match="tool_choice"):
        RunConfig(settings=GenerationSettings(tool_choice=" "))


def test_controls_are_recorded_and_a_resume_refuses_changes_that_alter_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "r"
    # stream stays off: a built-in agent does not stream (--stream is refused for it before the run)
    settings = GenerationSettings(tool_choice="required", parallel_tool_calls=False)
    callbench.run(
        "starter",
        "oracle",
        out_dir=out,
        progress="quiet",
        limit=2,
        settings=settings,
        case_timeouts={"*": 45.0},
        recover_text_calls=True,
    )
    recorded = read_header(out).options["config"]
    assert recorded["case_timeouts"] == {"*": 45.0} and recorded["recover_text_calls"] is True
    assert recorded["settings"]["tool_choice"] == "required"
    assert recorded["settings"]["parallel_tool_calls"] is False and recorded["settings"]["stream"] is False
    assert "preflight" not in recorded  # how a run starts, not what it measures
    assert all(r.status == "completed" for r in read_records(out))
    assert check_resume_config(out, recorded, resume_config(out)) == {}
    refusals = [
        ({"case_timeouts": {"*": 60.0}}, r"--case-timeout \(case_timeouts\) was \{'\*': 45.0\}"),
        ({"recover_text_calls": False}, r"--recover-text-calls was True"),
    ]
    for overrides, says in refusals:
        with pytest.raises(UserError, match=says):
            check_resume_config(out, recorded, resume_config(out, **overrides))
    for generation, says in [
        ({"tool_choice": "auto"}, r"--tool-choice was 'required'"),
        ({"parallel_tool_calls": True}, r"--parallel-tool-calls was False"),
        ({"stream": True}, r"--stream was False"),
    ]:
        with pytest.raises(UserError, match=says):
            check_resume_config(out, recorded, resume_config(out, generation=generation))
