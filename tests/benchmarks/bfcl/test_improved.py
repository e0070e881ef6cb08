"""Improved mode: assignment matching and individually switchable leniencies; faithful stays BFCL's."""

from __future__ import annotations

import json

from callbench.benchmarks.bfcl.entry import judge_entry
from callbench.benchmarks.bfcl.options import BfclOptions

DOC = {
    "name": "g",
    "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
}
TRUTH = [{"g": {"x": [1, 2]}}, {"g": {"x": [1]}}]
FAITHFUL = BfclOptions()
IMPROVED = BfclOptions(mode="improved")


def _calls(*values):
    return [{"g": json.dumps({"x": value})} for value in values]


def test_greedy_false_negative_is_faithful_and_fixed_by_assignment():
    # BFCL's first-fit gives x=1 to the first expected call, leaving nothing for the second.
    assert (
        judge_entry("parallel", [DOC], _calls(1, 2), TRUTH, FAITHFUL).error_type
        == "parallel_function_checker_no_order:cannot_find_match"
    )
    assert judge_entry("parallel", [DOC], _calls(2, 1), TRUTH, FAITHFUL).valid
    assert judge_entry("parallel", [DOC], _calls(1, 2), TRUTH, IMPROVED).valid
    no_assignment = BfclOptions(mode="improved", assignment_matching=False)
    assert not judge_entry("parallel", [DOC], _calls(1, 2), TRUTH, no_assignment).valid


def test_assignment_still_rejects_wrong_values():
    assert not judge_entry("parallel", [DOC], _calls(2, 2), TRUTH, IMPROVED).valid
    assert judge_entry("parallel", [DOC], _calls(1, 1, 2), TRUTH, IMPROVED).error_type.endswith("wrong_count")


def test_numeric_strings_and_int_valued_floats_are_separate_switches():
    truth = [{"g": {"x": [5]}}]
    for value, switch in (("5", "numeric_strings"), (5.0, "int_valued_floats")):
        result = [{"g": json.dumps({"x": value})}]
        assert judge_entry("simple_python", [DOC], result, truth, FAITHFUL).error_type == "type_error:simple"
        assert judge_entry("simple_python", [DOC], result, truth, IMPROVED).valid
        assert not judge_entry(
            "simple_python", [DOC], result, truth, BfclOptions(mode="improved", **{switch: False})
        ).valid
    assert not judge_entry("simple_python", [DOC], [{"g": '{"x": "5.5"}'}], truth, IMPROVED).valid


def test_faithful_float_rules():
    doc = {
        "name": "f",
        "parameters": {"type": "dict", "properties": {"y": {"type": "float"}}, "required": ["y"]},
    }
    truth = [{"f": {"y": [2.0]}}]
    assert judge_entry(
        "simple_python", [doc], [{"f": '{"y": 2}'}], truth, FAITHFUL
    ).valid  # int -> float widening
    assert (
        judge_entry("simple_python", [doc], [{"f": '{"y": 2.0000001}'}], truth, FAITHFUL).error_type
        == "value_error:others"
    )


def test_options_are_recorded():
    assert FAITHFUL.describe() == {"mode": "faithful", "underscore_to_dot": False}
    assert IMPROVED.describe()["assignment_matching"] is True
