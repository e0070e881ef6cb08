"""Size caps (issue 33, item 4): a model reply, an agent answer, a tool result and a stderr tail are
kept in a record within a limit (``--size-limit``): over it, a head and a tail around a marker, the
original byte count in ``trace.truncated``; and every text is stored once per record (the final text
is the last round's, written once)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from protocol_server import Api, ProtocolServer, Turn

import callbench
from callbench.catalog import catalog
from callbench.errors import ConfigError
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.harness.config import RunConfig
from callbench.types.records import CaseRecord
from callbench.types.run_options import DEFAULT_SIZE_LIMITS, parse_size_limits
from callbench.types.textcap import MARKER, cap_text, cap_value, utf8_size
from callbench.types.trace import KEEP_COPIES, RoundInfo, Trace

MB = 1_000_000
HEAD, TAIL = "HEAD-OF-THE-REPLY ", " END-OF-THE-REPLY"


def big_text(size: int, filler: str = "é") -> str:
    """A text of about ``size`` UTF-8 bytes with a recognisable head and tail."""
    middle = filler * ((size - len(HEAD) - len(TAIL)) // utf8_size(filler))
    return HEAD + middle + TAIL


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", *args], capture_output=True, text=True, timeout=300
    )


def records_of(run_dir: Path) -> list[CaseRecord]:
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [CaseRecord.model_validate_json(line) for line in lines]


# --- the helper ------------------------------------------------------------------------------


def test_a_text_within_its_limit_is_kept_as_it_is() -> None:
    for text in ("", "short", "é" * 256, "\ud800" * 10):
        assert cap_text(text, 1024) == (text, None)
    assert cap_text("x" * 1024, 1024) == ("x" * 1024, None)


@pytest.mark.parametrize("filler", ["x", "é", "€", "😀", "\ud800", "\udcff"])
def test_over_its_limit_a_text_keeps_a_head_and_a_tail_cut_on_characters(filler: str) -> None:
    text = big_text(100_000, filler)
    capped, size = cap_text(text, 1000)
    assert size == utf8_size(text)
    head, sep, tail = capped.partition("\n…[callbench: ")
    assert sep and head.startswith(HEAD) and tail.endswith(TAIL)
    kept = utf8_size(head) + utf8_size(tail.partition("]…\n")[2])
    assert 1000 - 6 <= kept <= 1000  # whole characters: at most 3 bytes short on each side
    assert MARKER.format(cut=size - kept) in capped
    assert text.startswith(head) and text.endswith(tail.partition("]…\n")[2])


def test_a_tool_result_is_measured_by_its_json_and_over_the_limit_becomes_its_capped_text() -> None:
    small = {"rows": [1, 2, 3]}
    assert cap_value(small, 1000) == (small, None)
    assert cap_value(12345, 64) == (12345, None)
    big = {"rows": ["é" * 50] * 100}
    capped, size = cap_value(big, 1000)
    assert isinstance(capped, str) and size == utf8_size(json.dumps(big, ensure_ascii=False))
    assert capped.startswith('{"rows": ["éé') and capped.endswith('éé"]}')


def test_the_option_takes_units_and_keeps_the_defaults_of_keys_not_given() -> None:
    assert parse_size_limits(None) == DEFAULT_SIZE_LIMITS
    limits = parse_size_limits(["reply=2MB,answer=512KiB", "stderr=4096"])
    assert limits == {**DEFAULT_SIZE_LIMITS, "reply": 2 * MB, "answer": 512 * 1024, "stderr": 4096}
    assert parse_size_limits({"tool_result": "1.5 mib"})["tool_result"] == int(1.5 * 2**20)
    assert RunConfig(size_limits={"reply": 100_000}).size_limits["reply"] == 100_000
    for bad, words in (
        ("replay=2MB", "unknown key 'replay'"),
        ("reply=2XB", "reply='2XB' is not a size"),
        ("reply=-1", "reply='-1' is not a size"),
        ("reply=10B", "of at least 64 B"),
        ("reply", "expects KEY=SIZE"),
    ):
        with pytest.raises(ConfigError, match=words):
            parse_size_limits([bad])


def test_a_bad_size_limit_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for bad, words in (("reply=2XB", "reply='2XB' is not a size"), ("warp=1MB", "unknown key 'warp'")):
        done = cli("run", "--size-limit", bad, "-o", str(tmp_path / "never"))
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "--size-limit" in lines[0] and words in lines[0], done.stderr
        assert not (tmp_path / "never").exists()


# --- the final text, stored once ---------------------------------------------------------------


def test_the_final_text_is_written_once_and_read_back_and_old_records_read_the_same() -> None:
    rounds = [
        RoundInfo(index=1, started_at=0.0, text="calling"),
        RoundInfo(index=2, started_at=1.0, text="42"),
    ]
    trace = Trace(rounds=rounds, final_text="42")
    data = json.loads(trace.model_dump_json())
    assert data["final_text"] is None and data["rounds"][1]["text"] == "42"
    assert Trace.model_validate_json(trace.model_dump_json()) == trace
    old = {**data, "final_text": "42"}  # as records were written before: the copy in full
    assert Trace.model_validate(old) == trace
    other = Trace(rounds=rounds, final_text="something else")  # not the last round's: kept
    assert json.loads(other.model_dump_json())["final_text"] == "something else"
    assert Trace(rounds=rounds).final_text == ""  # a trace built in code without one has none
    # A record written before (the copy in full) is written back as it was read, so re-scoring it
    # changes its line only where a verdict changes: a human review is tied to the line's hash.
    old_line = json.dumps(old, separators=(",", ":"))
    assert Trace.model_validate_json(old_line).model_dump_json() == old_line


# --- through real runs -------------------------------------------------------------------------


def test_a_5_mb_reply_is_stored_once_as_a_head_and_a_tail_and_rescoring_agrees(tmp_path: Path) -> None:
    reply = big_text(5 * MB)

    def responder(api: Api, body: dict[str, Any]) -> Turn:
        return Turn(text=reply)

    run_dir = tmp_path / "run"
    with ProtocolServer(responder=responder) as server:
        callbench.run(
            "starter", f"openai:m@{server.url}", out_dir=run_dir, cache=False, case_ids=["weather_paris"]
        )
    raw = (run_dir / "records.jsonl").read_bytes()
    assert len(raw) < 1.1 * 2**20  # the 1 MiB default: 5 MB twice (round and final text) before
    assert raw.count(HEAD.encode()) == 1 and raw.count(TAIL.encode()) == 1  # the text appears once
    [record] = records_of(run_dir)
    trace = record.trace
    size = utf8_size(reply)
    assert trace.truncated == {"rounds[0].text": size, "final_text": size}
    assert trace.final_text == trace.rounds[0].text  # read back from the round
    assert trace.final_text.startswith(HEAD) and trace.final_text.endswith(TAIL)
    assert (
        "bytes cut]" in trace.final_text and utf8_size(trace.final_text) < DEFAULT_SIZE_LIMITS["reply"] + 100
    )
    before = {tier: v.codes for tier, v in record.verdicts.items()}
    done = cli("score", str(run_dir))
    assert done.returncode == 0, done.stderr
    [again] = records_of(run_dir)
    assert {tier: v.codes for tier, v in again.verdicts.items()} == before
    assert again.trace == trace
    old_format = json.loads(raw)  # as written before: the final text copied out in full
    old_format["trace"]["final_text"] = old_format["trace"]["rounds"][0]["text"]
    read = CaseRecord.model_validate_json(json.dumps(old_format))
    whole = {KEEP_COPIES: True}  # both with final_text written out: the same values
    assert read.model_dump(context=whole) == record.model_dump(context=whole)


def test_a_size_limit_given_on_the_command_line_changes_the_cap_and_is_recorded(tmp_path: Path) -> None:
    reply = big_text(50_000)

    def responder(api: Api, body: dict[str, Any]) -> Turn:
        return Turn(text=reply)

    run_dir = tmp_path / "run"
    with ProtocolServer(responder=responder) as server:
        args = ["--suite", "starter", "--model", f"openai:m@{server.url}", "--case", "weather_paris"]
        done = cli("run", *args, "--no-cache", "--size-limit", "reply=4KB", "-o", str(run_dir))
    assert done.returncode == 0, done.stderr
    [record] = records_of(run_dir)
    assert record.trace.truncated == {"rounds[0].text": utf8_size(reply), "final_text": utf8_size(reply)}
    assert utf8_size(record.trace.final_text) <= 4000 + len(MARKER) + 12
    header = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert header["options"]["config"]["size_limits"] == {**DEFAULT_SIZE_LIMITS, "reply": 4000}
    # a resume must keep it: it changes what is scored
    resumed = cli("run", "--resume", str(run_dir), "--size-limit", "reply=8KB")
    assert resumed.returncode == 2 and "cannot resume: --size-limit" in resumed.stderr, resumed.stderr


ECHO = {
    "name": "echo",
    "description": "Echo a text back, many times.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
}
RESULT_REPEAT = 300_000


class BigEchoSession(ExecutorSession):
    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(ok=True, result={"echo": [arguments.get("text")] * RESULT_REPEAT})


class BigEchoExecutor(Executor):
    name = "big-echo"

    def start(self, case: Any, workdir: Path, suite: Any) -> ExecutorSession:
        return BigEchoSession()


def echo_suite(root: Path) -> Path:
    folder = root / "echo-suite"
    (folder / "tools").mkdir(parents=True)
    (folder / "suite.yaml").write_text("name: big-echo\nexecutor: big-echo\n")
    (folder / "tools" / "echo.json").write_text(json.dumps(ECHO))
    case = {
        "id": "c0",
        "category": "echo",
        "instruction": "Echo hi.",
        "expected": [{"tool": "echo", "arguments": {"text": "hi"}}],
    }
    (folder / "cases.jsonl").write_text(json.dumps(case) + "\n")
    return folder


def test_a_tool_result_over_its_limit_is_stored_capped_while_the_model_hears_it_whole(tmp_path: Path) -> None:
    catalog().executors.register("big-echo", BigEchoExecutor, replace=True)
    heard: list[str] = []

    def responder(api: Api, body: dict[str, Any]) -> Turn:
        last = body["messages"][-1]
        if last.get("role") == "tool":
            heard.append(last["content"])
            return Turn(text="Echoed.")
        return Turn(calls=[("echo", '{"text": "hi"}')])

    with ProtocolServer(responder=responder) as server:
        result = callbench.run(
            str(echo_suite(tmp_path)),
            f"openai:m@{server.url}",
            out_dir=tmp_path / "run",
            cache=False,
            size_limits={"tool_result": "64KiB"},
        )
    whole = json.dumps({"echo": ["hi"] * RESULT_REPEAT}, ensure_ascii=False)
    assert len(heard) == 1 and heard[0].startswith(whole)  # the model's conversation is unchanged
    [record] = result.records
    [call] = record.trace.calls
    assert record.trace.truncated == {"calls[0].result": len(whole.encode())}
    assert isinstance(call.result, str) and call.result.startswith('{"echo": ["hi", "hi"')
    assert call.result.endswith('"hi", "hi"]}') and utf8_size(call.result) < 64 * 1024 + 100
    assert call.execution == "ok" and record.verdicts["real-tool-execution"].passed
    assert (tmp_path / "run" / "records.jsonl").stat().st_size < 100_000


# --- agents under test -------------------------------------------------------------------------

ANSWER = big_text(300_000)
STDERR = big_text(200_000, "x")


async def answers_at_length(instruction: str, mcp_url: str) -> str:
    return ANSWER


async def raises_at_length(instruction: str, mcp_url: str) -> str:
    raise RuntimeError(STDERR)


def test_an_agents_answer_and_stderr_over_their_limits_keep_a_head_and_a_tail(tmp_path: Path) -> None:
    catalog().executors.register("big-echo", BigEchoExecutor, replace=True)
    suite = str(echo_suite(tmp_path))
    limits = {"answer": "100KB", "stderr": "2KB"}
    answered = callbench.run(
        suite, agent=f"py:{__name__}:answers_at_length", out_dir=tmp_path / "a", size_limits=limits
    )
    [record] = answered.records
    trace = record.trace
    last = f"rounds[{len(trace.rounds) - 1}].text"
    assert trace.truncated == {"final_text": utf8_size(ANSWER), last: utf8_size(ANSWER)}
    assert trace.final_text.startswith(HEAD) and trace.final_text.endswith(TAIL)
    assert utf8_size(trace.final_text) < 100_000 + 100
    raw = (tmp_path / "a" / "records.jsonl").read_bytes()
    assert raw.count(HEAD.encode()) == 1 and len(raw) < 120_000  # stored once
    crashed = callbench.run(
        suite, agent=f"py:{__name__}:raises_at_length", out_dir=tmp_path / "b", size_limits=limits
    )
    [record] = crashed.records
    agent = record.trace.agent
    assert agent is not None and agent.outcome == "agent_crashed"
    whole = f"RuntimeError: {STDERR}"
    assert record.trace.truncated == {"agent.stderr_tail": utf8_size(whole)}
    assert agent.stderr_tail.startswith("RuntimeError: HEAD") and agent.stderr_tail.endswith(TAIL)
    assert utf8_size(agent.stderr_tail) < 2000 + 100
