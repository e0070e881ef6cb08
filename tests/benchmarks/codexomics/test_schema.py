"""Sanitising upstream parameter schemas (the original's native-tool conversion rules)."""

from __future__ import annotations

from callbench.benchmarks.codexomics.schema import infer_schema, sanitize_parameters
from callbench.tools.schema import check_schema


def test_keyword_allowlist_and_strict_defaults():
    notes: list[str] = []
    out = sanitize_parameters(
        {
            "type": "object",
            "properties": {
                "start": {"type": "number", "minimum": 1, "examples": [5], "default": 1, "format": "x"},
                "opts": {"type": "object", "properties": {"a": {"type": "string"}}},
                "blob": {"type": "object"},
            },
            "required": ["start"],
            "x-extra": True,
        },
        notes,
    )
    assert out["properties"]["start"] == {"type": "number", "minimum": 1}
    assert out["additionalProperties"] is False
    assert out["properties"]["opts"]["additionalProperties"] is False
    assert out["properties"]["blob"]["additionalProperties"] is True  # no declared properties: stays open
    assert "x-extra" not in out
    assert check_schema(out) is None


def test_per_property_required_true_is_hoisted():
    notes: list[str] = []
    out = sanitize_parameters(
        {
            "properties": {
                "a": {"type": "string", "required": True},
                "b": {"type": "string", "required": False},
            }
        },
        notes,
    )
    assert out["required"] == ["a"]
    assert "required" not in out["properties"]["a"] and "required" not in out["properties"]["b"]
    assert out["type"] == "object"
    assert any("hoisted" in n for n in notes)
    assert check_schema(out) is None


def test_root_any_of_of_required_sets_is_kept():
    out = sanitize_parameters(
        {
            "type": "object",
            "properties": {"a": {}, "b": {}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        [],
    )
    assert out["anyOf"] == [{"required": ["a"]}, {"required": ["b"]}]


def test_description_is_cut_and_broken_input_is_reported():
    notes: list[str] = []
    out = sanitize_parameters({"type": "object", "description": "x" * 2000, "properties": {}}, notes)
    assert len(out["description"]) == 1024
    assert sanitize_parameters(["not", "a", "mapping"], notes)["type"] == "object"
    assert any("not a mapping" in n for n in notes)


def test_unknown_type_dropped_and_required_without_property_reported():
    notes: list[str] = []
    out = sanitize_parameters({"properties": {"a": {"type": "str"}}, "required": ["a", "zz"]}, notes)
    assert "type" not in out["properties"]["a"]
    assert any("unknown type" in n for n in notes) and any("zz" in n for n in notes)


def test_infer_schema_for_added_keys():
    assert infer_schema([True, False]) == {"type": "boolean"}
    assert infer_schema([1, 2.5]) == {"type": "number"}
    assert infer_schema(["a", 1]) == {"type": ["string", "integer"]}
    assert infer_schema([{"$any": True}]) == {}
    assert infer_schema([{"$default": "x"}]) == {"type": "string"}
