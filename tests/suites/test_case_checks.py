"""Cases are checked against the argument DSL and the tools' schemas when a suite is built.

A misspelt marker or argument key used to load silently, and the oracle then failed its own gold
path; now the suite does not load, and one line names the file, case, step and key.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from callbench.errors import SuiteError
from callbench.suites.loader import load_suite_path
from callbench.suites.resolve import load_suite
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract

WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "default": "celsius"},
            "location": {
                "type": "object",
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            },
            "stops": {"type": "array", "items": {"$ref": "#/$defs/stop"}},
        },
        "$defs": {"stop": {"type": "object", "properties": {"name": {"type": "string"}}}},
    },
}
FORECAST = {
    "name": "get_forecast",
    "parameters": {"type": "object", "properties": {"town": {"type": "string"}}},
}


def suite_of(*steps: dict[str, Any], tools: tuple[dict[str, Any], ...] = (WEATHER, FORECAST)) -> Suite:
    registry = ToolRegistry(ToolContract.model_validate(t) for t in tools)
    case = Case.model_validate({"id": "c1", "instruction": "weather", "expected": list(steps)})
    return Suite(name="s", cases=[case], registry=registry, source="mem")


def problem(*steps: dict[str, Any], **kw: Any) -> str:
    with pytest.raises(SuiteError) as info:
        suite_of(*steps, **kw)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_misspelt_key_in_a_case_file_names_file_line_case_step_and_key(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "w.yaml").write_text(yaml.safe_dump(WEATHER))
    (tmp_path / "cases.yaml").write_text(
        "cases:\n"
        "  - id: fine\n    instruction: x\n    expected: [{tool: get_weather, arguments: {city: Paris}}]\n"
        "  - id: typo\n    instruction: x\n    expected: [{tool: get_weather, arguments: {citty: Paris}}]\n"
    )
    with pytest.raises(SuiteError) as info:
        load_suite_path(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'cases.yaml'}:5: case 'typo': step 'get_weather': argument key 'citty' is not a "
        "parameter of get_weather (did you mean 'city'?)"
    )


def test_an_unknown_marker_is_named_with_the_markers_that_exist() -> None:
    message = problem({"tool": "get_weather", "arguments": {"city": {"$anyy": True}}})
    assert "case 'c1': step 'get_weather': argument 'city': unknown DSL marker '$anyy'" in message
    assert "did you mean '$any'?" in message


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"location": {"lat": 1, "lonn": 2}}, "argument key 'location.lonn' is not allowed by the schema"),
        ({"stops": [{"name": "a"}, {"nmae": "b"}]}, "argument key 'stops[1].nmae'"),  # via $defs
        ({"$one_of": [{"city": "Paris"}, {"citty": "Paris"}]}, "'citty' is not a parameter of get_weather"),
        ({"location": {"$default": {"lat": 1, "x": 2}}}, "argument key 'location.x'"),
        ({"city": {"$any": True, "exmaple": "Paris"}}, "$any takes no other key, got 'exmaple'"),
        ({"city": {"$any": True, "$default": "x"}}, "one marker per value, got $any and $default"),
        ({"city": {"$pattern": "(unclosed"}}, "is not a regular expression"),
        ({"city": {"$one_of": []}}, "$one_of must hold a non-empty list"),
    ],
)
def test_nested_keys_alternatives_defaults_and_marker_shapes_are_checked(
    arguments: dict[str, Any], says: str
) -> None:
    assert says in problem({"tool": "get_weather", "arguments": arguments})


def test_the_one_of_alternative_is_named() -> None:
    message = problem({"tool": "get_weather", "arguments": {"$one_of": [{"city": "P"}, {"citty": "P"}]}})
    assert message.endswith("(in $one_of alternative 2)")


def test_well_formed_expectations_load() -> None:
    suite = suite_of(
        {
            "tool": "get_weather",
            "arguments": {
                "city": {"$one_of": ["Paris", {"$pattern": "^Par"}]},
                "unit": {"$default": "celsius"},
                "location": {"lat": {"$any": True, "example": 1.5}, "lon": 2},
                "stops": [{"name": "a"}],
            },
        },
        {
            "id": "again",
            "tool": "get_weather",
            "call_only": True,
            "arguments": {"city": {"$ref": "step1.city"}},
        },
    )
    assert len(suite.cases) == 1


def test_alternative_tools_each_must_accept_the_keys_unless_one_of_gives_each_its_own() -> None:
    message = problem({"tool": ["get_weather", "get_forecast"], "arguments": {"city": "Paris"}})
    assert "argument key 'city' is not a parameter of get_forecast" in message
    # one alternative per tool: each tool can meet one, each alternative suits a tool
    suite_of(
        {
            "tool": ["get_weather", "get_forecast"],
            "arguments": {"$one_of": [{"city": "Paris"}, {"town": "Paris"}]},
        }
    )
    message = problem(
        {"tool": ["get_weather", "get_forecast"], "arguments": {"$one_of": [{"city": "P"}, {"twn": "P"}]}}
    )
    assert "'twn' is not a parameter of" in message and "alternative 2" in message


def test_open_schemas_pattern_properties_and_declared_dollar_keys_accept_their_keys() -> None:
    loose = {"name": "loose", "strict": False, "parameters": {"type": "object", "properties": {"a": {}}}}
    open_ = {
        "name": "open",
        "parameters": {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
    }
    patterned = {
        "name": "patterned",
        "parameters": {"type": "object", "patternProperties": {"^x_": {"type": "string"}}},
    }
    dollar = {"name": "query", "parameters": {"type": "object", "properties": {"$gt": {"type": "number"}}}}
    tools = (loose, open_, patterned, dollar)
    suite_of({"tool": "loose", "arguments": {"b": 1}}, tools=tools)
    suite_of({"tool": "open", "arguments": {"b": 1}}, tools=tools)
    suite_of({"tool": "patterned", "arguments": {"x_1": "v"}}, tools=tools)
    suite_of({"tool": "query", "arguments": {"$gt": 5}}, tools=tools)  # a parameter, not a marker
    assert "argument key 'y' is not a parameter of patterned" in problem(
        {"tool": "patterned", "arguments": {"y": "v"}}, tools=tools
    )


def test_contract_key_maps_must_name_parameters() -> None:
    alt = dict(WEATHER, alternative_keys={"cty": [["town"]]})
    message = problem({"tool": "get_weather", "arguments": {"city": "P"}}, tools=(alt, FORECAST))
    assert "tool 'get_weather': alternative_keys lists 'cty', which is not a parameter" in message
    # the alternatives themselves may be undeclared spellings (the CodeXomics import lists them)
    fine = dict(WEATHER, alternative_keys={"city": [["town_name"]]})
    suite_of({"tool": "get_weather", "arguments": {"city": "P"}}, tools=(fine, FORECAST))
    eq = dict(FORECAST, equivalent_to=[{"tool": "get_weather", "keys": {"town": "cityy"}}])
    message = problem({"tool": "get_forecast", "arguments": {"town": "P"}}, tools=(WEATHER, eq))
    assert "maps 'town' to 'cityy', which is not a parameter of get_weather" in message


BUILT_IN = [
    "starter",
    "genomics",
    "genomics-simple",
    "genomics-complex",
    "dag:n_core=5,10;depth=1,4;n_conn=0,5;n_dis=0,5;seeds=2",
    "complexfuncbench:fixture",
]


@pytest.mark.parametrize("spec", BUILT_IN)
def test_every_built_in_suite_still_loads(spec: str) -> None:
    assert load_suite(spec).cases


CODEXOMICS = Path(__file__).resolve().parents[3] / "shared" / "data" / "codexomics"


@pytest.mark.skipif(not (CODEXOMICS / "automatic_simple.json").is_file(), reason="no CodeXomics data here")
def test_the_codexomics_import_still_loads() -> None:
    assert len(load_suite("codexomics", data=CODEXOMICS).cases) == 172


@pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None, reason="bfcl-eval not installed")
def test_bfcl_single_turn_still_loads() -> None:
    assert len(load_suite("bfcl:single_turn").cases) > 3000


def test_a_reference_to_a_call_only_step_is_refused() -> None:
    message = problem(
        {"id": "look", "tool": "get_weather", "call_only": True, "arguments": {"city": "P"}},
        {"tool": "get_forecast", "arguments": {"town": {"$ref": "look.city"}}},
    )
    assert "step 'get_forecast': $ref 'look.city' names call-only step 'look'" in message


# --- a $ref path checked against the named step's declared result schema (issue 27, item 4) -------


def _ref_suite(ref: str, result_schema: dict[str, Any] | None) -> Suite:
    lookup: dict[str, Any] = {
        "name": "lookup_sku",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    if result_schema is not None:
        lookup["result_schema"] = result_schema
    order = {"name": "order", "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}}}
    registry = ToolRegistry()
    for contract in (lookup, order):
        registry.add(ToolContract.model_validate(contract))
    case = Case(
        id="buy",
        instruction="Buy a mug.",
        expected=[
            {"tool": "lookup_sku", "arguments": {"name": "mug"}},
            {"tool": "order", "arguments": {"sku": {"$ref": ref}}},
        ],
    )
    return Suite(name="shop", cases=[case], registry=registry, source="shop.yaml")


VARIANT = {"type": "object", "properties": {"sku": {"type": "string"}}, "additionalProperties": False}
RESULT = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "variants": {"type": "array", "items": VARIANT}},
    "additionalProperties": False,
}


@pytest.mark.parametrize("ref", ["lookup_sku.sku", "lookup_sku.variants[0].sku", "lookup_sku"])
def test_a_ref_the_result_schema_has_loads(ref: str) -> None:
    assert _ref_suite(ref, RESULT).cases[0].id == "buy"


@pytest.mark.parametrize(
    ("ref", "missing"),
    [
        ("lookup_sku.skuu", "skuu"),
        ("lookup_sku.variants[0].id", "variants[0].id"),
        ("lookup_sku.sku.x", "sku.x"),
    ],
)
def test_a_ref_the_result_schema_lacks_is_one_line(ref: str, missing: str) -> None:
    with pytest.raises(SuiteError) as info:
        _ref_suite(ref, RESULT)
    message = str(info.value)
    assert (
        message.startswith("shop.yaml: case 'buy': step 'order': $ref") and f"has no {missing!r}" in message
    )
    assert "\n" not in message


def test_without_a_result_schema_any_ref_path_loads() -> None:
    assert _ref_suite("lookup_sku.anything[3].deep", None).cases
    assert _ref_suite("lookup_sku.extra", {"type": "object", "properties": {"sku": {"type": "string"}}}).cases
