"""A constructed run whose failure messages differ only in numbers, ids, paths and quoted values, for
the failure-fingerprint tests (``callbench show --failures``, the report's "Failures by tool").

:data:`EXPECTED` lists the lines the grouping must find: per section, (class, tool, server, signature)
-> the record keys behind the line (``key`` or ``key#trial``), exactly.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from synth import make_record, write_run

NFC = "native-function-contract"
RTE = "real-tool-execution"
SERVER = "files@1.2.0"
"""The live tool server of the suite ``demo``: it lists read_file and write_file."""

TOOL_SOURCES = [
    {
        "kind": "mcp",
        "source": "stdio:files-server --root /data",
        "suites": ["demo"],
        "server_name": "files",
        "server_version": "1.2.0",
        "tools": {"read_file": "a" * 64, "write_file": "b" * 64},
    }
]


def _call(
    index: int, tool: str, *, known: bool = True, execution: str = "ok", error: str | None = None
) -> dict[str, Any]:
    return {
        "index": index,
        "call_id": f"call_{index}",
        "round": 1,
        "tool": tool,
        "arguments": {},
        "known_tool": known,
        "schema_valid": known,
        "execution": execution,
        "error": error,
    }


def _verdict(tier: str, reasons: list[dict[str, Any]]) -> dict[str, Any]:
    return {"scorer": tier, "passed": not reasons, "reasons": reasons, "rationale": "", "details": {}}


def _record(
    i: int,
    calls: list[dict[str, Any]],
    nfc: list[dict[str, Any]],
    rte: list[dict[str, Any]],
    *,
    trial: int = 1,
    expected: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    base = make_record(i, rng=random.Random(i), trial=trial, skill=1.0)
    base["trace"]["calls"] = calls
    base["verdicts"] = {NFC: _verdict(NFC, nfc), RTE: _verdict(RTE, rte)}
    if expected is not None:
        base["expected"] = expected
    return base


def _error(i: int, kind: str, message: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    base = make_record(i, rng=random.Random(i), skill=1.0)
    base.update(status="error", error={"type": kind, "message": message}, verdicts={})
    base["trace"] = {"rounds": [], "calls": calls or []}
    return base


def _reason(
    code: str, message: str, *, call_index: int | None = None, step: str | None = None
) -> dict[str, Any]:
    return {"code": code, "message": message, "call_index": call_index, "step": step}


def records() -> list[dict[str, Any]]:
    out = []
    for i in range(4):  # the same missing file, under other paths and request ids
        message = (
            f"expected call 1 'read_file' did not execute successfully: ToolError: no such file "
            f"/data/run-{i}/input{i}.csv (request 3f2a9b1c-0000-4abc-9def-00000000000{i})"
        )
        calls = [_call(0, "read_file", execution="error", error=message.split(": ", 1)[1])]
        out.append(
            _record(i, calls, [], [_reason("execution_failed", message, call_index=0, step="read_file")])
        )
    for i in (4, 5):  # another error of the same tool: its own line
        message = (
            f"expected call 1 'read_file' did not execute successfully: permission denied: '/etc/shadow{i}'"
        )
        calls = [_call(0, "read_file", execution="error")]
        out.append(
            _record(i, calls, [], [_reason("execution_failed", message, call_index=0, step="read_file")])
        )
    for i, trial in ((6, 1), (6, 2), (7, 1), (8, 1)):  # one wrong value, in both tiers
        message = (
            f"expected call 1 'search_genes' (observed call {i - 5}): parameter 'name' expected "
            f"'gene{i}', received 'gene{i + trial}'"
        )
        reasons = [_reason("argument_mismatch", message, call_index=0, step="search_genes")]
        out.append(_record(i, [_call(0, "search_genes")], reasons, reasons, trial=trial))
    limit = [
        _reason(
            "argument_mismatch",
            "expected call 1 'search_genes' (observed call 1): parameter 'limit' expected 5, received 50",
            call_index=0,
            step="search_genes",
        )
    ]
    out.append(_record(9, [_call(0, "search_genes")], limit, limit))  # another parameter: another line
    unknown = [
        _reason(
            "unknown_tool",
            "schema invalid for observed call 1 'delete_everything': unknown tool 'delete_everything'",
            call_index=0,
        )
    ]
    out.append(
        _record(10, [_call(0, "delete_everything", known=False, execution="rejected")], unknown, unknown)
    )
    missing = [_reason("tool_missing", "expected call 2 'write_file' was not made", step="write_file")]
    steps = [{"id": "read_file", "tool": "read_file"}, {"id": "write_file", "tool": "write_file"}]
    out.append(_record(11, [_call(0, "read_file")], missing, missing, expected=steps))
    out.append(_error(12, "TransientProviderError", "HTTP 503 after 3 retries (request id req_8f3a2b1c9d)"))
    out.append(_error(13, "TransientProviderError", "HTTP 503 after 5 retries (request id req_1a2b3c4d5e)"))
    out.append(_error(14, "RateLimitedError", "HTTP 429 after 5 retries (request id req_99aa88bb77)"))
    out.append(
        _error(
            15,
            "tool_server_timeout",
            "the tool server did not answer call call_77ab12cd within 30.0 s",
            [_call(0, "read_file", execution="not_executed")],
        )
    )
    out.append(_record(16, [_call(0, "search_genes")], [], []))  # passes everywhere
    return out


EXPECTED: dict[str, dict[tuple[str, str, str, str], list[str]]] = {
    NFC: {
        ("wrong arguments", "search_genes", "built-in", "parameter 'name' expected <str>, received <str>"): [
            "demo:case-00006",
            "demo:case-00006#2",
            "demo:case-00007",
            "demo:case-00008",
        ],
        ("wrong arguments", "search_genes", "built-in", "parameter 'limit' expected <n>, received <n>"): [
            "demo:case-00009"
        ],
        (
            "hallucinated tool",
            "delete_everything",
            "(not offered)",
            "schema invalid: unknown tool 'delete_everything'",
        ): ["demo:case-00010"],
        ("missing call", "write_file", SERVER, "expected call was not made"): ["demo:case-00011"],
    },
    RTE: {
        (
            "tool error",
            "read_file",
            SERVER,
            "expected call did not execute successfully: ToolError: no such file <path> (request <id>)",
        ): ["demo:case-00000", "demo:case-00001", "demo:case-00002", "demo:case-00003"],
        (
            "tool error",
            "read_file",
            SERVER,
            "expected call did not execute successfully: permission denied: <str>",
        ): [
            "demo:case-00004",
            "demo:case-00005",
        ],
        ("wrong arguments", "search_genes", "built-in", "parameter 'name' expected <str>, received <str>"): [
            "demo:case-00006",
            "demo:case-00006#2",
            "demo:case-00007",
            "demo:case-00008",
        ],
        ("wrong arguments", "search_genes", "built-in", "parameter 'limit' expected <n>, received <n>"): [
            "demo:case-00009"
        ],
        (
            "hallucinated tool",
            "delete_everything",
            "(not offered)",
            "schema invalid: unknown tool 'delete_everything'",
        ): ["demo:case-00010"],
        ("missing call", "write_file", SERVER, "expected call was not made"): ["demo:case-00011"],
    },
    "error records": {
        ("infrastructure", "(no tool)", "", "HTTP 503 after <n> retries (request id <id>)"): [
            "demo:case-00012",
            "demo:case-00013",
        ],
        ("infrastructure", "(no tool)", "", "HTTP 429 after <n> retries (request id <id>)"): [
            "demo:case-00014"
        ],
        ("infrastructure", "read_file", SERVER, "the tool server did not answer call <id> within <n> s"): [
            "demo:case-00015"
        ],
    },
}
"""Every line of each section, with the records behind it (the failing records of NFC: 6..11; of RTE:
0..11; error records: 12..15)."""

FAILED = {NFC: 7, RTE: 13, "error records": 4}
JUDGED = {NFC: 14, RTE: 14, "error records": 18}


def write_fingerprint_run(run_dir: Path) -> Path:
    """Write the constructed run (with its live tool server in ``run.json``'s ``tool_sources``)."""
    write_run(run_dir, records(), model="scripted")
    header = json.loads((run_dir / "run.json").read_text())
    header["tool_sources"] = TOOL_SOURCES
    (run_dir / "run.json").write_text(json.dumps(header))
    return run_dir
