"""Sweep files: the cells a good file makes, and one line naming file, line and field for every bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from callbench.errors import UserError
from callbench.harness.sweep.spec import parse_sweep, read_sweep
from callbench.harness.sweep.yaml_lines import SweepError

GOOD = """\
name: small-models
models:
  - oracle
  - {model: noisy:3, label: noisy, settings: {temperature: 0.2}}
suites: [starter, genomics-simple]
modes: [production-parity, oracle-assisted]
trials: 2
settings: {max_tokens: 1024, seed: 7}
limit: 2
concurrency: 4
"""


def parse(text: str) -> object:
    return parse_sweep(Path("sw.yaml"), text)


def test_good_file_makes_one_cell_per_model_and_mode() -> None:
    spec = parse_sweep(Path("sw.yaml"), GOOD)
    assert spec.name == "small-models"
    assert [c.id for c in spec.cells] == [
        "oracle--production-parity",
        "oracle--oracle-assisted",
        "noisy--production-parity",
        "noisy--oracle-assisted",
    ]
    noisy = spec.cells[2]
    assert noisy.model == "noisy:3" and noisy.mode == "production-parity"
    assert noisy.suites == ("starter", "genomics-simple") and noisy.trials == 2
    # the entry's settings over the sweep's defaults; the rest are RunConfig's
    config = noisy.config()
    assert (config.settings.temperature, config.settings.max_tokens, config.settings.seed) == (0.2, 1024, 7)
    assert (config.limit, config.concurrency, config.harness_mode) == (2, 4, "production-parity")
    assert spec.cells[0].config().settings.temperature == 0.0


def test_name_defaults_to_the_file_stem_and_modes_to_production_parity() -> None:
    spec = parse_sweep(Path("dir/nightly.yaml"), "models: [oracle]\nsuites: [starter]\n")
    assert spec.name == "nightly" and [c.mode for c in spec.cells] == ["production-parity"]


def test_hash_ignores_pacing_but_not_settings() -> None:
    base = parse_sweep(Path("a.yaml"), GOOD).hash
    assert parse_sweep(Path("b.yaml"), GOOD.replace("concurrency: 4", "concurrency: 1")).hash == base
    assert parse_sweep(Path("b.yaml"), GOOD.replace("seed: 7", "seed: 8")).hash != base


BAD = [
    # (what the careless user wrote, replacing what, the error line)
    ("trials: 2", "trails: 2", "sw.yaml:7: field 'trails': unknown key 'trails' (did you mean 'trials'"),
    (
        "  - oracle",
        "  - opneai:gpt-4o",
        "sw.yaml:3: field 'models[0]': unknown provider 'opneai' (did you mean 'openai'?)",
    ),
    (
        "  - oracle",
        "  - gpt-4o",
        "sw.yaml:3: field 'models[0]': unknown model 'gpt-4o': write PROVIDER:MODEL",
    ),
    ("  - oracle", "  - noisy:x", "sw.yaml:3: field 'models[0]': noisy agent: seed must be an integer"),
    (
        "[starter, genomics-simple]",
        "[starter, genomic-simple]",
        "sw.yaml:5: field 'suites[1]': unknown suite 'genomic-simple' (did you mean 'genomics-simple'",
    ),
    (
        "[starter, genomics-simple]",
        "[starter, ./no/such/cases.yaml]",
        "sw.yaml:5: field 'suites[1]': suite file or folder not found: './no/such/cases.yaml'",
    ),
    (
        "[starter, genomics-simple]",
        "[starter, starter]",
        "sw.yaml:5: field 'suites[1]': 'starter' is listed twice",
    ),
    (
        "oracle-assisted]",
        "oracle-asisted]",
        "sw.yaml:6: field 'modes[1]': unknown harness mode 'oracle-asisted' (did you mean",
    ),
    (
        "oracle-assisted]",
        "agent-under-test]",
        "sw.yaml:6: field 'modes[1]': agent-under-test needs an agent entry in models: {agent: SPEC}",
    ),
    ("trials: 2", "trials: 0", "sw.yaml:7: field 'trials': must be an integer of at least 1, got 0"),
    (
        "  - oracle\n",
        "  - oracle\n  - {model: oracle}\n",
        "sw.yaml:4: field 'models[1]': duplicate cell: the same model, mode and settings as models[0]",
    ),
    (
        "label: noisy, ",
        "label: oracle, ",
        "sw.yaml:4: field 'models[1]': duplicate cell id 'oracle--production-parity' (also models[0]",
    ),
    (
        "temperature: 0.2",
        "temperature: 7",
        "sw.yaml:4: field 'models[1].settings.temperature': temperature must be a number from 0 to 2 (got 7)",
    ),
    (
        "seed: 7",
        "seed: -1",
        "sw.yaml:8: field 'settings.seed': seed must be an integer from 0 to 2**63-1 (got -1)",
    ),
    (
        "max_tokens: 1024",
        "max_token: 1024",
        "sw.yaml:8: field 'settings.max_token': unknown generation setting 'max_token' (did",
    ),
    ("limit: 2", "limit: -1", "sw.yaml:9: field 'limit': limit must be an integer of at least 0 (got -1)"),
    (
        "concurrency: 4",
        "concurrency: 0",
        "sw.yaml:10: field 'concurrency': concurrency must be an integer of at least 1 (got 0)",
    ),
    (
        "concurrency: 4",
        "concurrency: 4\nk: zero",
        "sw.yaml:11: field 'k': k must be a positive integer or 'all' (got 'zero')",
    ),
    (
        "concurrency: 4",
        "concurrency: 4\nlimit: 3",
        "sw.yaml:11: field 'limit': given twice (first on line 9)",
    ),
    (
        "concurrency: 4",
        "concurrency: 4\ntiers: [strict]",
        "sw.yaml:11: field 'tiers[0]': unknown scorer 'strict'",
    ),
    (
        "  - oracle",
        "  - {agent: 'foo:bar'}",
        "sw.yaml:3: field 'models[0].agent': --agent 'foo:bar': expected cmd:COMMAND",
    ),
    (
        "  - oracle",
        "  - {modle: oracle}",
        "sw.yaml:3: field 'models[0].modle': unknown key 'modle' (did you mean 'model'?)",
    ),
    (
        "  - oracle",
        "  - {label: x}",
        "sw.yaml:3: field 'models[0]': give one of 'model' (a model string) or 'agent'",
    ),
    (
        "  - oracle\n  - {model: noisy:3, label: noisy, settings: {temperature: 0.2}}",
        "  []",
        "sw.yaml:2: field 'models': is empty: give at least one model",
    ),
    (
        "[starter, genomics-simple]",
        "[starter, genomics-simple",
        "sw.yaml:6: not valid YAML: expected ',' or ']'",
    ),
]


@pytest.mark.parametrize(("old", "new", "says"), BAD, ids=[b[2].split(": ", 1)[1][:40] for b in BAD])
def test_bad_input_is_one_line_naming_file_line_and_field(old: str, new: str, says: str) -> None:
    assert old in GOOD
    with pytest.raises(SweepError) as caught:
        parse(GOOD.replace(old, new, 1))
    message = str(caught.value)
    assert message.startswith(says), message
    assert "\n" not in message


def test_a_missing_api_key_is_reported_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no keys file either
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SweepError) as caught:
        parse(GOOD.replace("  - oracle", "  - openai:gpt-4o-mini"))
    assert str(caught.value).startswith(
        "sw.yaml:3: field 'models[0]': missing API key for the openai endpoint"
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "sw.yaml:1: the sweep file is empty"),
        ("- oracle\n", "sw.yaml:1: a sweep file is a mapping of keys"),
        ("suites: [starter]\n", "sw.yaml:1: the sweep file has no 'models' list"),
        ("models: oracle\nsuites: [starter]\n", "sw.yaml:1: field 'models': must be a list of models"),
        (
            "models: [{agent: 'cmd:x', settings: {seed: 1}}]\nsuites: [starter]\nmodes: [agent-under-test]\n",
            "sw.yaml:1: field 'models[0].settings': an agent under test chooses its own generation settings",
        ),
        (
            "models: [oracle]\nsuites: [starter]\nmodes: [agent-under-test, agent-under-test]\n",
            "sw.yaml:3: field 'modes[1]': 'agent-under-test' is listed twice",
        ),
    ],
)
def test_shapes(text: str, says: str) -> None:
    with pytest.raises(SweepError) as caught:
        parse(text)
    assert str(caught.value).startswith(says), str(caught.value)


def test_agent_entries_run_agent_under_test_only() -> None:
    spec = parse(
        "models: [oracle, {agent: 'cmd:python my_agent.py', label: mine}]\n"
        "suites: [starter]\nmodes: [production-parity, agent-under-test]\n"
    )
    assert [(c.id, c.mode) for c in spec.cells] == [  # type: ignore[attr-defined]
        ("oracle--production-parity", "production-parity"),
        ("mine--agent-under-test", "agent-under-test"),
    ]
    config = spec.cells[1].config()  # type: ignore[attr-defined]
    assert (config.agent, config.harness_mode) == ("cmd:python my_agent.py", "agent-under-test")


def test_missing_file_and_folder_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such sweep file: .*nope.yaml"):
        read_sweep(tmp_path / "nope.yaml")
    with pytest.raises(UserError, match="a folder, not a sweep file"):
        read_sweep(tmp_path)


def test_a_duplicate_names_the_line_of_the_first() -> None:
    with pytest.raises(SweepError) as caught:
        parse(GOOD.replace("  - oracle\n", "  - oracle\n  - {model: oracle}\n", 1))
    assert str(caught.value).endswith("as models[0] (line 3); give different settings or remove one")


def test_the_example_sweep_file_parses() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "sweeps" / "small.yaml"
    spec = read_sweep(example)
    assert spec.name == "small" and str(spec.out) == "runs/sweeps/small"
    assert len(spec.cells) == 6 and {c.mode for c in spec.cells} == {"production-parity", "oracle-assisted"}
