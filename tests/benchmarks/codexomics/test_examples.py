"""Example values that let built-in agents play imported cases schema-validly."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from callbench.benchmarks.codexomics.examples import example_for_schema, fill_examples

SCHEMAS = [
    {"type": "string", "pattern": "^[ATGCNatgcn]+$"},
    {"type": "string", "minLength": 30},
    {"type": "string", "pattern": "^[A-Z]+$", "minLength": 10, "maxLength": 12},
    {"type": "integer", "minimum": 0, "maximum": 0},
    {"type": "number", "exclusiveMinimum": 5},
    {"type": "array", "items": {"type": "object"}, "minItems": 2},
    {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "required": ["a"],
        "additionalProperties": False,
    },
    {"type": ["null", "integer"]},
    {"enum": ["x", "y"]},
    {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
]


def test_examples_are_valid_against_their_schema():
    for schema in SCHEMAS:
        example = example_for_schema(schema)
        assert not list(Draft202012Validator(schema).iter_errors(example)), (schema, example)


def test_fill_examples_walks_the_schema_and_keeps_given_examples():
    schema = {
        "type": "object",
        "properties": {
            "seq": {"type": "string", "pattern": "^[ACGT]+$"},
            "ids": {"type": "array", "items": {"type": "integer"}},
        },
    }
    value = {
        "seq": {"$any": True},
        "ids": [{"$any": True}],
        "x": {"$any": True, "example": 7},
        "$one_of": [{"seq": {"$pattern": "^MK"}}],
    }
    out = fill_examples(value, schema)
    assert out["seq"] == {"$any": True, "example": "ATGC"}
    assert out["ids"] == [{"$any": True, "example": 1}]
    assert out["x"]["example"] == 7
    assert out["$one_of"][0]["seq"]["example"] == "MKTAYIAK"  # the marker's own pattern
