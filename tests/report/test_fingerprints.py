"""Failure fingerprints (report/fingerprints.py): signatures, the taxonomy, and the grouping of a
constructed run's failures into the right lines, in ``callbench show --failures``'s data and in the
report's "Failures by tool" table (the page's data, and the exported tables)."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from fingerprint_run import EXPECTED, FAILED, JUDGED, NFC, RTE, SERVER, write_fingerprint_run

from callbench.harness.runfolder import read_run
from callbench.report import fingerprints as fp
from callbench.report.payload import PageBuilder, load_runs, open_runs, unpack_rows
from callbench.report.table_export import render_tables, report_tables
from callbench.types.records import CaseRecord, ErrorInfo
from callbench.types.trace import Trace, TraceCall
from callbench.types.verdict import SERVING_REASONS, Reason, ReasonCode

# --- signatures -----------------------------------------------------------------------------------------

SAME = [
    ("retry 3 of 5 after 2.5 s", "retry 10 of 12 after 0.25 s"),
    ("bad value -3.5e-4 at 0x7ffe12", "bad value +12 at 0xDEADBEEF"),
    ("call call_4f2a91bc failed", "call call_99ee00aa11 failed"),
    (
        "request 3f2a9b1c-1234-4abc-9def-0123456789ab lost",
        "request 00000000-0000-4000-8000-000000000000 lost",
    ),
    ("digest deadbeef0042 differs", "digest 9a8b7c6d5e4f differs"),
    ("no such file /data/run-1/in.csv", "no such file /tmp/x/y/z.json"),
    ("cannot read ~/notes/a.txt", "cannot read ./b.md"),
    ("cannot read C:\\Users\\bob\\a.txt", "cannot read D:\\tmp\\x"),
    ("see src/callbench/x.py", "see lib/y/z.rs"),
    ("GET https://api.example.com/v1/x?id=3 failed", "GET http://localhost:8080/ failed"),
    ("mail ops@example.com", "mail a.b+c@mail.example.org"),
    ("at 2026-01-02T10:00:00Z", "at 2025-12-31 23:59:59.123+01:00"),
    ("started 12:03:44", "started 01:00:00.5"),
    ("got 'Paris'", "got 'Lyon-sur-Mer 2'"),
    ('got "Paris"', 'got "a \\" quote"'),
    ("got `x`", "got `y y`"),
    ("values [1, 2, 3]", "values [4]"),
    ("  spaced\n\tout  text ", "spaced out text"),
]
"""Pairs that differ only in a number, an id, a path, a URL, a quoted value, an e-mail address, a time
or whitespace: one signature."""

APART = [
    ("parameter 'city' is missing", "parameter 'date' is missing"),
    ("'city' is a required property", "'date' is a required property"),
    ("is not of type 'integer'", "is not of type 'string'"),
    ("tool 'search' raised KeyError", "tool 'fetch' raised KeyError"),
    ("HTTP 503 after 3 retries", "HTTP 429 after 3 retries"),
    ("no such file /a/b", "permission denied: /a/b"),
    ("KeyError: 'x'", "ValueError: 'x'"),
]
"""Pairs that are distinct errors: distinct signatures (a quoted name is kept, an HTTP status too)."""


@pytest.mark.parametrize(("a", "b"), SAME)
def test_messages_that_differ_only_in_variable_parts_share_a_signature(a: str, b: str) -> None:
    assert fp.signature(a) == fp.signature(b)


@pytest.mark.parametrize(("a", "b"), APART)
def test_distinct_errors_keep_distinct_signatures(a: str, b: str) -> None:
    assert fp.signature(a) != fp.signature(b)


def test_the_placeholders() -> None:
    text = (
        "call_4f2a91bc: GET https://x.org/a failed for ops@x.org at 2026-01-02T10:00:00Z reading "
        "/tmp/a.txt with 'v' and 42 (HTTP 503)"
    )
    assert (
        fp.signature(text)
        == "<id>: GET <url> failed for <email> at <time> reading <path> with <str> and <n> (HTTP 503)"
    )
    assert fp.signature("") == "(no message)"
    assert fp.signature("don't use 'x', it's old") == "don't use <str>, it's old"  # apostrophes open no quote
    long = fp.signature("word " * 100)
    assert len(long) == fp.MAX_SIGNATURE and long.endswith("…")
    # Text holding the private-use characters that stand for kept parts cannot corrupt the result.
    assert fp.signature("\ue000 parameter 'a' and \ue001") == "parameter 'a' and"


def test_the_strict_tiers_framing_is_dropped() -> None:
    assert fp.core_message("expected call 2 'x' (observed call 3): parameter 'a' expected 1, received 2") == (
        "parameter 'a' expected 1, received 2"
    )
    assert fp.core_message("expected call 1 one of a/b was not made") == "expected call was not made"
    assert fp.core_message("unexpected observed call 4 'x'") == "unexpected call"
    assert (
        fp.core_message("schema invalid for observed call 1 'x': $.y is bad") == "schema invalid: $.y is bad"
    )
    assert fp.core_message("something else") == "something else"


# --- the taxonomy ---------------------------------------------------------------------------------------


def test_every_reason_code_of_the_strict_tiers_has_a_class() -> None:
    """Fails when a reason code is added to ``ReasonCode`` without a class here."""
    codes = typing.get_args(ReasonCode)
    assert set(codes) | set(SERVING_REASONS) <= set(fp.REASON_CLASSES)
    for code in codes:
        assert fp.taxonomy(code) in fp.CLASSES and fp.taxonomy(code) != fp.OTHER, code
    # The issue's nine classes are all reachable.
    issue = {
        "wrong tool",
        "wrong arguments",
        "missing call",
        "extra call",
        "bad format",
        "hallucinated tool",
        "premature answer",
        "tool error",
        "infrastructure",
    }
    reached = {fp.taxonomy(c) for c in [*codes, *fp.SCORER_CLASSES, "TransientProviderError"]}
    assert issue <= reached


@pytest.mark.parametrize(
    ("code", "klass"),
    [
        ("tool_missing", "missing call"),
        ("unexpected_call", "extra call"),
        ("unexpected_state_change", "extra call"),
        ("argument_mismatch", "wrong arguments"),
        ("unknown_tool", "hallucinated tool"),
        ("malformed_arguments", "bad format"),
        ("serving_parse_suspected", "bad format"),
        ("no_structured_call", "premature answer"),
        ("execution_failed", "tool error"),
        ("wrong_order", "wrong tool"),
        ("simple_function_checker:wrong_func_name", "wrong tool"),
        ("premature_termination", "premature answer"),
        # error-record types: all infrastructure
        ("TransientProviderError", "infrastructure"),
        ("RateLimitedError", "infrastructure"),
        ("FatalProviderError", "infrastructure"),
        ("EndpointDownError", "infrastructure"),
        ("user_simulator:bad_json", "infrastructure"),
        ("tool_server_timeout", "infrastructure"),
        ("tool_server_lost", "infrastructure"),
        ("scorer:TransientProviderError", "infrastructure"),
        ("scorer_error:KeyError", "infrastructure"),
        ("tool_bug:KeyError", "infrastructure"),
        ("cassette_miss", "infrastructure"),
        ("CaseTimeout", "infrastructure"),
        ("internal:RuntimeError", "infrastructure"),
        # never dropped: an unknown code is "other"
        ("some_new_code", "other"),
        ("multiple_function_checker:wrong_count", "other"),
    ],
)
def test_taxonomy(code: str, klass: str) -> None:
    assert fp.taxonomy(code) == klass


# --- grouping a constructed run ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fingerprint_run(tmp_path_factory.mktemp("fingerprints") / "run")


def _keys(records: list[CaseRecord], indices: list[int]) -> list[str]:
    return [r.key if r.trial == 1 else f"{r.key}#{r.trial}" for r in (records[i] for i in indices)]


def test_the_constructed_run_groups_into_exactly_the_expected_lines(run_dir: Path) -> None:
    run = read_run(run_dir)
    sections = fp.FailureTally.of(run.records, run.header).ordered_sections()
    assert [s.tier for s in sections] == [NFC, RTE, "error records"]
    for section in sections:
        got = {key: _keys(run.records, line.records) for key, line in section.lines.items()}
        assert got == EXPECTED[section.tier], section.tier
        assert (section.failed, section.judged) == (FAILED[section.tier], JUDGED[section.tier])
        for line in section.lines.values():  # examples: the first keys behind the line
            assert (
                line.examples
                == got[(line.failure_class, line.tool, line.server, line.signature)][: fp.EXAMPLES]
            )
    # Sorted by count; the codes behind each line kept.
    rte = sections[1].sorted_lines()
    assert [ln.count for ln in rte] == sorted((ln.count for ln in rte), reverse=True)
    assert dict(rte[0].codes) in ({"execution_failed": 4}, {"argument_mismatch": 4})


def test_a_tool_missing_reason_without_expected_steps_reads_its_tool_from_the_message() -> None:
    record = CaseRecord(key="s:c", suite="s", case_id="c", category="x", harness_mode="m")
    reason = Reason(code="tool_missing", message="expected call 1 one of a/b was not made", step="step1")
    assert fp.reason_tool(record, reason) == ("a | b", True)
    record.expected = [{"id": "step1", "tool": ["x", "y"]}]
    assert fp.reason_tool(record, reason) == ("x | y", True)
    assert fp.reason_tool(record, Reason(code="answer_mismatch", message="no")) == (fp.NO_TOOL, True)


def test_an_error_record_names_the_tool_of_a_tool_bug() -> None:
    record = CaseRecord(
        key="s:c",
        suite="s",
        case_id="c",
        category="x",
        harness_mode="m",
        status="error",
        error=ErrorInfo(type="tool_bug:KeyError", message="tool 'lookup' raised KeyError: 'gene12'"),
        trace=Trace(calls=[TraceCall(index=0, call_id="c0", round=1, tool="other")]),
    )
    tally = fp.FailureTally.of([record])
    [line] = tally.errors.lines.values()
    assert (line.failure_class, line.tool, line.server, line.signature) == (
        "infrastructure",
        "lookup",
        "built-in",
        "tool 'lookup' raised KeyError: <str>",
    )
    assert dict(line.codes) == {"tool_bug:KeyError": 1}


def test_a_failing_verdict_without_reasons_is_shown_not_dropped() -> None:
    record = CaseRecord.model_validate(
        {
            "key": "s:c",
            "suite": "s",
            "case_id": "c",
            "category": "x",
            "harness_mode": "m",
            "verdicts": {"judge": {"scorer": "judge", "passed": False}},
        }
    )
    [section, _errors] = fp.FailureTally.of([record]).ordered_sections()
    [line] = section.lines.values()
    assert (line.failure_class, line.signature, line.count) == ("other", fp.NO_REASON, 1)


# --- the report: the page's data and the exported tables ----------------------------------------------------


def test_the_page_ships_each_line_with_exactly_its_records(run_dir: Path) -> None:
    runs = open_runs([run_dir])
    with PageBuilder(runs) as builder:
        builder.read_run(0)  # the static report's streaming path
        payload = builder.payload()
    rows = unpack_rows(payload, 0)
    data = payload["failures"]
    assert data["classes"] == list(fp.CLASSES) and data["rules"] == fp.RULES
    [run] = data["runs"]
    assert run["label"] == runs[0].label
    for section in run["sections"]:
        tier = section["tier"]
        assert (section["failed"], section["judged"], section["errors"]) == (
            FAILED[tier],
            JUDGED[tier],
            tier == "error records",
        )
        got = {}
        for line in section["lines"]:
            keys = [
                rows[i]["key"] + ("" if rows[i]["trial"] == 1 else f"#{rows[i]['trial']}")
                for i in line["records"]
            ]
            got[(line["class"], line["tool"], line["server"], line["signature"])] = keys
            assert line["count"] == len(keys) and line["share"] == pytest.approx(len(keys) / FAILED[tier])
            assert line["examples"] == keys[: fp.EXAMPLES]
        assert got == EXPECTED[tier]


def test_the_report_exports_the_failure_tables(run_dir: Path) -> None:
    tables = [t for t in report_tables(load_runs([run_dir])) if t.title.startswith("Failures by tool")]
    assert [t.title.split(" · ")[2] for t in tables] == [
        NFC,
        RTE,
        "error records (infrastructure, excluded from every tier): 4 of 18 records",
    ]
    assert tables[0].columns == list(fp.TABLE_COLUMNS)
    rte = {tuple(row[i] for i in (0, 2, 3, 4)): row for row in tables[1].rows}
    row = rte[
        (
            "tool error",
            "read_file",
            SERVER,
            "expected call did not execute successfully: ToolError: no such file <path> (request <id>)",
        )
    ]
    assert row[1] == "execution_failed" and row[5] == "4" and row[6] == "30.8%"
    assert row[7] == "demo:case-00000 demo:case-00001 demo:case-00002"
    md = render_tables([run_dir], "md")
    assert "**Failures by tool · scripted (run) · real-tool-execution · oracle-assisted: 13 failed" in md
    csv_text = render_tables([run_dir], "csv")
    assert "# Failures by tool · scripted (run) · error records" in csv_text
    errors = "infrastructure,TransientProviderError,(no tool),–,HTTP 503 after <n> retries (request id <id>)"
    assert errors + ",2,50.0%" in csv_text


def test_no_failures_section_lines_in_the_page_for_a_clean_run(tmp_path: Path) -> None:
    from synth import make_records, write_run

    run_dir = write_run(tmp_path / "clean", make_records(6, skill=1.0)[1:])  # case 0 fails a tier
    data = fp.failures_payload(load_runs([run_dir]))
    sections = data["runs"][0]["sections"]
    assert all(not s["lines"] for s in sections) and sections[-1]["errors"]
    assert fp.failure_tables(load_runs([run_dir])) == []


def test_the_live_page_gets_the_failures_of_the_records_so_far(run_dir: Path) -> None:
    from callbench.report.live import RunFollower, update_payload

    update = update_payload(RunFollower(run_dir), 0)
    rows = update["records"]
    [run] = update["failures"]["runs"]
    for section in run["sections"]:
        got = {
            (ln["class"], ln["tool"], ln["server"], ln["signature"]): [
                rows[i]["key"] + ("" if rows[i]["trial"] == 1 else f"#{rows[i]['trial']}")
                for i in ln["records"]
            ]
            for ln in section["lines"]
        }
        assert got == EXPECTED[section["tier"]]
