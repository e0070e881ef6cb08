"""One test per argument-DSL form, passing and failing side."""

from callbench.scoring.arguments import MISSING, MatchContext, is_concrete, match_arguments, match_value


def ok(expected, actual, **ctx):
    return not match_value(expected, actual, MatchContext(**ctx))


def test_literal_strings_normalised_and_numbers_numeric():
    assert ok("Paris", "  paris ")
    assert ok("./data/x.fa", "data//x.fa")
    assert not ok("Paris", "Rome")
    assert ok(5, 5.0) and ok(5.0, 5)
    assert not ok(5, "5")
    assert not ok(1, True) and not ok(True, 1)


def test_nested_objects_and_lists_recursive():
    assert ok({"a": [1, {"b": "X"}]}, {"a": [1.0, {"b": "x", "extra": 1}]})
    assert not ok({"a": [1, 2]}, {"a": [2, 1]})
    assert not ok({"a": [1, 2]}, {"a": [1]})


def test_any_requires_concrete_value():
    assert ok({"$any": True}, "chr1")
    for bad in (MISSING, None, "", [], {}, "<current_chromosome>", "{get_x.y}"):
        assert not ok({"$any": True}, bad), bad
    assert not is_concrete("{{step.value}}")


def test_default_may_be_omitted_but_must_match_when_given():
    ctx = MatchContext()
    assert not match_arguments({"unit": {"$default": "c"}}, {}, ctx)
    assert ctx.notes and "default" in ctx.notes[0]
    assert ok({"$default": "c"}, "C")
    assert not ok({"$default": "c"}, "f")


def test_one_of_value_alternatives_and_nested():
    assert ok({"$one_of": ["budget", "budget report"]}, "Budget Report")
    assert not ok({"$one_of": ["budget", "budget report"]}, "finance")
    nested = {"updates": {"$one_of": [{"note": "x"}, {"description": "x"}]}}
    assert ok(nested, {"updates": {"description": "x"}})
    assert not ok(nested, {"updates": {"comment": "x"}})


def test_one_of_over_whole_argument_objects_with_sibling_keys():
    expected = {"kind": "db", "$one_of": [{"name": "a"}, {"chromosome": {"$any": True}, "db": "a"}]}
    assert not match_arguments(expected, {"kind": "db", "chromosome": "U1", "db": "a"}, MatchContext())
    assert match_arguments(expected, {"kind": "db", "db": "a"}, MatchContext())
    assert match_arguments(expected, {"kind": "other", "name": "a"}, MatchContext())


def test_ref_resolves_against_real_results_not_blindly():
    resolver = lambda ref: ["user_17_ab"] if ref == "create.id" else []  # noqa: E731
    assert ok({"$ref": "create.id"}, "user_17_ab", resolve_ref=resolver)
    wrong = match_value({"$ref": "create.id"}, "user_99_zz", MatchContext(resolve_ref=resolver))
    assert wrong and wrong[0].code == "argument_mismatch"
    unresolved = match_value({"$ref": "other.id"}, "x", MatchContext(resolve_ref=resolver))
    assert unresolved[0].code == "unresolved_reference"
    # Only the contract tier without any execution result accepts an unverifiable reference.
    assert ok({"$ref": "other.id"}, "x", resolve_ref=resolver, lenient_refs=True)


def test_pattern():
    assert ok({"$pattern": r"^user_\d+_[a-z0-9]+$"}, "user_3_a1")
    assert not ok({"$pattern": r"^user_\d+_[a-z0-9]+$"}, "annotation-3")


def test_missing_key_is_argument_missing():
    problems = match_arguments({"city": "Paris"}, {}, MatchContext())
    assert problems[0].code == "argument_missing"


def test_alternative_keys_only_when_given():
    alt = {"position": [["start"]]}
    assert not match_arguments({"position": 100}, {"start": 100}, MatchContext(), alt)
    assert match_arguments({"position": 100}, {"start": 99}, MatchContext(), alt)
    assert match_arguments({"position": 100}, {"start": 100}, MatchContext())


def test_tool_content_written_over_several_lines_is_read_with_the_guidance_line_after_it():
    from callbench.harness.modes import CONTINUATION_GUIDANCE
    from callbench.types.dsl import parse_tool_content

    pretty = '{\n  "entities": [\n    {"name": "Tomas Okafor"}\n  ]\n}'  # as MCP servers often write JSON
    read = {"entities": [{"name": "Tomas Okafor"}]}
    assert parse_tool_content(pretty) == read
    assert parse_tool_content(f"{pretty}\n{CONTINUATION_GUIDANCE}") == read
    assert parse_tool_content(f'{{"a": 1}}\n{CONTINUATION_GUIDANCE}') == {"a": 1}
    assert parse_tool_content("plain text\nmore") == "plain text\nmore"
