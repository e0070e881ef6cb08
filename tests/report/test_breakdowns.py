"""Breakdowns across runs (report/breakdowns.py) on hand-built records with hand-computed figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from callbench.harness.runfolder import RunFolder
from callbench.report.breakdowns import (
    NO_CALL,
    NO_STEP,
    breakdown_tables,
    breakdowns_payload,
    run_stats,
    step_pairs,
    tier_order,
)
from callbench.types.records import CaseRecord, RunHeader

NFC, RTE = "native-function-contract", "real-tool-execution"


def call(tool: str, index: int, **kw: Any) -> dict[str, Any]:
    base = {
        "index": index,
        "call_id": f"c{index}",
        "round": 1,
        "tool": tool,
        "arguments": {},
        "schema_valid": True,
    }
    return base | {"execution": "ok"} | kw


def verdict(
    tier: str, passed: bool, codes: list[str] = (), matches: list[tuple[int, int]] | None = None
) -> dict:
    details = (
        {} if matches is None else {"matches": [{"expected_index": i, "call_index": c} for i, c in matches]}
    )
    return {
        "scorer": tier,
        "passed": passed,
        "partial": 1.0 if passed else 0.0,
        "reasons": [{"code": c, "message": c} for c in codes],
        "details": details,
    }


def record(
    case: str, category: str, expected: list[list[str]], calls: list[dict], verdicts: dict, **kw: Any
) -> CaseRecord:
    return CaseRecord.model_validate(
        {
            "key": f"s:{case}",
            "suite": "s",
            "case_id": case,
            "category": category,
            "harness_mode": "production-parity",
            "expected_tools": expected,
            "trace": {"calls": calls},
            "verdicts": verdicts,
        }
        | kw
    )


def folder(name: str, records: list[CaseRecord], diagnostic: list[str] = ()) -> RunFolder:
    header = RunHeader(
        run_id=name,
        created_at="2026-01-01T00:00:00Z",
        callbench_version="0",
        python_version="3.11",
        model=name,
        harness_mode="production-parity",
        diagnostic_scorers=list(diagnostic),
    )
    return RunFolder(path=Path(name), header=header, records=records, label=name)


def run_a() -> RunFolder:
    recs = [
        # 0: correct single call, passes both tiers.
        record(
            "ok",
            "lookup",
            [["a"]],
            [call("a", 0)],
            {NFC: verdict(NFC, True, matches=[(0, 0)]), RTE: verdict(RTE, True, matches=[(0, 0)])},
        ),
        # 1: wrong tool in place of b; the scorer pairs nothing.
        record(
            "wrong",
            "lookup",
            [["b"]],
            [call("a", 0, execution="error", error="boom")],
            {
                NFC: verdict(NFC, False, ["tool_missing", "unexpected_call"], matches=[]),
                RTE: verdict(RTE, False, ["tool_missing"], matches=[]),
            },
        ),
        # 2: no call at all.
        record(
            "none",
            "edit",
            [["a"], ["b"]],
            [],
            {
                NFC: verdict(NFC, False, ["no_structured_call"], matches=[]),
                RTE: verdict(RTE, False, ["no_structured_call"], matches=[]),
            },
        ),
        # 3: unknown tool, unparsable and schema-invalid calls; the same code twice; an extra call.
        record(
            "messy",
            "edit",
            [["b"]],
            [
                call("ghost", 0, known_tool=False, execution="rejected"),
                call("b", 1, parse_error="bad json", schema_valid=False, execution="rejected"),
                call("b", 2, schema_valid=False, execution="rejected"),
                call("a", 3, execution="skipped"),
            ],
            {
                NFC: verdict(
                    NFC, False, ["schema_invalid", "schema_invalid", "unknown_tool"], matches=[(0, 2)]
                ),
                RTE: verdict(RTE, False, ["schema_invalid"], matches=[(0, 2)]),
            },
        ),
        # 4: an error record: excluded from every table, counted apart.
        record(
            "err",
            "edit",
            [["a"]],
            [call("a", 0)],
            {},
            status="error",
            error={"type": "Transient", "message": "503"},
        ),
        # 5: no pairing reported: positional; alternatives joined.
        record(
            "alt",
            "lookup",
            [["a", "c"], ["b"]],
            [call("c", 0), call("b", 1), call("b", 2)],
            {NFC: verdict(NFC, True), RTE: verdict(RTE, True)},
        ),
    ]
    return folder("A", recs)


def test_tier_order_puts_strict_tiers_first_and_diagnostics_last():
    names = ["state-match", "task-completion-execution", "custom", RTE, NFC]
    assert tier_order(names, ["state-match"]) == [
        NFC,
        RTE,
        "task-completion-execution",
        "custom",
        "state-match",
    ]


def test_step_pairs_use_the_scorer_pairing_then_order_then_position():
    recs = run_a().records
    assert step_pairs(recs[0], NFC) == ([("a", "a")], True)
    # Scorer paired nothing; the leftover step and call are paired in order (the confusion).
    assert step_pairs(recs[1], NFC) == ([("b", "a")], True)
    assert step_pairs(recs[2], NFC) == ([("a", NO_CALL), ("b", NO_CALL)], True)
    # Step 0 paired with call 2; calls 0, 1 and 3 matched no step.
    assert step_pairs(recs[3], NFC) == (
        [("b", "b"), (NO_STEP, "ghost"), (NO_STEP, "b"), (NO_STEP, "a")],
        True,
    )
    assert step_pairs(recs[5], NFC) == ([("a | c", "c"), ("b", "b"), (NO_STEP, "b")], False)


def test_tools_count_calls_apart_from_unknown_names_and_error_records():
    data = breakdowns_payload([run_a()])
    tools = {row["tool"]: row["cells"][0] for row in data["tools"]["rows"]}
    assert list(tools) == ["b", "a", "c"]  # by calls (b: 4, a: 3), then name
    a, b, c = tools["a"], tools["b"], tools["c"]
    # a: records 0 (ok), 1 (error), 3 (skipped); the error record's call is out.
    assert a["calls"] == 3 and a["unparsable"] == 0 and a["schema_invalid_rate"] == 0.0
    assert (
        a["executed_or_rejected"] == 2
        and a["exec_error"] == 1
        and a["exec_failure_rate"] == pytest.approx(0.5)
    )
    # b: record 3 unparsable (rejected) and schema-invalid (rejected), record 5 ok twice.
    assert b["calls"] == 4 and b["unparsable"] == 1 and b["schema_invalid"] == 1
    assert b["schema_invalid_rate"] == pytest.approx(1 / 3)
    assert b["rejected"] == 2 and b["exec_failure_rate"] == pytest.approx(2 / 4)
    assert c["calls"] == 1 and c["exec_failure_rate"] == 0.0
    assert data["tools"]["unknown"] == [{"tool": "ghost", "counts": [1]}]
    assert data["tools"]["totals"][0]["calls"] == 8  # the unknown-tool call is not among them
    assert data["tools"]["no_call_records"] == [1]
    assert data["runs"] == [{"label": "A", "records": 6, "errors": 1}]


def test_confusion_cells_list_their_records_once():
    data = breakdowns_payload([run_a()])
    nfc = next(t for t in data["confusion"][0] if t["tier"] == NFC)
    assert nfc["rows"] == ["a", "a | c", "b", NO_STEP]
    assert nfc["columns"] == ["a", "b", "c", "ghost", NO_CALL]
    cells = {(nfc["rows"][r], nfc["columns"][c]): (n, idx) for r, c, n, idx in nfc["cells"]}
    assert cells == {
        ("a", "a"): (1, [0]),
        ("b", "a"): (1, [1]),
        ("a", NO_CALL): (1, [2]),
        ("b", NO_CALL): (1, [2]),
        ("b", "b"): (2, [3, 5]),
        (NO_STEP, "ghost"): (1, [3]),
        (NO_STEP, "b"): (2, [3, 5]),
        (NO_STEP, "a"): (1, [3]),
        ("a | c", "c"): (1, [5]),
    }
    assert (nfc["records_by_scorer"], nfc["records_positional"]) == (4, 1)


def test_reason_codes_count_a_record_once_per_code_and_never_error_records():
    data = breakdowns_payload([run_a(), folder("B", [run_a().records[1]])])
    nfc = next(t for t in data["reasons"] if t["tier"] == NFC)
    assert nfc["n"] == [5, 1] and nfc["failed"] == [3, 1]
    codes = {c["code"]: c["records"] for c in nfc["codes"]}
    assert codes == {
        "tool_missing": [[1], [0]],
        "unexpected_call": [[1], [0]],
        "no_structured_call": [[2], []],
        "schema_invalid": [[3], []],
        "unknown_tool": [[3], []],
    }
    # Most frequent code first, then by name.
    assert [c["code"] for c in nfc["codes"]][:2] == ["tool_missing", "unexpected_call"]


def test_categories_side_by_side_strict_before_diagnostic():
    a = run_a()
    for r in a.records:
        if r.status != "error":
            r.verdicts["state-match"] = r.verdicts[NFC].model_copy(update={"scorer": "state-match"})
    a.header.diagnostic_scorers = ["state-match"]
    b = folder("B", [a.records[0]])
    data = breakdowns_payload([a, b])
    assert [(t["tier"], t["diagnostic"]) for t in data["tiers"]] == [
        (NFC, False),
        (RTE, False),
        ("state-match", True),
    ]
    assert [t["tier"] for t in data["categories"]] == [NFC, RTE, "state-match"]
    nfc = data["categories"][0]
    rows = {row["category"]: row["cells"] for row in nfc["rows"]}
    # Run A: lookup = ok, wrong, alt (2 of 3 pass); edit = none, messy (0 of 2); the error record is out.
    assert rows["lookup"][0]["n"] == 3 and rows["lookup"][0]["passed"] == 2
    assert rows["lookup"][0]["estimate"] == pytest.approx(2 / 3)
    assert rows["lookup"][0]["low"] < 2 / 3 < rows["lookup"][0]["high"]
    assert rows["edit"][0]["n"] == 2 and rows["edit"][0]["estimate"] == 0.0
    assert rows["lookup"][1]["n"] == 1 and rows["edit"][1] is None  # run B has no edit case
    assert data["categories"][2]["diagnostic"] is True


def test_breakdown_tables_render_every_table_as_text():
    a = run_a()
    tables = breakdown_tables([a], [run_stats(a)])
    titles = [t.title for t in tables]
    assert titles[0].startswith(f"Accuracy by category · {NFC} (strict)")
    assert "Calls per tool" in titles and "Calls to tools not offered (unknown tools)" in titles
    tools = tables[titles.index("Calls per tool")]
    assert tools.rows[0] == ["b", "4", "1", "33.3", "50.0"]
    assert tools.rows[1] == ["a", "3", "0", "0.0", "50.0"]
    assert tools.rows[-1][0] == "(all offered tools)" and tools.rows[-1][1] == "8"
    assert "A: 1 error records left out" in tools.notes
    conf = tables[titles.index(f"Expected vs called tool · A · {NFC}")]
    assert conf.columns == ["Expected \\ called", "a", "b", "c", "ghost", NO_CALL]
    assert conf.rows[2] == ["b", "1", "2", "0", "0", "1"]
    reasons = tables[titles.index(f"Reason codes · {NFC} (strict) · production-parity")]
    assert reasons.rows[0] == ["(failed records)", "3"]
    assert all(len(r) == len(t.columns) for t in tables for r in t.rows)
