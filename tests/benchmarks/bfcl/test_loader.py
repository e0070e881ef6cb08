"""The bfcl suite loader: specs, groups, --data folders, errors, JSON Schema mapping."""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest

from callbench.benchmarks.bfcl.data import GROUPS, expand
from callbench.benchmarks.bfcl.schema import contract_from_doc, json_schema
from callbench.benchmarks.bfcl.suite import load_suite
from callbench.errors import ConfigError, UserError
from callbench.suites.suite import SuiteOptions


def test_groups_and_specs():
    assert expand("live") == GROUPS["live"] and len(GROUPS["single_turn"]) == 13
    assert expand("parallel,live,parallel")[0] == "parallel"
    with pytest.raises(UserError, match="unknown category or group 'simple'"):
        expand("simple")


def test_spec_forms_and_modes(bfcl_folder):
    options = SuiteOptions(data=bfcl_folder, extra={"limit": 2})
    suite = load_suite("bfcl:non_live:improved", options)
    assert suite.metadata["bfcl"] == {"mode": "improved"}
    assert {case.category for case in suite.cases} == set(GROUPS["non_live"])
    assert len(load_suite("multiple", options).cases) == 2
    with pytest.raises(ConfigError):
        load_suite("bfcl:multiple:sloppy", options)
    flags = SuiteOptions(data=bfcl_folder, extra={"limit": 1, "mode": "improved", "numeric_strings": "false"})
    assert load_suite("multiple", flags).metadata["bfcl"] == {"mode": "improved", "numeric_strings": False}
    with pytest.raises(ConfigError, match="use true or false"):
        load_suite("multiple", SuiteOptions(data=bfcl_folder, extra={"numeric_strings": "maybe"}))


def test_data_folder_and_missing_files(tmp_path, bfcl_folder):
    (tmp_path / "possible_answer").mkdir()
    shutil.copy(bfcl_folder / "BFCL_v4_parallel.json", tmp_path)
    shutil.copy(bfcl_folder / "possible_answer" / "BFCL_v4_parallel.json", tmp_path / "possible_answer")
    suite = load_suite("parallel", SuiteOptions(data=tmp_path))
    assert len(suite.cases) == 200 and all(case.expected for case in suite.cases)
    with pytest.raises(UserError, match="missing data file"):
        load_suite("multiple", SuiteOptions(data=tmp_path))
    (tmp_path / "BFCL_v4_simple_python.json").write_text('{"id": "x"\n')
    with pytest.raises(UserError, match=r"BFCL_v4_simple_python.json:1: invalid JSON"):
        load_suite("simple_python", SuiteOptions(data=tmp_path))


def test_type_mapping():
    spec = {
        "type": "dict",
        "properties": {
            "f": {"type": "float"},
            "t": {"type": "tuple", "items": {"type": "integer"}},
            "a": {"type": "any"},
            "d": {"type": "dict", "properties": {"k": {"type": "string"}}, "required": ["k"]},
        },
        "required": ["f"],
    }
    schema = json_schema(spec)
    assert schema["properties"]["f"] == {"type": "number"}
    assert schema["properties"]["t"]["type"] == "array" and schema["properties"]["t"]["items"] == {
        "type": "integer"
    }
    assert schema["properties"]["a"] == {"type": "string"}
    assert schema["properties"]["d"]["required"] == ["k"] and schema["required"] == ["f"]


def test_every_shipped_doc_maps_to_valid_json_schema(bfcl_folder):
    suite = load_suite("bfcl:all", SuiteOptions(data=bfcl_folder))
    # One compiled validator of the metaschema, reused for every distinct schema: check_schema
    # compiles the metaschema again on every call, which made this test take minutes.
    meta = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    schemas = {
        json.dumps(tool.provider_schema(), sort_keys=True): tool.name
        for case in suite.cases
        for tool in case.inline_contracts()
    }
    assert len(schemas) > 3000
    assert list(
        meta.iter_errors({"type": "float"})
    )  # the check can fail: BFCL's own "float" is not JSON Schema
    for text, name in schemas.items():
        errors = [e.message for e in meta.iter_errors(json.loads(text))]
        assert not errors, f"{name}: {errors[:2]}"
    java = next(c for c in suite.cases if c.category == "simple_java").inline_contracts()[0]
    assert all(p["type"] == "string" for p in java.parameters["properties"].values())
    assert "Java 8 SDK" in java.description


def test_java_doc_hints():
    doc = {
        "name": "m",
        "description": "d",
        "parameters": {
            "type": "dict",
            "properties": {"xs": {"type": "ArrayList", "description": "ids.", "items": {"type": "long"}}},
            "required": ["xs"],
        },
    }
    prop = contract_from_doc(doc, "simple_java").parameters["properties"]["xs"]
    assert (
        prop["type"] == "string"
        and "Java ArrayList type parameter in string representation" in prop["description"]
    )
    assert "elements are of type long" in prop["description"]
