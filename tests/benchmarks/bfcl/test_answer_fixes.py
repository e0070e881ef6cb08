"""Item 20: improved mode corrects known BFCL answer-key defects, each fix its own switch, listed per entry.

Faithful mode keeps every defect (tests/benchmarks/bfcl/test_agreement.py pins it to BFCL's checker).
"""

from __future__ import annotations

import json

import pytest

from callbench.benchmarks.bfcl.data import NO_ANSWER, SINGLE_TURN, index
from callbench.benchmarks.bfcl.entry import judge_entry
from callbench.benchmarks.bfcl.fixes import fix_answer
from callbench.benchmarks.bfcl.options import IMPROVED_SWITCHES, BfclOptions

FAITHFUL = BfclOptions()
IMPROVED = BfclOptions(mode="improved")
QUOTED_ARRAY_ENTRIES = [
    "simple_java_35",
    "simple_java_78",
    "simple_java_83",
    "simple_java_85",
    "simple_java_86",
    "simple_java_89",
    "simple_java_90",
    "simple_java_91",
]
# Entries each answer-key switch corrects in bfcl-eval 2026.3.23 (docs/bfcl.md lists the same).
ANSWER_FIX_ENTRIES = {
    "renamed_answer_params": ["live_multiple_964-207-0"],
    "undocumented_answer_params": ["live_multiple_862-181-3", "parallel_multiple_12", "parallel_multiple_26"],
    "empty_answer_lists": ["live_simple_106-63-0", "live_simple_112-68-0"],
    "required_answer_values": [
        "live_multiple_114-44-1",
        "live_multiple_144-56-0",
        "live_multiple_507-149-4",
        "live_multiple_68-29-0",
        "live_multiple_69-30-0",
        "live_multiple_77-35-1",
        "live_multiple_834-178-9",
        "live_multiple_905-186-2",
        "live_multiple_906-186-3",
        "parallel_88",
        "parallel_multiple_119",
        "parallel_multiple_87",
        "simple_python_17",
        "simple_python_200",
    ],
}


@pytest.fixture(scope="module")
def data(bfcl_folder):
    return index(SINGLE_TURN, bfcl_folder)


def _judge(data, entry_id, arguments, options, name=None):
    entries, answers = data
    entry = entries[entry_id]
    name = name or next(iter(answers[entry_id][0]))
    result = [{name: json.dumps(arguments)}]
    category = entry_id.rsplit("_", 1)[0]
    return judge_entry(category, entry["function"], result, answers[entry_id], options, entry_id=entry_id)


def _off(switch):
    return BfclOptions(mode="improved", **{switch: False})


def test_every_switch_is_separate_and_recorded():
    described = IMPROVED.describe()
    assert all(described[switch] is True for switch in IMPROVED_SWITCHES)
    assert set(FAITHFUL.describe()) == {"mode", "underscore_to_dot"}


@pytest.mark.parametrize("entry_id", QUOTED_ARRAY_ENTRIES)
def test_java_array_quotes(data, entry_id):
    entries, answers = data
    ((_, params),) = answers[entry_id][0].items()
    props = entries[entry_id]["function"][0]["parameters"]["properties"]
    quoted, bare = {}, {}
    for param, values in params.items():
        value = values[0]
        if props[param]["type"] == "Array" and isinstance(value, list):
            quoted[param] = "new String[]{" + ", ".join(json.dumps(item) for item in value) + "}"
            bare[param] = "new String[]{" + ", ".join(value) + "}"
        else:
            quoted[param] = bare[param] = value
    # Valid Java (quoted strings): BFCL rejects it; improved accepts it.
    assert not _judge(data, entry_id, quoted, FAITHFUL).valid
    assert _judge(data, entry_id, quoted, IMPROVED).valid
    # Bare words are variables, not those strings: BFCL accepts them; improved rejects them.
    assert _judge(data, entry_id, bare, FAITHFUL).valid
    assert _judge(data, entry_id, bare, IMPROVED).error_type == "type_error:nested"
    assert _judge(data, entry_id, quoted, _off("java_array_quotes")).valid is False


def test_java_any_elements(data):
    typed = 'new ArrayList<>(Arrays.asList("userID", 42, "username", "johndoe", "isActive", true))'
    args = {"parts": typed, "state": "processingState"}
    assert not _judge(data, "simple_java_36", args, FAITHFUL).valid
    assert _judge(data, "simple_java_36", args, IMPROVED).valid
    assert not _judge(data, "simple_java_36", args, _off("java_any_elements")).valid
    wrong = {**args, "parts": typed.replace("42", "43")}
    assert not _judge(data, "simple_java_36", wrong, IMPROVED).valid
    flags = 'new ArrayList<>(Arrays.asList("include_defaults", true, "TOXCONTENT_SKIP_RUNTIME", true))'
    assert _judge(
        data, "simple_java_65", {"builder": "xContentBuilderInstance", "params": flags}, IMPROVED
    ).valid


@pytest.mark.parametrize(
    ("entry_id", "param"), [("simple_java_18", "pageNo"), ("simple_javascript_17", "priorityLevel")]
)
def test_int_valued_floats_in_java_and_javascript(data, entry_id, param):
    answers = data[1]
    ((_, params),) = answers[entry_id][0].items()
    args = {key: str(values[0]) for key, values in params.items() if values[0] != ""}
    assert _judge(data, entry_id, args, FAITHFUL).valid
    args[param] = args[param] + ".0"
    kind = "java" if "java_" in entry_id else "js"
    assert _judge(data, entry_id, args, FAITHFUL).error_type == "type_error:simple"
    assert _judge(data, entry_id, args, IMPROVED).valid, kind
    assert not _judge(data, entry_id, args, _off("int_valued_floats")).valid
    args[param] = args[param][:-2] + ".5"
    assert not _judge(data, entry_id, args, IMPROVED).valid


def test_empty_answer_lists(data):
    args = {
        "acc_routing_start": [],
        "atm_finder_start": [],
        "faq_link_accounts_start": [],
        "get_balance_start": [],
        "get_transactions_start": [],
        "outofscope": ["what is the weather like"],
    }
    assert (
        _judge(data, "live_simple_112-68-0", args, FAITHFUL).error_type
        == "simple_function_checker:missing_required"
        or not _judge(data, "live_simple_112-68-0", args, FAITHFUL).valid
    )
    assert _judge(data, "live_simple_112-68-0", args, IMPROVED).valid
    assert not _judge(data, "live_simple_112-68-0", args, _off("empty_answer_lists")).valid
    assert not _judge(data, "live_simple_112-68-0", {**args, "atm_finder_start": ["x"]}, IMPROVED).valid


def test_undocumented_answer_params(data):
    args = {"_from": "New York, NY", "to": "Los Angeles, CA", "date_of_journey": "05/15/2023"}
    assert (
        _judge(data, "live_multiple_862-181-3", args, FAITHFUL).error_type
        == "simple_function_checker:missing_optional"
    )
    assert _judge(data, "live_multiple_862-181-3", args, IMPROVED).valid
    assert not _judge(data, "live_multiple_862-181-3", args, _off("undocumented_answer_params")).valid


def test_renamed_answer_params(data):
    text = "Can you tell me what is the minimum package arrival time?"
    assert not _judge(data, "live_multiple_964-207-0", {"statement": text}, FAITHFUL).valid
    assert _judge(data, "live_multiple_964-207-0", {"statement": text}, IMPROVED).valid
    assert not _judge(
        data, "live_multiple_964-207-0", {"statement": text}, _off("renamed_answer_params")
    ).valid
    assert not _judge(data, "live_multiple_964-207-0", {"question": text}, IMPROVED).valid


def test_required_answer_values(data):
    base = {"destination_airport": "New York", "departure_date": "2023-03-14", "number_of_tickets": 1}
    la, empty = {**base, "origin_airport": "LA"}, {**base, "origin_airport": ""}
    assert not _judge(data, "live_multiple_507-149-4", la, FAITHFUL).valid
    assert _judge(data, "live_multiple_507-149-4", empty, FAITHFUL).valid
    assert _judge(data, "live_multiple_507-149-4", la, IMPROVED).valid
    assert _judge(data, "live_multiple_507-149-4", {**base, "origin_airport": "Los Angeles"}, IMPROVED).valid
    assert not _judge(data, "live_multiple_507-149-4", empty, IMPROVED).valid
    assert not _judge(data, "live_multiple_507-149-4", la, _off("required_answer_values")).valid
    # A required string satisfied by "" (the answer marks it optional): no longer accepted.
    track = {"track": "", "artist": "Teodora", "device": "Kitchen", "album": "Borbena"}
    assert _judge(data, "live_multiple_834-178-9", track, FAITHFUL).valid
    assert not _judge(data, "live_multiple_834-178-9", track, IMPROVED).valid
    assert _judge(data, "live_multiple_834-178-9", {**track, "track": "Borbena"}, IMPROVED).valid


def test_fixed_entries_are_exactly_the_documented_ones(data):
    entries, answers = data
    touched: dict[str, list[str]] = {}
    for entry_id, truth in answers.items():
        if entry_id.rsplit("_", 1)[0] in NO_ANSWER:
            continue
        for switch in fix_answer(entry_id, entries[entry_id]["function"], truth, IMPROVED)[1]:
            touched.setdefault(switch, []).append(entry_id)
    assert {switch: sorted(ids) for switch, ids in touched.items()} == ANSWER_FIX_ENTRIES
    assert all(fix_answer(e, entries[e]["function"], answers[e], FAITHFUL)[1] == [] for e in answers)
