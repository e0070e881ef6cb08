"""``--tools mcp:...``: a path suite whose tools are a live MCP server's listing, called through it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import callbench
from callbench.errors import ConfigError, SuiteError

SERVERS = Path(__file__).with_name("client_servers.py")
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")


def server(mode: str) -> str:
    if mode == "faulty":
        return f"mcp:stdio:FAULTY_SLOW_S={SLOW_S} {sys.executable} {SERVERS} {mode}"
    return f"mcp:stdio:{sys.executable} {SERVERS} {mode}"


def cases_file(root: Path) -> Path:
    path = root / "echo-cases.yaml"
    rows = [
        {
            "id": "echo_twice",
            "instruction": "Say hi twice.",
            "expected": [{"tool": "echo", "arguments": {"message": "hi", "times": 2}}],
        },
        {
            "id": "plot_origin",
            "instruction": "Plot the origin.",
            "expected": [{"tool": "plot", "arguments": {"point": {"x": 0, "y": 0}}}],
        },
        {
            "id": "refused",
            "instruction": "Ask for a refusal.",
            "expected": [{"tool": "fail", "arguments": {"reason": "test"}}],
        },
    ]
    path.write_text(json.dumps({"name": "echo-mcp", "cases": rows}))
    return path


def test_a_path_suite_runs_on_a_live_servers_tools(tmp_path: Path) -> None:
    result = callbench.run(
        str(cases_file(tmp_path)), "oracle", tools=server("loose"), out_dir=tmp_path / "run", progress="quiet"
    )
    records = {r.case_id: r for r in result.records}
    assert all(records["echo_twice"].verdicts[t].passed for t in TIERS)
    assert records["echo_twice"].trace.calls[0].result == "hi hi"
    assert all(records["plot_origin"].verdicts[t].passed for t in TIERS)
    refused = records["refused"]  # the server's isError reply: a failed execution, the model's problem
    assert refused.status == "completed" and refused.trace.calls[0].execution == "error"
    assert not refused.verdicts["real-tool-execution"].passed
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    source = header["options"]["tool_source"]
    assert source["spec"] == server("loose") and any("echo" in note for note in source["notes"])


def test_tools_refuses_catalog_suites_and_cases_calling_tools_the_server_lacks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="applies to suites given as a path"):
        callbench.run("starter", "oracle", tools=server("loose"), out_dir=tmp_path / "a")
    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps({"cases": [{"id": "x", "instruction": "x", "expected": [{"tool": "ehco"}]}]}))
    with pytest.raises(Exception, match="ehco"):
        callbench.run(str(bad), "oracle", tools=server("loose"), out_dir=tmp_path / "b")


# --- a hung, a crashing and a slow tool server (issue 33, item 2) --------------------------------

SLOW_S = 0.6
"""How long the faulty server's ``slow`` takes here (1.5 s by default): cut by a case limit of 0.3 s,
in time for one of 5 s; the three runs below wait for it (and for the cut) one case after another."""
FAULT_ROWS = [
    {"id": "hang_first", "timeout_s": 2, "expected": [{"tool": "hang"}]},
    {"id": "echo_after_hang", "expected": [{"tool": "echo", "arguments": {"message": "one"}}]},
    {"id": "crash", "expected": [{"tool": "die"}]},
    {"id": "echo_after_crash", "expected": [{"tool": "echo", "arguments": {"message": "two"}}]},
    {"id": "slow_in_time", "timeout_s": 5, "expected": [{"tool": "slow"}]},
    {"id": "slow_cut", "timeout_s": 0.3, "expected": [{"tool": "slow"}]},
    {"id": "echo_last", "expected": [{"tool": "echo", "arguments": {"message": "three"}}]},
]
SERVER_FAULTS = {
    "hang_first": "tool_server_timeout",
    "crash": "tool_server_lost",
    "slow_cut": "tool_server_timeout",
}


def fault_suite(root: Path, rows: list[dict[str, object]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "faults.yaml"
    path.write_text(json.dumps({"name": "faults", "cases": [{"instruction": "Call it.", **r} for r in rows]}))
    return path


def outcomes(root: Path, rows: list[dict[str, object]], concurrency: int) -> dict[str, object]:
    """Per case: the error record's type, or the pass/fail of every tier."""
    result = callbench.run(
        str(fault_suite(root, rows)),
        "oracle",
        tools=server("faulty"),
        out_dir=root / "run",
        concurrency=concurrency,
        progress="quiet",
    )
    out: dict[str, object] = {}
    for record in result.records:
        if record.status == "error":
            assert record.error is not None
            out[record.case_id] = record.error.type
        else:
            out[record.case_id] = tuple(record.verdicts[t].passed for t in TIERS)
    return out


def test_a_hung_a_crashing_and_a_slow_server_are_error_records_that_do_not_reach_the_next_case(
    tmp_path: Path,
) -> None:
    forward = outcomes(tmp_path / "forward", FAULT_ROWS, concurrency=1)
    expected = {row["id"]: SERVER_FAULTS.get(str(row["id"]), (True, True, True)) for row in FAULT_ROWS}
    assert forward == expected
    # The same verdicts in the other order: nothing a fault left behind reaches a later case.
    assert outcomes(tmp_path / "backward", FAULT_ROWS[::-1], concurrency=1) == expected
    # Side by side, a case whose call was in flight on the server another case's fault replaced may
    # become an error record too (infrastructure, re-run by --resume), but is never scored differently.
    side_by_side = outcomes(tmp_path / "parallel", FAULT_ROWS, concurrency=4)
    for case, outcome in side_by_side.items():
        assert outcome == expected[case] or outcome in ("tool_server_timeout", "tool_server_lost"), case


def test_a_tool_server_error_record_says_what_happened(tmp_path: Path) -> None:
    rows = [FAULT_ROWS[0], FAULT_ROWS[2]]
    result = callbench.run(
        str(fault_suite(tmp_path, rows)),
        "oracle",
        tools=server("faulty"),
        out_dir=tmp_path / "run",
        concurrency=1,  # one after the other: the crash reaches a server of its own, which says why
        progress="quiet",
    )
    records = {r.case_id: r for r in result.records}
    hung, crashed = records["hang_first"], records["crash"]
    assert hung.error is not None and crashed.error is not None
    assert "ran out while waiting on the tool server" in hung.error.message
    assert "dying on purpose" in crashed.error.message  # the server's stderr tail
    assert result.summary["n_error"] == 2
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert not any(flag["flag"] == "tool_implementation_error" for flag in summary["qc_flags"])


def test_ref_resolves_against_json_text_results_of_the_users_own_server(tmp_path: Path) -> None:
    """Issue 27, item 6: most servers answer with JSON in a text block; a ``$ref`` to a field of
    that answer must resolve, or the oracle fails its own gold path (it did: 2 of 3)."""
    path = tmp_path / "shop.yaml"
    rows = [
        {
            "id": "find",
            "instruction": "Find the SKU of the red mug.",
            "expected": [{"tool": "lookup_sku", "arguments": {"name": "red mug"}}],
        },
        {
            "id": "buy",
            "instruction": "Order two red mugs.",
            "expected": [
                {"tool": "lookup_sku", "arguments": {"name": "red mug"}},
                {"tool": "order", "arguments": {"sku": {"$ref": "lookup_sku.sku"}, "quantity": 2}},
            ],
        },
        {
            "id": "buy_blue",
            "instruction": "Order one blue mug.",
            "expected": [
                {"tool": "lookup_sku", "arguments": {"name": "blue mug"}},
                {"tool": "order", "arguments": {"sku": {"$ref": "lookup_sku.sku"}, "quantity": 1}},
            ],
        },
    ]
    path.write_text(json.dumps({"name": "shop", "cases": rows}))
    result = callbench.run(
        str(path), "oracle", "all", tools=server("shop"), out_dir=tmp_path / "run", progress="quiet"
    )
    for record in result.records:
        assert record.status == "completed", record.error
        assert all(record.verdicts[t].passed for t in TIERS), (record.case_id, record.verdicts)
    buy = next(r for r in result.records if r.case_id == "buy")
    sku = buy.trace.calls[0].result["sku"]  # the text block, read as the JSON it holds
    assert buy.trace.calls[1].arguments == {"sku": sku, "quantity": 2}
    assert result.summary["tiers"]["task-completion-execution"]["accuracy"] == 1.0


def typed_shop(root: Path, ref: str) -> Path:
    path = root / "typed-shop.yaml"
    rows = [
        {
            "id": "buy",
            "instruction": "Order two red mugs.",
            "expected": [
                {"tool": "lookup_sku", "arguments": {"name": "red mug"}},
                {"tool": "order", "arguments": {"sku": {"$ref": ref}, "quantity": 2}},
            ],
        },
        {
            "id": "count",
            "instruction": "Count the items.",
            "expected": [{"tool": "miscount", "arguments": {}}],
        },
    ]
    path.write_text(json.dumps({"name": "typed-shop", "cases": rows}))
    return path


def test_a_ref_the_servers_output_schema_cannot_have_is_refused_before_any_case_runs(tmp_path: Path) -> None:
    with pytest.raises(
        SuiteError, match=r"typed-shop\.yaml:1: case 'buy': step 'order': \$ref 'lookup_sku\.skew'"
    ):
        callbench.run(
            str(typed_shop(tmp_path, "lookup_sku.skew")),
            "oracle",
            tools=server("typed"),
            out_dir=tmp_path / "run",
            progress="quiet",
        )


def test_structured_results_resolve_refs_and_a_broken_result_is_an_error_record(tmp_path: Path) -> None:
    result = callbench.run(
        str(typed_shop(tmp_path, "lookup_sku.sku")),
        "oracle",
        "all",
        tools=server("typed"),
        out_dir=tmp_path / "run",
        progress="quiet",
    )
    records = {r.case_id: r for r in result.records}
    buy, count = records["buy"], records["count"]
    assert all(buy.verdicts[t].passed for t in TIERS), buy.verdicts
    assert buy.trace.calls[1].arguments == {"sku": buy.trace.calls[0].result["sku"], "quantity": 2}
    assert count.error is not None and count.error.type == "tool_server_bad_result"  # never the model's
    assert result.summary["n_error"] == 1
