"""Loading YAML contracts tolerantly and annotating them."""

from __future__ import annotations

from pathlib import Path

from callbench.benchmarks.codexomics.contracts import (
    alternative_keys,
    annotate,
    contract_mapping,
    load_registry_dir,
)
from callbench.benchmarks.codexomics.returns import result_schema_from_returns

GOOD = """name: 'virtual_digest'
description: 'Digest; ends are 5\\' overhang or blunt.'
parameters:
  type: 'object'
  properties:
    enzymes: {type: array, items: {type: string}}
  required: ['enzymes']
returns:
  fragments: 'array - Fragments'
  count: 'number - How many'
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_non_strict_yaml_is_repaired_and_reported(tmp_path):
    write(tmp_path, "sequence/virtual_digest.yaml", GOOD)
    problems: list = []
    tools = load_registry_dir(tmp_path, problems)
    assert "5' overhang" in tools["virtual_digest"].data["description"]
    assert [(p.where, p.severity) for p in problems] == [("sequence/virtual_digest.yaml", "warning")]


def test_broken_files_are_reported_and_skipped_never_raised(tmp_path):
    write(tmp_path, "a/broken.yaml", "name: [unclosed\n")
    write(tmp_path, "a/list.yaml", "- 1\n- 2\n")
    write(tmp_path, "a/noname.yaml", "description: x\n")
    write(tmp_path, "b/dup.yaml", "name: dup\n")
    write(tmp_path, "c/dup.yaml", "name: dup\n")
    write(tmp_path, "tool_categories.yaml", "categories: {}\n")
    problems: list = []
    tools = load_registry_dir(tmp_path, problems)
    assert list(tools) == ["dup"] and tools["dup"].path == "b/dup.yaml"
    by_file = {p.where: p.severity for p in problems}
    assert by_file == {
        "a/broken.yaml": "error",
        "a/list.yaml": "error",
        "a/noname.yaml": "error",
        "c/dup.yaml": "warning",
    }


def test_contract_mapping_defaults_and_result_schema(tmp_path):
    write(tmp_path, "sequence/virtual_digest.yaml", GOOD)
    write(tmp_path, "misc/bare.yaml", "name: bare\n")
    problems: list = []
    tools = load_registry_dir(tmp_path, problems)
    bare = contract_mapping(tools["bare"], problems)
    assert bare["category"] == "misc" and bare["parameters"]["properties"] == {}
    assert any("no parameters block" in p.message for p in problems)
    schema = result_schema_from_returns(tools["virtual_digest"].data["returns"])
    assert schema["properties"]["fragments"]["type"] == "array"
    assert schema["required"] == ["count", "fragments"]
    assert result_schema_from_returns("prose") is None


def test_annotations_from_the_original_rules():
    contracts = {
        name: {"parameters": {"properties": {}}}
        for name in (
            "get_track_status",
            "toggle_track",
            "translate_dna",
            "translate_sequence",
            "execute_actions",
            "paste_sequence",
            "list_tasks",
        )
    }
    annotate(contracts)
    assert contracts["get_track_status"]["read_only"] and contracts["list_tasks"]["read_only"]
    assert not contracts["toggle_track"]["read_only"]
    assert contracts["translate_dna"]["equivalent_to"] == ["translate_sequence"]
    assert contracts["translate_sequence"]["equivalent_to"] == ["translate_dna"]
    assert contracts["execute_actions"]["follow_up_of"] == ["paste_sequence"]  # only tools present


def test_alternative_keys_cover_spellings_aliases_and_completion_alternatives():
    keys = alternative_keys("switch_to_tab", {"properties": {"tab_id": {}, "filename": {}, "gene_name": {}}})
    assert ["tabIndex"] in keys["tab_id"] and ["tab_index"] in keys["tab_id"]
    assert ["filePath"] in keys["filename"] and ["path"] in keys["filename"]
    assert keys["gene_name"] == [["geneName"]]
    bed = alternative_keys("export_bed_format", {"properties": {"export_range": {}}})
    assert ["startPosition", "endPosition"] in bed["export_range"]
