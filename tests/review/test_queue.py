"""The review queue on hand-made records: each reason a case is queued, and the cases that must not be."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from callbench.errors import UserError
from callbench.review.queue import QueueItem, build_queue
from callbench.review.store import append_review, new_entry
from callbench.types.records import CaseRecord, ErrorInfo
from callbench.types.review import Rubric
from callbench.types.trace import Trace, TraceCall
from callbench.types.verdict import Reason, Verdict

CONTRACT, EXECUTION, COMPLETION = (
    "native-function-contract",
    "real-tool-execution",
    "task-completion-execution",
)
STATE = "state-match"
RUBRIC = Rubric.model_validate(
    {"criteria": [{"id": "facts", "description": "right facts", "scale": {"levels": ["wrong", "right"]}}]}
)


def _call(i: int, execution: str = "ok", **kw: Any) -> TraceCall:
    fields: dict[str, Any] = {"schema_valid": True, "arguments": {}, "execution": execution}
    fields.update(kw)
    return TraceCall(index=i, call_id=f"c{i}", round=1, tool=f"t{i}", **fields)


def _record(
    case_id: str,
    tiers: dict[str, bool],
    calls: list[TraceCall] | None = None,
    *,
    stop: str = "answer",
    partial: float | None = None,
    applicable: bool = True,
) -> CaseRecord:
    verdicts = {
        name: Verdict(
            scorer=name,
            passed=ok,
            partial=partial if partial is not None else (1.0 if ok else 0.5),
            applicable=applicable,
            reasons=[] if ok else [Reason(code="argument_mismatch", message=f"{name} says no")],
        )
        for name, ok in tiers.items()
    }
    return CaseRecord(
        key=f"s:{case_id}",
        suite="s",
        case_id=case_id,
        category="cat",
        harness_mode="production-parity",
        trace=Trace(calls=calls if calls is not None else [_call(0, "error")], stop_reason=stop),  # type: ignore[arg-type]
        verdicts=verdicts,
    )


def _all(ok: bool) -> dict[str, bool]:
    return {CONTRACT: ok, EXECUTION: ok, COMPLETION: ok}


def _write(run_dir: Path, records: list[CaseRecord], qc: list[dict[str, Any]] | None = None) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "records.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")
    if qc is not None:
        (run_dir / "summary.json").write_text(json.dumps({"qc_flags": qc}), encoding="utf-8")
    return run_dir


def _reasons(items: list[QueueItem]) -> dict[str, list[tuple[str, str]]]:
    return {i.key: [(r.code, r.scorer) for r in i.reasons] for i in items}


def test_ok_calls_yet_failed_and_what_is_not(tmp_path: Path) -> None:
    records = [
        # every call ok, answer given, the strict tiers fail: queued once per failing tier
        _record("okfail", _all(False), [_call(0), _call(1)]),
        # one call rejected: an ordinary failure
        _record("rejected", _all(False), [_call(0), _call(1, "rejected", schema_valid=False)]),
        # no call at all
        _record("nocall", _all(False), []),
        # calls ok but the loop hit its round cap (no final answer)
        _record("roundlimit", _all(False), [_call(0)], stop="max_rounds"),
        # everything passes
        _record("pass", _all(True), [_call(0)]),
    ]
    got = _reasons(build_queue([_write(tmp_path / "r", records, qc=[])]))
    assert got == {
        "s:okfail": [
            ("ok_calls_yet_failed", CONTRACT),
            ("ok_calls_yet_failed", EXECUTION),
            ("ok_calls_yet_failed", COMPLETION),
        ]
    }


def test_tier_pair_rules(tmp_path: Path) -> None:
    records = [
        _record("compl", {CONTRACT: False, EXECUTION: False, COMPLETION: True}),
        _record("contr", {CONTRACT: True, EXECUTION: False, COMPLETION: True}),
        _record("invert", {CONTRACT: True, EXECUTION: True, COMPLETION: False}),
        # every tier fails together: consistent, nothing to ask a person
        _record("nested", {CONTRACT: False, EXECUTION: False, COMPLETION: False}),
    ]
    got = _reasons(build_queue([_write(tmp_path / "r", records, qc=[])]))
    assert got == {
        "s:compl": [("completion_pass_execution_fail", EXECUTION)],
        "s:contr": [
            ("completion_pass_execution_fail", EXECUTION),
            ("contract_pass_execution_fail", EXECUTION),
        ],
        "s:invert": [("stricter_tier_passed", COMPLETION), ("stricter_tier_passed", COMPLETION)],
    }
    detail = build_queue([tmp_path / "r"])[0].reasons[0].detail
    assert detail == f"{COMPLETION} passes; {EXECUTION}: argument_mismatch: {EXECUTION} says no"


def test_strict_pass_state_fail(tmp_path: Path) -> None:
    records = [
        _record("statefail", {**_all(True), STATE: False}),
        _record("stateok", {**_all(True), STATE: True}),
        # a strict tier fails too: state-match failing is no surprise
        _record("bothfail", {CONTRACT: False, EXECUTION: False, COMPLETION: False, STATE: False}),
    ]
    got = _reasons(build_queue([_write(tmp_path / "r", records, qc=[])]))
    assert got == {"s:statefail": [("strict_pass_state_fail", STATE)]}


def test_qc_flags_from_summary_and_from_records(tmp_path: Path) -> None:
    flagged = _record("flagged", _all(False), [_call(0, "error")])
    error = _record("err", _all(False))
    error.status, error.error, error.verdicts = "error", ErrorInfo(type="tool_bug:KeyError", message="x"), {}
    qc = [
        {
            "key": "s:flagged",
            "trial": "1",
            "scorer": CONTRACT,
            "flag": "zero_partial_with_successful_execution",
        },
        {
            "key": "s:err",
            "trial": "1",
            "scorer": "",
            "flag": "tool_implementation_error",
        },  # error record: not queued
        {"key": "s:gone", "trial": "1", "scorer": "", "flag": "expected_tools_not_offered"},  # no such record
    ]
    got = _reasons(build_queue([_write(tmp_path / "a", [flagged, error], qc=qc)]))
    assert got == {"s:flagged": [("qc_flag", CONTRACT)]}
    # no summary.json yet (a run in progress): the flags are computed from the records
    zero = _record("zero", _all(False), [_call(0), _call(1, "error")], partial=0.0)
    items = build_queue([_write(tmp_path / "b", [zero])])
    assert [(r.code, r.scorer, r.detail) for r in items[0].reasons] == [
        ("qc_flag", name, "zero_partial_with_successful_execution")
        for name in (CONTRACT, EXECUTION, COMPLETION)
    ]


def test_runs_disagree_pairs_by_key_and_trial(tmp_path: Path) -> None:
    a = _write(
        tmp_path / "A", [_record("x", _all(True)), _record("y", _all(False)), _record("z", _all(True))], qc=[]
    )
    err = _record("z", _all(False))
    err.status, err.error, err.verdicts = "error", ErrorInfo(type="timeout", message="slow"), {}
    b = _write(
        tmp_path / "B",
        [_record("x", {CONTRACT: False, EXECUTION: False, COMPLETION: True}), _record("y", _all(False)), err],
        qc=[],
    )
    items = build_queue([a, b])
    got = {(i.run, i.key): [(r.code, r.scorer) for r in i.reasons] for i in items}
    runs = [("runs_disagree", CONTRACT), ("runs_disagree", EXECUTION)]
    # y fails in both (agreement); z is an error record in B (nothing to pair, never queued)
    assert got == {(0, "s:x"): runs, (1, "s:x"): [("completion_pass_execution_fail", EXECUTION), *runs]}
    assert items[0].reasons[0].detail == "passes in A; fails in B"


def test_manual_cases_queued_error_records_and_not_applicable_verdicts_not(tmp_path: Path) -> None:
    manual = _record("m", _all(False), [_call(0)], applicable=False)
    manual.scoring, manual.rubric = "manual", RUBRIC
    # not-applicable verdicts of an automatic record judge nothing: no tier rule fires
    moot = _record(
        "moot", {CONTRACT: False, EXECUTION: False, COMPLETION: True}, [_call(0)], applicable=False
    )
    items = build_queue([_write(tmp_path / "r", [manual, moot], qc=[])])
    assert [(i.key, i.manual, i.scorers, i.focus) for i in items] == [("s:m", True, ["rubric"], ["rubric"])]
    assert [(r.code, r.scorer) for r in items[0].reasons] == [("manual_case", "rubric")]


def test_last_line_of_a_record_wins(tmp_path: Path) -> None:
    run = _write(tmp_path / "r", [_record("x", {CONTRACT: True, EXECUTION: False, COMPLETION: True})], qc=[])
    with (run / "records.jsonl").open("a", encoding="utf-8") as handle:  # a resumed run re-ran it
        handle.write(_record("x", _all(True)).model_dump_json() + "\n")
    assert build_queue([run]) == []


def test_reviewed_and_stale_for_this_reviewer(tmp_path: Path) -> None:
    record = _record("x", {CONTRACT: True, EXECUTION: False, COMPLETION: True})
    run = _write(tmp_path / "r", [record], qc=[])
    (item,) = build_queue([run], "ann")
    assert (item.focus, item.reviewed, item.stale, item.scorers) == (
        [EXECUTION],
        False,
        False,
        [CONTRACT, EXECUTION, COMPLETION],
    )
    append_review(run, new_entry(run, "bob", "s:x", 1, EXECUTION, "agree"))
    assert not build_queue([run], "ann")[0].reviewed  # another reviewer's entry does not count for ann
    append_review(run, new_entry(run, "ann", "s:x", 1, CONTRACT, "agree"))
    assert not build_queue([run], "ann")[0].reviewed  # not the scorer the reasons name
    append_review(
        run, new_entry(run, "ann", "s:x", 1, EXECUTION, "overturn_pass", reason="harness_fault", note="n")
    )
    (item,) = build_queue([run], "ann")
    assert item.reviewed and not item.stale
    assert item.to_json()["own"][EXECUTION]["decision"] == "overturn_pass"
    assert item.to_json()["own"][EXECUTION]["stale"] is False
    # the case is re-scored: the record line changes, ann's entries are stale and no longer count
    record.verdicts[CONTRACT].rationale = "re-scored"
    _write(run, [record])
    (item,) = build_queue([run], "ann")
    assert (item.reviewed, item.stale, sorted(item.stale_scorers)) == (False, True, [CONTRACT, EXECUTION])
    assert item.to_json()["own"][EXECUTION]["stale"] is True


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run folder"):
        build_queue([tmp_path])
