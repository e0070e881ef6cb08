"""Case conversion on a tiny synthetic data folder (no external data needed)."""

from __future__ import annotations

from callbench.benchmarks.codexomics.cases import CaseOptions
from callbench.benchmarks.codexomics.suite import import_codexomics
from callbench.types.case import Case


def run(mini_data, **options):
    return import_codexomics(
        [mini_data / "mini_simple.json", mini_data / "mini_complex.json"],
        mini_data / "tools_registry",
        options=CaseOptions(**options),
    )


def by_id(result):
    return {c["id"]: c for c in result.cases}


def test_cases_import_and_problems_are_reported_not_raised(mini_data):
    result = run(mini_data)
    cases = by_id(result)
    assert sorted(cases) == [
        "mini_complex:nav_01",
        "mini_complex:tabs_02",
        "mini_simple:export_01",
        "mini_simple:nav_01",
        "mini_simple:tab_01",
    ]
    errors = {p.where: p.message for p in result.problems if p.severity == "error"}
    assert "missing 'expectedResult'" in errors["mini_simple:broken"]
    assert "no_such_tool" in errors["mini_complex:alt_03"]
    assert not any("declares" in p.message for p in result.problems)  # case_count 4 matches
    for case in result.cases:
        Case.model_validate(case)


def test_ids_are_keyed_on_suite_and_metadata_keeps_the_upstream_id(mini_data):
    cases = by_id(run(mini_data))
    assert cases["mini_simple:nav_01"]["metadata"]["upstream_id"] == "nav_01"
    assert cases["mini_complex:nav_01"]["metadata"]["suite_id"] == "mini_complex"
    assert len(cases["mini_simple:nav_01"]["metadata"]["prompt_sha256"]) == 64


def test_timeout_repeat_count_and_call_only(mini_data):
    cases = by_id(run(mini_data))
    assert cases["mini_simple:nav_01"]["timeout_s"] == 15.0
    assert cases["mini_simple:tab_01"]["expected"][0]["times"] == 3
    assert cases["mini_simple:export_01"]["expected"][0]["call_only"] is True


def test_required_keys_not_named_become_optional_with_an_example(mini_data):
    step = by_id(run(mini_data))["mini_simple:nav_01"]["expected"][0]
    assert step["arguments"]["start"] == 100
    options = step["arguments"]["chromosome"]["$one_of"]
    assert options[0] == {"$any": True, "example": "U00096"} and options[1] == {"$default": None}


def test_key_aliases_renamed_missing_keys_added_and_enum_widened(mini_data):
    result = run(mini_data)
    args = by_id(result)["mini_simple:export_01"]["expected"][0]["arguments"]
    assert args == {"filePath": "./test_data/x.fa", "format": "fasta", "newKey": 3}
    contract = result.contracts["export_fasta"]
    assert contract["parameters"]["properties"]["newKey"]["type"] == "integer"
    assert "fasta" in contract["parameters"]["properties"]["format"]["enum"]
    messages = [p.message for p in result.problems]
    assert any("'filename' renamed" in m for m in messages)
    assert any("'newKey' missing from the contract" in m for m in messages)
    assert any("widened" in m for m in messages)


def test_order_free_groups_are_contiguous_runs(mini_data):
    case = by_id(run(mini_data))["mini_complex:nav_01"]
    assert case["order_free"] == [["step2", "step3"]]
    assert case["expected"][1]["arguments"]["track_name"] == {"$one_of": ["gc_content", "gc"]}


def test_references_faithful_by_default_and_resolved_on_request(mini_data):
    faithful = by_id(run(mini_data))["mini_complex:tabs_02"]["expected"][1]["arguments"]["tab_id"]
    assert faithful["$any"] is True
    resolved = by_id(run(mini_data, resolve_refs=True))["mini_complex:tabs_02"]["expected"][1]["arguments"]
    assert resolved["tab_id"] == {"$ref": "open_new_tab.tab_id"}


def test_root_any_of_hint_keeps_scoring_unchanged(mini_data):
    args = by_id(run(mini_data))["mini_complex:tabs_02"]["expected"][2]["arguments"]
    assert args["$one_of"][-1] == {} and "tab_id" in args["$one_of"][0]


def test_hoisted_required_and_repaired_yaml_reported(mini_data):
    result = run(mini_data)
    assert result.contracts["switch_to_tab"]["parameters"]["required"] == ["tab_id"]
    assert any(p.where == "sequence/digest.yaml" and "repaired" in p.message for p in result.problems)


def test_required_key_spelled_differently_is_renamed_to_the_required_spelling():
    from callbench.benchmarks.codexomics.finish import finish_case

    contracts = {
        "toggle_track": {
            "parameters": {
                "type": "object",
                "required": ["track_name"],
                "properties": {
                    "track_name": {"type": "string", "enum": ["gc", "gc_content", "variants"]},
                    "trackName": {"type": "string"},
                    "visible": {"type": "boolean"},
                },
            }
        }
    }
    case = {
        "id": "s:t",
        "expected": [
            {
                "id": "toggle_track",
                "tool": "toggle_track",
                "arguments": {"trackName": "gc_content", "visible": False},
            }
        ],
    }
    problems: list = []
    finish_case(case, contracts, problems)
    args = case["expected"][0]["arguments"]
    assert args == {"track_name": {"$one_of": ["gc_content", "gc"]}, "visible": False}
    assert "renamed to the required 'track_name'" in problems[0].message


def test_a_contract_with_a_broken_schema_is_dropped_and_its_cases_reported(mini_data):
    (mini_data / "tools_registry" / "navigation" / "open_new_tab.yaml").write_text(
        "name: open_new_tab\nparameters:\n  type: object\n  properties:\n    n: {type: array, items: [1]}\n"
    )
    result = run(mini_data)
    assert "open_new_tab" not in result.contracts
    errors = {p.where: p.message for p in result.problems if p.severity == "error"}
    assert "contract invalid after conversion" in errors["navigation/open_new_tab.yaml"]
    assert "open_new_tab have no valid contract" in errors["mini_simple:tab_01"]
    assert "mini_complex:tabs_02" in errors and "mini_simple:nav_01" in by_id(result)


def test_malformed_suites_and_cases_are_reported_never_raised(mini_data):
    import json

    junk = [
        None,
        1,
        "x",
        {"id": 5},
        {"id": "a", "instruction": "i", "expectedResult": {"tool_sequence": [1]}},
        {"id": "b", "instruction": "i", "expectedResult": {"tool_name": "open_new_tab", "parameters": [1]}},
        {
            "id": "c",
            "instruction": "i",
            "expectedResult": {"tool_sequence": ["open_new_tab"], "parameters": [{}, {}]},
        },
        {
            "id": "d",
            "instruction": "i",
            "expectedResult": {"tool_name": "open_new_tab", "parameters": {"benchmarkAnyOf": 3}},
        },
    ]
    (mini_data / "junk.json").write_text(json.dumps(junk))
    (mini_data / "broken.json").write_text("{not json")
    (mini_data / "nocases.json").write_text('{"suite_id": "x"}')
    result = import_codexomics(
        [mini_data / "junk.json", mini_data / "broken.json", mini_data / "nocases.json"],
        mini_data / "tools_registry",
    )
    assert [c["id"] for c in result.cases] == ["junk:d"]
    errors = [p for p in result.problems if p.severity == "error"]
    assert len(errors) == 9  # 7 junk cases + 2 unreadable files
    assert {p.where for p in errors} >= {"broken.json", "nocases.json", "junk:a", "junk:c"}


def test_declared_key_twins_are_accepted_in_every_tier():
    from callbench.benchmarks.codexomics.aliases import alias_case
    from callbench.scoring.arguments import MatchContext, match_arguments

    contracts = {
        "export": {
            "parameters": {
                "properties": {"filename": {}, "filePath": {}, "dna": {}, "sequence": {}, "level": {}}
            }
        }
    }
    case = {
        "id": "s:e",
        "expected": [
            {
                "id": "export",
                "tool": "export",
                "arguments": {"filename": "a.fa", "sequence": "ATG", "level": {"$default": 2}},
            }
        ],
    }
    problems: list = []
    alias_case(case, contracts, problems)
    expected = case["expected"][0]["arguments"]
    assert expected["level"] == {"$default": 2}
    for actual in ({"filename": "a.fa", "sequence": "ATG"}, {"filePath": "a.fa", "dna": "ATG"}):
        assert match_arguments(expected, actual, MatchContext()) == [], actual
    assert match_arguments(expected, {"filePath": "b.fa", "dna": "ATG"}, MatchContext())
    assert "filename ~ filePath" in problems[0].message
