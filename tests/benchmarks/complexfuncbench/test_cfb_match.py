import pytest
from cfb_helpers import sample

from callbench.benchmarks.complexfuncbench.definitions import PredCall
from callbench.benchmarks.complexfuncbench.match import (
    CallError,
    classify_mismatch,
    critical_gate,
    critical_table,
    description_default,
    format_error,
    norm_value,
    response_equivalent,
    rule_match,
    schema_defaults,
)

HOTELS = sample("Hotels-0")
FUNCS = {f["name"]: f for f in HOTELS.functions}


def call(name, **arguments):
    return PredCall(0, name, arguments)


def test_critical_table_is_the_shipped_data():
    table = critical_table()
    assert len(table) == 46
    assert table["Search_Hotel_Destination"] == frozenset()
    assert "sort_option_id" in table["Get_Hotel_Reviews(Tips)"]


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("Nope", {}, "Function Nope is not defined in the function list."),
        ("Search_Hotels", {"dest_id": "1"}, "Function Search_Hotels requires parameters ['search_type', "),
        (
            "Get_Hotel_Policies",
            {"hotel_id": 1, "foo": 2},
            "Function Get_Hotel_Policies does not have parameters ['foo']",
        ),
        (
            "Get_Hotel_Policies",
            {"hotel_id": "1"},
            "Parameter hotel_id of function Get_Hotel_Policies should be a number",
        ),
        ("Get_Hotel_Policies", {"hotel_id": True}, "should be a number, but bool is provided"),
        (
            "Search_Hotel_Destination",
            {"query": 3},
            "Parameter query of function Search_Hotel_Destination should be a string",
        ),
    ],
)
def test_format_check_rejects_with_specific_text(name, args, expected):
    text = format_error(name, args, FUNCS)
    assert text is not None and expected in text


def test_format_check_accepts_well_formed_calls():
    assert format_error("Get_Hotel_Policies", {"hotel_id": 191605, "languagecode": "en-us"}, FUNCS) is None
    assert format_error("Get_Hotel_Policies", {"hotel_id": 1.5}, FUNCS) is None


def test_rule_matcher_both_sides():
    gold = call("Search_Hotels", dest_id="1", categories_filter="class::4,free_cancellation::1")
    assert rule_match(
        call("Search_Hotels", categories_filter="free_cancellation::1,class::4", dest_id="1"), gold
    )
    assert not rule_match(call("Search_Hotels", dest_id="1", categories_filter="class::4"), gold)
    assert not rule_match(call("Search_Hotels", dest_id="1"), gold)  # key sets differ
    assert not rule_match(
        call("Get_Filter", dest_id="1", categories_filter="class::4,free_cancellation::1"), gold
    )


def test_critical_gate_both_sides():
    gold = call(
        "Get_Hotel_Reviews(Tips)", hotel_id=5, sort_option_id="sort_recent_desc", languagecode="en-us"
    )
    assert critical_gate(call("Get_Hotel_Policies", hotel_id=5), gold, improved=True).kind == "func_error"
    missing = critical_gate(call(gold.name, hotel_id=5, languagecode="en-us"), gold, improved=True)
    assert missing == CallError(
        "param_missing", "sort_option_id", "critical parameter sort_option_id missing"
    )
    wrong = critical_gate(
        call(gold.name, hotel_id=6, sort_option_id="sort_recent_desc", languagecode="en-us"),
        gold,
        improved=True,
    )
    assert (wrong.kind, wrong.param) == ("value_error", "hotel_id")
    # Non-critical differences pass the gate (later matchers decide).
    assert (
        critical_gate(
            call("Search_Hotel_Destination", query="NYC"),
            call("Search_Hotel_Destination", query="New York"),
            improved=True,
        )
        is None
    )


def test_critical_gate_normalises_only_in_improved_mode():
    gold = call("Get_Hotel_Policies", hotel_id=191605)
    pred = call("Get_Hotel_Policies", hotel_id="191605")
    assert critical_gate(pred, gold, improved=False).kind == "value_error"
    assert critical_gate(pred, gold, improved=True) is None


def test_critical_gate_compares_categories_filter_as_a_set_in_both_modes():
    # Upstream's value checker splits categories_filter at commas and compares the item sets.
    gold = call("Search_Hotels", dest_id="-1", categories_filter="class::4,class::5")
    reordered = call("Search_Hotels", dest_id="-1", categories_filter="class::5, class::4")
    fewer = call("Search_Hotels", dest_id="-1", categories_filter="class::5")
    for improved in (False, True):
        assert critical_gate(reordered, gold, improved=improved) is None
        assert critical_gate(fewer, gold, improved=improved).kind == "value_error"


def test_response_equivalence_both_sides():
    fn = FUNCS["Search_Hotels"]
    gold = call("Search_Hotels", dest_id="-1", search_type="CITY", adults=2)
    assert response_equivalent(
        call("Search_Hotels", dest_id="-1", search_type="CITY", adults=2.0, currency_code="USD"), gold, fn
    )  # default filled, 2 == 2.0
    assert response_equivalent(
        call("Search_Hotels", dest_id="-1", search_type="CITY", adults=2, room_qty=1), gold, fn
    )  # room_qty default is 1
    assert not response_equivalent(
        call("Search_Hotels", dest_id="-1", search_type="CITY", adults=3), gold, fn
    )
    assert not response_equivalent(
        call("Search_Hotels", dest_id="-1", search_type="CITY", adults=2, currency_code="EUR"), gold, fn
    )
    assert not response_equivalent(call("Get_Filter", dest_id="-1", search_type="CITY", adults=2), gold, fn)


def test_normal_forms():
    assert norm_value("12") == norm_value(12) == norm_value(12.0)
    assert norm_value("b, a") == norm_value("a,b")
    assert norm_value('[{"a": 1}, {"b": 2}]') != norm_value('[{"b": 2}, {"a": 1}]')  # legs keep their order
    assert norm_value('{"x": 1, "y": 2}') == norm_value({"y": 2, "x": "1"})
    assert norm_value(True) is True and norm_value("text") == "text"


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Number of adults. Default 1.", "1"),  # how the real data writes them
        ("Currency code, e.g. USD. default USD.", "USD"),
        ("Number of rooms. Default value is 1.", "1"),
        ("Default value is en-us.", "en-us"),
        ("Sort order. Default: popularity", "popularity"),
        ("Sort order, default: BEST;", "BEST"),
        ("Driver age, default 30", "30"),
        ("Driver age (default 30)", "30"),
        ("Price limit. Default 2.5.", "2.5"),
        ("Offset. Default -1", "-1"),
        ("Page. Defaults to 1.", "1"),
        ("The default is 'sort_most_relevant'.", "sort_most_relevant"),
        ("default=3", "3"),
        ("Include nearby. Default value is true.", True),
        ("Page number. Default 1. Max 10.", "1"),
    ],
)
def test_description_defaults_in_the_phrasings_of_the_data(description, expected):
    assert description_default(description) == expected


@pytest.mark.parametrize(
    "description",
    [
        "Language; defaults to the user's choice.",
        "Results use the default sort order.",
        "By default, all results are returned.",
        "No default here",
        "Default none.",
        "The default currency is used.",
        "Default language is English for most places",
    ],
)
def test_prose_about_defaults_is_not_read_as_a_value(description):
    assert description_default(description) is None


def test_response_match_fills_defaults_written_the_real_way():
    fn = {
        "name": "Search_Hotels",
        "parameters": {
            "type": "object",
            "properties": {
                "dest_id": {"type": "string"},
                "adults": {"type": "number", "description": "Number of adults. Default 1."},
                "currency_code": {"type": "string", "description": "Currency code, default USD."},
            },
        },
    }
    gold = call("Search_Hotels", dest_id="-1")
    assert response_equivalent(call("Search_Hotels", dest_id="-1", adults=1, currency_code="USD"), gold, fn)
    assert not response_equivalent(call("Search_Hotels", dest_id="-1", adults=2), gold, fn)


def test_schema_defaults_from_schema_and_description():
    fn = {
        "parameters": {
            "properties": {
                "a": {"type": "string", "default": "x"},
                "b": {"type": "number", "description": "Count. Default value is 1."},
                "c": {"type": "string", "description": "Sort order, default: popularity"},
                "d": {"type": "string", "description": "No default here"},
            }
        }
    }
    assert schema_defaults(fn) == {"a": "x", "b": "1", "c": "popularity"}


def test_mismatch_labels():
    gold = call("Search_Hotels", dest_id="-1", search_type="CITY")
    assert classify_mismatch(call("Search_Hotels", dest_id="-1"), gold, improved=True).kind == "param_missing"
    assert (
        classify_mismatch(call("Search_Hotels", dest_id="-2", search_type="CITY"), gold, improved=True).kind
        == "value_error"
    )
    extra = classify_mismatch(
        call("Search_Hotels", dest_id="-1", search_type="CITY", page_number=3), gold, improved=True
    )
    assert (extra.kind, extra.param) == ("param_hallucination", "page_number")
    assert (
        classify_mismatch(call("Search_Hotels", dest_id=-1, search_type="CITY"), gold, improved=False).kind
        == "value_error"
    )
