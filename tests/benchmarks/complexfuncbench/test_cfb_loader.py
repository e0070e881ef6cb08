import json
from pathlib import Path

import pytest

from callbench.benchmarks.complexfuncbench.data import read_jsonl
from callbench.benchmarks.complexfuncbench.names import NameMap, sanitise
from callbench.benchmarks.complexfuncbench.suite import case_sample, fixture_path, load_suite
from callbench.errors import ConfigError, SuiteError, UserError
from callbench.suites.suite import SuiteOptions


def _line(**over):
    base = json.loads(fixture_path().read_text(encoding="utf-8").splitlines()[0])
    base.update(over)
    return base


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "ComplexFuncBench.jsonl"
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_fixture_covers_the_required_shapes():
    report = read_jsonl(fixture_path())
    assert report.problems == []
    samples = {s.id: s for s in report.samples}
    assert len(samples) >= 8
    assert len(samples["Attraction-0"].steps) == 1  # single step
    assert max(len(step) for s in samples.values() for step in s.steps) >= 2  # parallel step
    assert samples["Hotels-0"].steps[0][0].name == "Search_Hotel_Destination"  # optional look-up
    assert samples["Cross-0"].domain == "Cross"
    assert samples["Car-Rental-0"].domain == "Car-Rental"  # right split keeps the hyphen
    legs = samples["Flights-0"].steps[1][0].arguments["legs"]
    assert len(legs) > 150 and json.loads(legs)[2]["toId"] == "BOM.AIRPORT"
    assert any("(" in f["name"] for f in samples["Hotels-0"].functions)
    assert samples["Hotels-0"].template == samples["Hotels-1"].template == "Hotels/0"
    assert samples["Hotels-10"].template == "Hotels/1"


def test_suite_cases_are_sanitised_reversibly_and_grouped_by_turn():
    suite = load_suite("complexfuncbench:fixture")
    case = next(c for c in suite.cases if c.id == "Hotels-0")
    names = [t.name for t in case.tools]
    assert "Get_Hotel_Reviews-Tips-" in names and not any("(" in n for n in names)
    sample, name_map = case_sample(case)
    assert name_map.original("Get_Hotel_Reviews-Tips-") == "Get_Hotel_Reviews(Tips)"
    assert sample.steps[3][0].name == "Get_Hotel_Reviews(Tips)"
    assert [s.turn for s in case.expected] == [0, 1, 2, 2, 3]
    assert case.template == "Hotels/0" and case.category == "Hotels"
    assert case.max_rounds == 2 * 4 + 5
    assert suite.executor == "replay" and suite.scorers == ["complexeval"]
    assert suite.metadata["complexeval"]["mode"] == "improved"


def test_modes_and_spec_parts():
    faithful = load_suite("complexfuncbench:fixture:faithful")
    assert faithful.metadata["complexeval"]["mode"] == "faithful"
    assert faithful.cases[0].executor_config["mode"] == "faithful"
    assert faithful.cases[0].max_rounds == 50
    with pytest.raises(ConfigError, match="unknown part"):
        load_suite("complexfuncbench:fixture:bogus")
    with pytest.raises(ConfigError, match="mode must be one of"):
        load_suite("complexfuncbench:fixture", SuiteOptions(extra={"mode": "parity"}))


def test_real_data_needs_a_path(tmp_path):
    with pytest.raises(UserError, match="pass --data"):
        load_suite("complexfuncbench")
    with pytest.raises(SuiteError, match="cannot read"):
        load_suite("complexfuncbench", SuiteOptions(data=tmp_path / "missing.jsonl"))


def test_data_path_loads(tmp_path):
    path = _write(tmp_path, [_line()])
    suite = load_suite("complexfuncbench", SuiteOptions(data=path))
    assert [c.id for c in suite.cases] == ["Attraction-0"]
    assert suite.source == str(path)


def test_broken_lines_are_reported_per_line_and_skipped(tmp_path):
    good = _line()
    misaligned = _line(id="Hotels-3")
    misaligned["conversations"][2]["content"] = []  # one call, no response
    no_obs = _line(id="Hotels-4", conversations=good["conversations"][:2] + [good["conversations"][-1]])
    rows = [
        good,
        "{not json",
        _line(id="Hotels"),
        misaligned,
        no_obs,
        _line(id="Attraction-0"),
        _line(id="Flights-1", conversations=[{"role": "assistant", "content": "x"}]),
        _line(id="Flights-2", functions=[{"description": "no name"}]),
        _line(
            id="Flights-3",
            functions=[
                {
                    "name": "f",
                    "parameters": {"type": "object", "required": "x", "properties": {"x": {"type": "str"}}},
                }
            ],
        ),
    ]
    report = read_jsonl(_write(tmp_path, rows))
    assert [s.id for s in report.samples] == ["Attraction-0"]
    problems = report.problems
    assert problems[0].startswith("ComplexFuncBench.jsonl:2: not valid JSON")
    assert "ComplexFuncBench.jsonl:3: field 'id'" in problems[1]
    assert "ComplexFuncBench.jsonl:4: conversations step 0: 1 call(s) but 0 response(s)" == problems[2]
    assert ":5:" in problems[3] and "1 call(s) but no observation turn" in problems[3]
    assert ":6:" in problems[4] and "already used on line 1" in problems[4]
    assert ":7:" in problems[5] and "at least the user query" in problems[5]
    assert ":8:" in problems[6] and "functions[0]" in problems[6]
    assert problems[7].startswith(
        "ComplexFuncBench.jsonl:9: functions[0] (f): invalid JSON Schema at required"
    )


def test_strict_stops_at_first_bad_line_and_empty_file_is_an_error(tmp_path):
    path = _write(tmp_path, [_line(), "[1, 2]"])
    with pytest.raises(SuiteError, match=r"ComplexFuncBench.jsonl:2: line must hold a JSON object"):
        load_suite("complexfuncbench", SuiteOptions(data=path, extra={"strict": True}))
    only_bad = _write(tmp_path, ["{"])
    with pytest.raises(UserError, match="no usable ComplexFuncBench sample; first problem"):
        load_suite("complexfuncbench", SuiteOptions(data=only_bad))


def test_string_encoded_arguments_and_observations_are_accepted(tmp_path):
    row = _line()
    call = row["conversations"][1]["function_call"][0]
    call["arguments"] = json.dumps(call["arguments"])
    row["conversations"][2]["content"] = json.dumps(row["conversations"][2]["content"])
    report = read_jsonl(_write(tmp_path, [row]))
    assert report.problems == []
    assert report.samples[0].steps[0][0].arguments["currency_code"] == "EUR"


def test_name_map_is_reversible_and_collision_free():
    names = ["Get_Hotel_Reviews(Tips)", "Get_Hotel_Reviews-Tips-", "a.b", "x" * 70 + "(1)", "x" * 70 + "(2)"]
    m = NameMap.build(names)
    wires = [m.wire(n) for n in names]
    assert len(set(wires)) == len(names)
    assert all(len(w) <= 64 and sanitise(w) == w for w in wires)
    assert [m.original(w) for w in wires] == names
    assert m.wire("Get_Hotel_Reviews-Tips-") == "Get_Hotel_Reviews-Tips-"  # already safe names keep theirs
    assert m.original("unknown") == "unknown"


def _with_float_param(sample_id="Attraction-0"):
    row = _line(id=sample_id)
    fn = row["functions"][0]
    fn["parameters"]["properties"]["max_price"] = {"type": "float", "description": "Highest price"}
    fn["parameters"]["properties"]["note"] = {"type": "banana", "description": "Anything"}
    return row, fn["name"]


def test_a_schema_with_a_non_json_schema_type_is_repaired_and_reported_not_dropped(tmp_path):
    row, name = _with_float_param()
    path = _write(tmp_path, [row])
    report = read_jsonl(path)
    assert report.problems == [] and [s.id for s in report.samples] == ["Attraction-0"]
    assert report.repairs == [
        (
            f"ComplexFuncBench.jsonl:1: functions[0] ({name}): parameters/properties/max_price/type 'float' "
            "read as 'number'"
        ),
        (
            f"ComplexFuncBench.jsonl:1: functions[0] ({name}): parameters/properties/note/type 'banana' "
            "is not a JSON Schema type: dropped (any value accepted)"
        ),
    ]
    suite = load_suite("complexfuncbench", SuiteOptions(data=path))
    assert suite.metadata["load_repairs"] == report.repairs
    contract = next(t for t in suite.cases[0].tools if t.name == name)
    assert contract.parameters["properties"]["max_price"]["type"] == "number"
    assert "type" not in contract.parameters["properties"]["note"]
    # The sample keeps the functions as the data set writes them (the faithful format check reads
    # those: upstream type-checks no "float" parameter).
    sample, _names = case_sample(suite.cases[0])
    assert sample.functions[0]["parameters"]["properties"]["max_price"]["type"] == "float"


def test_repaired_types_are_checked_as_offered_only_in_improved_mode(tmp_path):
    from callbench.benchmarks.complexfuncbench.definitions import CfbSettings, PredCall
    from callbench.benchmarks.complexfuncbench.embedders import CharNgramEmbedder
    from callbench.benchmarks.complexfuncbench.engine import Episode

    row, name = _with_float_param()
    sample = read_jsonl(_write(tmp_path, [row])).samples[0]
    args = {**sample.steps[0][0].arguments, "max_price": "cheap"}
    statuses = {}
    for mode in ("faithful", "improved"):
        episode = Episode(sample, CfbSettings(mode=mode), CharNgramEmbedder())
        statuses[mode] = episode.play_turn([PredCall(0, name, args)])[0].status
    assert statuses == {"faithful": "mismatch", "improved": "format_error"}


def test_max_rounds_option_overrides_the_round_budget():
    faithful = load_suite("complexfuncbench:fixture:faithful", SuiteOptions(extra={"max_rounds": "200"}))
    assert {c.max_rounds for c in faithful.cases} == {200}
    with pytest.raises(ConfigError, match="max_rounds must be a positive integer, got 'many'"):
        load_suite("complexfuncbench:fixture", SuiteOptions(extra={"max_rounds": "many"}))
    with pytest.raises(ConfigError, match="max_rounds"):
        load_suite("complexfuncbench:fixture", SuiteOptions(extra={"max_rounds": 0}))
