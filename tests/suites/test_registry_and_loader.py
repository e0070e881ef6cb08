"""Contracts, registry hash, retrieval, contract executor, and one-line errors for bad input files."""

import json

import pytest

from callbench.errors import ContractError, SuiteError, UserError
from callbench.executors.contract import synthetic_result
from callbench.suites.loader import load_suite_path
from callbench.suites.resolve import load_suite
from callbench.tools.registry import ToolRegistry
from callbench.tools.retrieve import retrieval_recall, select_tools, split_clauses
from callbench.tools.schema import validate_arguments
from callbench.types.contract import strictify

TOOL = (
    "name: {name}\ndescription: d\nparameters:\n  type: object\n"
    "  properties:\n    x: {{type: integer}}\n  required: [x]\n"
)


def write_tools(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.yaml").write_text(TOOL.format(name=name))


def test_registry_loads_folder_and_hash_is_order_independent(tmp_path):
    write_tools(tmp_path / "a", ["alpha", "beta"])
    write_tools(tmp_path / "b" / "sub", ["beta", "alpha"])
    one, two = ToolRegistry.from_dir(tmp_path / "a"), ToolRegistry.from_dir(tmp_path / "b")
    assert len(one) == 2 and one.hash == two.hash
    (tmp_path / "a" / "beta.yaml").write_text(TOOL.format(name="beta").replace("integer", "number"))
    assert ToolRegistry.from_dir(tmp_path / "a").hash != two.hash


def test_broken_schema_is_a_clear_error_naming_the_file(tmp_path):
    write_tools(tmp_path, ["ok"])
    (tmp_path / "bad.yaml").write_text(
        "name: bad\nparameters:\n  type: object\n  properties:\n    x: {type: intege}\n"
    )
    with pytest.raises(ContractError) as info:
        ToolRegistry.from_dir(tmp_path)
    message = str(info.value)
    assert "bad.yaml" in message and "\n" not in message


@pytest.mark.parametrize(
    ("schema", "where", "key"),
    [
        # the YAML slip the starter suite shipped: an unquoted ", e.g." inside a flow mapping
        (
            "  properties:\n    city: {type: string, description: City name, e.g. Paris}\n",
            "parameters.properties.city",
            "e.g. Paris",
        ),
        ("  properties:\n    n: {type: integer, minimun: 1}\n", "parameters.properties.n", "minimun"),
        (
            "  properties:\n    tags: {type: array, items: {type: string, maxlength: 3}}\n",
            "parameters.properties.tags.items",
            "maxlength",
        ),
        ("  required: [a]\n  requried: [a]\n", "parameters", "requried"),
    ],
)
def test_unknown_schema_keywords_are_refused_naming_file_and_field(tmp_path, schema, where, key):
    (tmp_path / "t.yaml").write_text("name: t\nparameters:\n  type: object\n" + schema)
    with pytest.raises(ContractError) as info:
        ToolRegistry.from_dir(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 't.yaml'}: field {where}: {key!r} is not a JSON Schema keyword")
    assert "\n" not in message


def test_extension_keys_and_every_built_in_contract_file_pass_the_keyword_check(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "name: t\nparameters:\n  type: object\n  x-origin: imported\n"
        "  properties:\n    a: {type: string, description: 'City name, e.g. Paris', examples: [Oslo]}\n"
    )
    assert ToolRegistry.from_dir(tmp_path).names() == ["t"]
    starter = load_suite("starter")
    weather = starter.registry.get("get_weather").parameters["properties"]["city"]
    assert weather == {"type": "string", "description": "City name, e.g. Paris"}


def test_invalid_yaml_and_duplicates_are_one_line_errors(tmp_path):
    (tmp_path / "x.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ContractError, match="x.yaml: not valid YAML"):
        ToolRegistry.from_dir(tmp_path)
    (tmp_path / "x.yaml").write_text(TOOL.format(name="dup"))
    (tmp_path / "y.json").write_text(json.dumps({"name": "dup"}))
    with pytest.raises(ContractError, match="duplicate tool name 'dup'"):
        ToolRegistry.from_dir(tmp_path)


def test_unknown_tool_did_you_mean():
    registry = load_suite("starter").registry
    with pytest.raises(UserError, match="did you mean 'get_weather'"):
        registry.get("get_wether")


def test_strict_schemas_forbid_extra_keys_and_honour_required():
    schema = strictify(
        {
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {}}}},
            "required": ["a"],
        }
    )
    assert validate_arguments(schema, {"a": {"b": 1}}) == []
    assert validate_arguments(schema, {"a": {"b": 1, "c": 2}}) == ["$.a.c is not allowed"]
    assert validate_arguments(schema, {}) == ["$.a is required"]


def case_file(tmp_path, text, suffix=".yaml"):
    path = tmp_path / f"cases{suffix}"
    path.write_text(text)
    return path


def test_malformed_case_files_name_file_line_and_case(tmp_path):
    yaml_text = "cases:\n  - id: a\n    instruction: hi\n  - id: b\n    expected: []\n"
    with pytest.raises(SuiteError) as info:
        load_suite_path(case_file(tmp_path, yaml_text))
    assert "cases.yaml:4" in str(info.value) and "case 'b'" in str(info.value)
    jsonl = '{"id": "a", "instruction": "x"}\n{"id": "b", "instruction": "y", "expected": [{"tool": 3}]}\n'
    with pytest.raises(SuiteError, match=r"cases.jsonl:2: case 'b': expected.0.tool"):
        load_suite_path(case_file(tmp_path, jsonl, ".jsonl"))
    with pytest.raises(SuiteError, match="cases.jsonl:1: not valid JSON"):
        load_suite_path(case_file(tmp_path, "{oops\n", ".jsonl"))


def test_bad_refs_order_free_and_duplicate_ids_rejected(tmp_path):
    bad_ref = (
        "cases:\n  - id: a\n    instruction: x\n    expected:\n      - tool: t\n"
        "        arguments: {v: {$ref: later.x}}\n      - {id: later, tool: u}\n"
    )
    with pytest.raises(SuiteError, match="must be '<earlier step id>"):
        load_suite_path(case_file(tmp_path, bad_ref))
    bad_group = "cases:\n  - id: a\n    instruction: x\n    expected: [{tool: t}]\n    order_free: [[nope]]\n"
    with pytest.raises(SuiteError, match="order_free names unknown step"):
        load_suite_path(case_file(tmp_path, bad_group))
    dup = "cases:\n  - {id: a, instruction: x}\n  - {id: a, instruction: y}\n"
    with pytest.raises(SuiteError, match="duplicate case id 'a'"):
        load_suite_path(case_file(tmp_path, dup))


def test_folder_suite_with_registry_and_unknown_tool_check(tmp_path):
    write_tools(tmp_path / "tools", ["alpha"])
    (tmp_path / "suite.yaml").write_text("name: mine\n")
    (tmp_path / "cases.yaml").write_text(
        "- id: one\n  instruction: alpha x 3\n  expected: [{tool: alpha, arguments: {x: 3}}]\n"
    )
    suite = load_suite_path(tmp_path)
    assert suite.name == "mine" and suite.cases[0].key == "mine:one"
    (tmp_path / "cases.yaml").write_text("- id: one\n  instruction: x\n  expected: [{tool: gamma}]\n")
    with pytest.raises(SuiteError, match="unknown tool 'gamma'"):
        load_suite_path(tmp_path)


def test_contract_executor_is_deterministic_and_shaped_by_result_schema():
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "n": {"type": "integer", "minimum": 5, "maximum": 9}},
    }
    first = synthetic_result("make", {"a": 1}, schema)
    assert first == synthetic_result("make", {"a": 1}, schema)
    assert first != synthetic_result("make", {"a": 2}, schema)
    assert 5 <= first["n"] <= 9 and isinstance(first["id"], str)


def test_retrieval_top_k_clause_split_and_recall():
    suite = load_suite("starter")
    tools = list(suite.registry)
    query = "Look up Alice's email address, then send her an email about lunch"
    assert split_clauses(query)
    picked = [t.name for t in select_tools(query, tools, k=3)]
    assert len(picked) == 3 and "get_contact" in picked and "send_email" in picked
    assert len(select_tools(query, tools, k=None)) == len(tools)
    assert retrieval_recall([["a"], ["b", "c"]], {"c"}, {}) == 0.5
    assert retrieval_recall([["a"]], {"z"}, {"a": {"z"}}) == 1.0


def test_a_broken_result_schema_is_one_contract_error_every_time() -> None:
    from callbench.errors import ContractError
    from callbench.tools.registry import ToolRegistry
    from callbench.types.contract import ToolContract

    broken = ToolContract(
        name="t", parameters={"type": "object", "properties": {}}, result_schema={"type": 5}
    )
    for _ in range(2):  # the second time answers from the cache: same error
        with pytest.raises(ContractError, match="tool 't': invalid result_schema: 5 is not valid"):
            ToolRegistry([broken])
