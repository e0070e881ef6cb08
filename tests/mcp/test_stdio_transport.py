"""callbench's stdio transport for MCP servers (issue 33, item 9): a line that is not JSON-RPC on a
server's stdout is one warning line, never the SDK's traceback, and the session goes on; an answer over
the size limit on one message is an error record saying so (``tool_server_too_large``), never a
time-out, and the next call on the same connection is answered."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import callbench
from callbench.errors import ConfigError
from callbench.mcp.client import MAX_MESSAGE_ENV, max_message_bytes
from callbench.mcp.stdio import LineReader, Oversized, answered_id

SERVERS = Path(__file__).with_name("client_servers.py")
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")


def server(mode: str) -> str:
    return f"mcp:stdio:{sys.executable} {SERVERS} {mode}"


def suite_file(root: Path, rows: list[dict[str, object]]) -> Path:
    path = root / "cases.yaml"
    path.write_text(json.dumps({"name": "stdio", "cases": [{"instruction": "Call it.", **r} for r in rows]}))
    return path


def test_a_line_that_is_not_json_rpc_is_one_warning_line_and_the_session_goes_on(tmp_path: Path) -> None:
    rows = [
        {"id": f"echo_{word}", "expected": [{"tool": "echo", "arguments": {"message": word}}]}
        for word in ("one", "two")
    ]
    command = [sys.executable, "-m", "callbench.cli.main", "run", "--suite", str(suite_file(tmp_path, rows))]
    done = subprocess.run(
        [*command, "--model", "oracle", "--tools", server("noisy"), "-o", str(tmp_path / "run")]
        + ["--progress", "quiet", "--concurrency", "1"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Failed to parse" not in done.stderr, done.stderr
    noise = [line for line in done.stderr.splitlines() if "not JSON-RPC" in line]
    assert len(noise) == 1, done.stderr
    assert noise[0].startswith(f"callbench: warning: MCP server '{server('noisy')[4:]}'"), noise[0]
    assert "noisy server starting (a banner, not JSON-RPC)" in noise[0]
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:  # the lines between the answers cost nothing: every call answered
        assert record["status"] == "completed", record.get("error")
        assert all(record["verdicts"][tier]["passed"] for tier in TIERS)


def test_an_answer_over_the_size_limit_is_an_error_record_saying_so_and_the_connection_goes_on(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": "fifty_mb", "expected": [{"tool": "big", "arguments": {"megabytes": 50}}]},
        {"id": "one_mb", "expected": [{"tool": "big", "arguments": {"megabytes": 1}}]},
    ]
    started = time.monotonic()
    result = callbench.run(
        str(suite_file(tmp_path, rows)),
        "oracle",
        tools=server("huge"),
        out_dir=tmp_path / "run",
        concurrency=1,
        progress="quiet",
    )
    records = {r.case_id: r for r in result.records}
    big = records["fifty_mb"]
    assert big.status == "error" and big.error is not None
    assert big.error.type == "tool_server_too_large", big.error
    message = big.error.message
    assert "its answer was 50.0 MiB, over the size limit of 16 MiB on one MCP message" in message
    assert MAX_MESSAGE_ENV in message and "timed out" not in message and "no answer" not in message
    small = records["one_mb"]  # the same connection, still serving
    assert small.status == "completed" and all(small.verdicts[t].passed for t in TIERS)
    # read in linear time: the SDK's reader took 35 s of CPU over the 50 MB line
    assert time.monotonic() - started < 60


def test_the_line_reader_drops_what_is_over_the_limit_as_it_arrives() -> None:
    reader = LineReader(limit=10)
    assert reader.feed(b'{"a": 1}\n{"b"') == [b'{"a": 1}']
    assert reader.feed(b": 2}\n") == [b'{"b": 2}']
    out = reader.feed(b"x" * 8) + reader.feed(b"y" * 8) + reader.feed(b"z" * 8 + b"\nok\n")
    assert out == [Oversized(head=b"x" * 8 + b"y" * 8, size=24), b"ok"]
    assert reader.feed(b"\n") == [b""]


def test_the_id_of_a_dropped_answer_is_read_from_its_head() -> None:
    assert answered_id(b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"yyy') == 7
    assert answered_id(b'{"id": "r-1", "jsonrpc": "2.0", "error": {"code"') == "r-1"
    # a request or a notification from the server is no answer the session waits for
    assert answered_id(b'{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":') is None
    assert answered_id(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"') is None


def test_the_size_limit_is_set_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_MESSAGE_ENV, "0.5")
    assert max_message_bytes() == 1 << 19
    monkeypatch.setenv(MAX_MESSAGE_ENV, "lots")
    with pytest.raises(ConfigError, match=f"{MAX_MESSAGE_ENV} must be a positive number of MiB"):
        max_message_bytes()
    monkeypatch.delenv(MAX_MESSAGE_ENV)
    assert max_message_bytes() == 16 << 20
