"""Each pass rule of each strict tier, on its passing and its failing side."""

from core_helpers import case, passes, trace, verdicts

OK = {"execution": "ok"}


def test_exact_single_call_passes_every_tier():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    assert passes(c, trace(("create_item", {"name": "a"}, OK))) == (True, True, True)


def test_no_structured_call_fails_every_tier_and_text_earns_nothing():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(final_text="I called create_item(name='a') for you.")
    v = verdicts(c, t)
    assert not any(x.passed for x in v.values())
    assert all("no_structured_call" in x.codes for x in v.values())


def test_strict_order_required_in_strict_tiers_but_not_completion():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}, {"tool": "get_state"}])
    t = trace(("get_state", {}, OK), ("create_item", {"name": "a"}, OK))
    v = verdicts(c, t)
    assert "wrong_order" in v["native-function-contract"].codes
    assert not v["real-tool-execution"].passed
    assert v["task-completion-execution"].passed


def test_order_free_group_may_be_permuted_in_strict_tiers():
    c = case(
        [
            {"id": "x", "tool": "create_item", "arguments": {"name": "a"}},
            {"id": "y", "tool": "get_state"},
            {"tool": "commit"},
        ],
        order_free=[["x", "y"]],
    )
    t = trace(("get_state", {}, OK), ("create_item", {"name": "a"}, OK), ("commit", {}, OK))
    assert passes(c, t) == (True, True, True)
    late = trace(("get_state", {}, OK), ("commit", {}, OK), ("create_item", {"name": "a"}, OK))
    assert passes(c, late)[0] is False


def test_extra_read_only_call_fails_strict_but_tolerated_in_completion():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(("get_state", {}, OK), ("create_item", {"name": "a"}, OK))
    v = verdicts(c, t)
    assert "unexpected_call" in v["native-function-contract"].codes
    assert v["task-completion-execution"].passed


def test_extra_state_changing_call_fails_completion():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(("create_item", {"name": "a"}, OK), ("reset_all", {}, OK))
    v = verdicts(c, t)
    assert not v["task-completion-execution"].passed
    assert "unexpected_state_change" in v["task-completion-execution"].codes


def test_documented_follow_up_and_another_instance_tolerated_in_completion():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    follow = trace(("create_item", {"name": "a"}, OK), ("commit", {}, OK))
    again = trace(("create_item", {"name": "a"}, OK), ("create_item", {"name": "b"}, OK))
    assert passes(c, follow) == (False, False, True)
    assert passes(c, again) == (False, False, True)


def test_declared_equivalent_tool_counts_only_in_completion():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(("make_item", {"name": "a"}, OK))
    assert passes(c, t) == (False, False, True)


def test_alternative_tools_listed_in_a_step_count_in_every_tier():
    c = case([{"tool": ["create_item", "make_item"], "arguments": {"name": "a"}}])
    assert passes(c, trace(("make_item", {"name": "a"}, OK))) == (True, True, True)


def test_exact_argument_keys_in_strict_tiers_alternative_key_in_completion():
    c = case([{"tool": "navigate", "arguments": {"position": 100}}])
    t = trace(("navigate", {"start": 100}, OK))
    v = verdicts(c, t)
    assert "argument_missing" in v["native-function-contract"].codes
    assert v["task-completion-execution"].passed


def test_schema_invalid_call_fails_every_tier_even_if_extra():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(("create_item", {"name": "a", "colour": "red"}, OK))
    assert all("schema_invalid" in x.codes for x in verdicts(c, t).values())
    extra_invalid = trace(("create_item", {"name": "a"}, OK), ("get_state", {"bogus": 1}, OK))
    assert not verdicts(c, extra_invalid)["task-completion-execution"].passed


def test_unknown_tool_and_malformed_arguments_are_reasons_not_crashes():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(
        {"tool": "nope", "arguments": {}},
        {"tool": "create_item", "arguments": None, "parse_error": "bad json"},
    )
    codes = verdicts(c, t)["native-function-contract"].codes
    assert "unknown_tool" in codes and "malformed_arguments" in codes


def test_execution_required_in_execution_and_completion_tiers_not_contract():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    failed = trace(("create_item", {"name": "a"}, {"execution": "error", "error": "disk full"}))
    v = verdicts(c, failed)
    assert v["native-function-contract"].passed
    assert "execution_failed" in v["real-tool-execution"].codes
    assert "execution_failed" in v["task-completion-execution"].codes


def test_call_only_step_needs_no_execution():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}, "call_only": True}])
    t = trace(("create_item", {"name": "a"}, {"execution": "skipped"}))
    assert passes(c, t) == (True, True, True)


def test_a_step_that_expects_an_error_requires_the_call_to_run_and_fail():
    """A gold call that fails where it runs (τ²'s retail looks up a mistyped address): the failing
    call passes, a success is ``unexpected_success``, an unexecuted or missing call still fails, and
    the contract tier does not look at execution."""
    c = case([{"tool": "delete_item", "arguments": {"id": "x"}, "expect_error": True}])
    failed = trace(("delete_item", {"id": "x"}, {"execution": "error", "error": "not found"}))
    assert passes(c, failed) == (True, True, True)
    succeeded = verdicts(c, trace(("delete_item", {"id": "x"}, OK)))
    assert succeeded["native-function-contract"].passed
    for tier in ("real-tool-execution", "task-completion-execution"):
        assert not succeeded[tier].passed and "unexpected_success" in succeeded[tier].codes
    unexecuted = verdicts(c, trace(("delete_item", {"id": "x"}, {"execution": "not_executed"})))
    assert "not_executed" in unexecuted["real-tool-execution"].codes
    other = verdicts(c, trace(("get_state", {}, {"execution": "error", "error": "not found"})))
    assert "tool_missing" in other["real-tool-execution"].codes  # another tool's failure is no stand-in


def test_an_expected_error_pairs_the_failing_call_not_an_earlier_success():
    """Pairing prefers the call that ran as the step expects: for an ``expect_error`` step the
    failing one, so a success before it is the extra call (another instance of the step's capability,
    which only the completion tier tolerates)."""
    c = case([{"tool": "delete_item", "arguments": {"id": "x"}, "expect_error": True}])
    t = trace(
        ("delete_item", {"id": "x"}, OK),
        ("delete_item", {"id": "x"}, {"execution": "error", "error": "not found"}),
    )
    v = verdicts(c, t)
    assert [m["call_index"] for m in v["task-completion-execution"].details["matches"]] == [1]
    assert "unexpected_success" not in v["real-tool-execution"].codes
    assert "unexpected_call" in v["real-tool-execution"].codes
    assert v["task-completion-execution"].passed


def test_repeat_count_requires_all_instances():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}, "times": 3}])
    three = trace(*[("create_item", {"name": "a"}, OK)] * 3)
    two = trace(*[("create_item", {"name": "a"}, OK)] * 2)
    assert passes(c, three) == (True, True, True)
    assert passes(c, two) == (False, False, False)


def test_schema_default_may_be_omitted():
    c = case([{"tool": "create_item", "arguments": {"name": "a", "size": {"$default": 1}}}])
    assert passes(c, trace(("create_item", {"name": "a"}, OK))) == (True, True, True)
    assert passes(c, trace(("create_item", {"name": "a", "size": 2}, OK))) == (False, False, False)


def test_ref_checked_against_earlier_result():
    c = case(
        [
            {"tool": "create_item", "arguments": {"name": "a"}},
            {"tool": "delete_item", "arguments": {"id": {"$ref": "create_item.id"}}},
        ]
    )
    good = trace(
        ("create_item", {"name": "a"}, {"execution": "ok", "result": {"id": "it_7"}}),
        ("delete_item", {"id": "it_7"}, OK),
    )
    bad = trace(
        ("create_item", {"name": "a"}, {"execution": "ok", "result": {"id": "it_7"}}),
        ("delete_item", {"id": "it_8"}, OK),
    )
    assert passes(c, good) == (True, True, True)
    assert passes(c, bad) == (False, False, False)


def test_expected_final_answer():
    c = case([{"tool": "get_state"}], expected_answer={"contains": ["42"]})
    assert passes(c, trace(("get_state", {}, OK), final_text="It is 42.")) == (True, True, True)
    v = verdicts(c, trace(("get_state", {}, OK), final_text="no idea"))
    assert all("answer_mismatch" in x.codes for x in v.values())


def test_partial_scores_are_diagnostic_and_weighted():
    c = case(
        [
            {"tool": "create_item", "arguments": {"name": "a"}},
            {"tool": "delete_item", "arguments": {"id": "x"}},
        ]
    )
    t = trace(("create_item", {"name": "a"}, OK))
    v = verdicts(c, t)
    # contract: coverage .5*.45 + args .5*.35 + schema 1*.2
    assert abs(v["native-function-contract"].partial - (0.225 + 0.175 + 0.2)) < 1e-9
    # execution: .5*.35 + .5*.25 + 1*.15 + .5*.10 + .5*.15
    assert abs(v["real-tool-execution"].partial - (0.175 + 0.125 + 0.15 + 0.05 + 0.075)) < 1e-9
    assert not v["real-tool-execution"].passed


def test_failure_never_reaches_full_partial_and_unexpected_calls_earn_nothing():
    c = case([{"tool": "create_item", "arguments": {"name": "a"}}])
    t = trace(("create_item", {"name": "a"}, OK), ("reset_all", {}, OK))
    v = verdicts(c, t)["task-completion-execution"]
    assert not v.passed and v.partial < 1.0
    assert v.rationale.startswith("fail:")
