"""Parameter markers -> argument DSL (no external data needed)."""

from __future__ import annotations

from callbench.benchmarks.codexomics.markers import MarkerContext, convert_value
from callbench.benchmarks.codexomics.rules import SPECIAL_PLACEHOLDERS


def convert(value, **kw):
    ctx = MarkerContext("s:c step 1", **kw)
    return convert_value(value, ctx), ctx.problems


def test_literals_pass_through_unchanged():
    value = {"start": 100000, "name": "x", "flags": [True, 2.5], "nested": {"a": None}}
    assert convert(value)[0] == value


def test_angle_placeholder_becomes_any_with_fixture_example():
    out, _ = convert({"chromosome": "<current_chromosome>", "x": "<something_else>"})
    assert out["chromosome"] == {"$any": True, "example": "U00096"}
    assert out["x"] == {"$any": True}


def test_special_placeholders_are_pattern_checked():
    out, _ = convert({"id": "<created_annotation_id>", "db": "<created_protein_database>"})
    assert out["id"]["$pattern"] == SPECIAL_PLACEHOLDERS["created_annotation_id"]
    assert out["db"]["$pattern"] == SPECIAL_PLACEHOLDERS["created_protein_database"]


def test_protein_database_pattern_wants_a_protein_token():
    import re

    pattern = re.compile(SPECIAL_PLACEHOLDERS["created_protein_database"])
    assert pattern.search("Ecoli_protein") and pattern.search("prot-db") and pattern.search("PROTEIN")
    assert not pattern.search("proteome") and not pattern.search("ecoli_nucl")


def test_annotation_id_pattern():
    import re

    pattern = re.compile(SPECIAL_PLACEHOLDERS["created_annotation_id"])
    assert pattern.search("user_17_ab12") and not pattern.search("regulatory_region_A")


def test_references_are_any_by_default_faithful_to_the_original():
    out, problems = convert(
        {"dna": "{get_sequence.sequence}", "s": "{{design_primers.forward.genomicStart}}"},
        earlier_tools=[["get_sequence"], ["design_primers"]],
    )
    assert out == {"dna": {"$any": True}, "s": {"$any": True}}
    assert problems == []


def test_references_resolve_to_ref_when_asked_and_resolvable():
    out, problems = convert(
        {"dna": "{get_sequence.sequence}"},
        earlier_tools=[["navigate_to_position"], ["get_sequence"]],
        resolve_refs=True,
        ref_resolver=lambda i, t, p: f"step{i + 1}.{p}",
    )
    assert out == {"dna": {"$ref": "step2.sequence"}}
    assert problems == []


def test_unresolvable_reference_stays_any_and_is_reported():
    out, problems = convert(
        {"x": "{add_task.id}"},
        earlier_tools=[["list_tasks"]],
        resolve_refs=True,
        ref_resolver=lambda i, t, p: None,
    )
    assert out == {"x": {"$any": True}}
    assert "names no earlier step" in problems[0].message
    out, problems = convert(
        {"x": "{add_task.id}"},
        earlier_tools=[["add_task"]],
        resolve_refs=True,
        ref_resolver=lambda i, t, p: None,
    )
    assert out == {"x": {"$any": True}} and "cannot be resolved" in problems[0].message


def test_schema_default_marker():
    out, _ = convert({"reading_frame": {"benchmarkDefaultValue": 1}})
    assert out == {"reading_frame": {"$default": 1}}


def test_any_of_sits_next_to_sibling_keys():
    out, _ = convert(
        {"mode": "visible", "benchmarkAnyOf": [{"target": "visible_tracks"}, {"target": "tracks"}]}
    )
    assert out == {"mode": "visible", "$one_of": [{"target": "visible_tracks"}, {"target": "tracks"}]}


def test_any_of_alone_and_nested_inside_lists():
    value = {
        "updates": [
            {
                "benchmarkAnyOf": [{"identifier": "a"}, {"identifier": "<created_annotation_id>"}],
                "updates": {"benchmarkAnyOf": [{"note": "n"}, {"description": "n"}]},
            }
        ]
    }
    out, _ = convert(value)
    item = out["updates"][0]
    assert item["$one_of"][0] == {"identifier": "a"}
    assert "$pattern" in item["$one_of"][1]["identifier"]
    assert item["updates"] == {"$one_of": [{"note": "n"}, {"description": "n"}]}


def test_malformed_any_of_is_reported_not_raised():
    out, problems = convert({"a": 1, "benchmarkAnyOf": []})
    assert out == {"a": 1}
    assert problems and problems[0].severity == "warning"
