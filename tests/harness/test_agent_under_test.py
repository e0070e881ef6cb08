"""The agent under test (``--agent``): the user's agent runs its own loop and calls the case's tools
over MCP; callbench records, executes and scores every call as in its own loop.

Whose fault: an agent that crashes, exits non-zero, hangs or never answers is a scored failure with
its own reason code and its stderr tail; a failure on callbench's side (a tool bug behind the MCP
endpoint) is an error record that ``--resume`` re-runs.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import callbench
from callbench.catalog import catalog
from callbench.errors import ConfigError, ToolBug
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.harness.agent_episode import reconstruct_rounds
from callbench.types.records import CaseRecord
from callbench.types.trace import Trace, TraceCall

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
ECHO = {
    "name": "echo",
    "description": "Echo a text back.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
}


class EchoSession(ExecutorSession):
    """``echo`` echoes; the text ``boom`` makes the tool implementation crash (a harness fault)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if arguments.get("text") == "boom":
            raise ToolBug("echo", KeyError("boom"), "Traceback: KeyError('boom')")
        self.calls.append(arguments)
        return ToolOutcome(ok=True, result={"echo": arguments.get("text")})

    def snapshot(self) -> dict[str, Any]:
        return {"echoed": [c.get("text") for c in self.calls]}


class EchoExecutor(Executor):
    name = "aut-echo"

    def start(self, case: Any, workdir: Path, suite: Any) -> ExecutorSession:
        return EchoSession()


@pytest.fixture(autouse=True)
def _echo_executor() -> None:
    catalog().executors.register("aut-echo", EchoExecutor, replace=True)


def echo_suite(root: Path, cases: list[dict[str, Any]]) -> Path:
    folder = root / "aut-suite"
    (folder / "tools").mkdir(parents=True)
    (folder / "suite.yaml").write_text("name: aut\nexecutor: aut-echo\n")
    (folder / "tools" / "echo.json").write_text(json.dumps(ECHO))
    with (folder / "cases.jsonl").open("w") as handle:
        for case in cases:
            row = {
                "category": "echo",
                "instruction": "Echo hi.",
                "expected": [{"tool": "echo", "arguments": {"text": "hi"}}],
                **case,
            }
            handle.write(json.dumps(row) + "\n")
    return folder


AGENT_PRELUDE = """
import asyncio, json, os, sys
from mcp import Client

async def calls(pairs):
    async with Client(os.environ["CALLBENCH_MCP_URL"]) as client:
        out = []
        for name, args in pairs:
            result = await client.call_tool(name, args)
            out.append(("".join(b.text for b in result.content), result.is_error))
        return out
"""


def agent_script(root: Path, name: str, body: str) -> str:
    """A ``cmd:`` spec running a small Python agent (the prelude gives it an MCP client)."""
    path = root / f"{name}.py"
    path.write_text(AGENT_PRELUDE + textwrap.dedent(body))
    return f"cmd:{sys.executable} {path}"


def run(suite: Path, agent: str, out: Path, **options: Any) -> Any:
    options.setdefault("progress", "quiet")
    return callbench.run(str(suite), agent=agent, out_dir=out, **options)


def by_id(result: Any) -> dict[str, CaseRecord]:
    return {r.case_id: r for r in result.records}


def codes(record: CaseRecord, tier: str = "task-completion-execution") -> list[str]:
    return record.verdicts[tier].codes


# --- the MCP path scores what callbench's own loop scores ----------------------------------------


# Starter only: every genomics case is compared the same way, through both example agents, in
# tests/agents/test_example_agents_verdicts.py (a minute of CI time not spent twice).
@pytest.mark.parametrize(
    ("suite", "model", "agent"),
    [("starter", "oracle", "oracle_starter"), ("starter", "noisy:2", "noisy_starter")],
)
def test_a_built_in_agent_over_mcp_scores_what_it_scores_in_callbenchs_loop(
    tmp_path: Path, suite: str, model: str, agent: str
) -> None:
    offline = callbench.run(suite, model, out_dir=tmp_path / "offline", progress="quiet", concurrency=8)
    over_mcp = run(suite, f"py:builtin_mcp_agent:{agent}", tmp_path / "agent", concurrency=8)
    own = {r.key: r for r in offline.records}
    theirs = {r.key: r for r in over_mcp.records}
    assert set(own) == set(theirs) and len(own) > 10
    differing = [
        (key, tier)
        for key in own
        for tier in TIERS
        if (own[key].verdicts[tier].passed, own[key].verdicts[tier].codes)
        != (theirs[key].verdicts[tier].passed, theirs[key].verdicts[tier].codes)
    ]
    assert differing == []
    assert all(r.status == "completed" and r.harness_mode == "agent-under-test" for r in theirs.values())
    assert over_mcp.summary["harness_mode"] == "agent-under-test"
    if model == "oracle":
        assert all(r.verdicts[t].passed for r in theirs.values() for t in TIERS)
    else:  # the noisy agent fails some cases: the comparison above is not all-pass against all-pass
        assert any(not r.verdicts["task-completion-execution"].passed for r in theirs.values())


def test_records_carry_the_agent_the_timestamps_and_no_round_budget(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0"}])
    spec = agent_script(
        tmp_path,
        "good",
        """
        print(asyncio.run(calls([("echo", {"text": "hi"})]))[0][0], file=sys.stderr)
        print("done: hi")
        """,
    )
    record = by_id(run(suite, spec, tmp_path / "out"))["c0"]
    assert record.status == "completed" and all(record.verdicts[t].passed for t in TIERS)
    assert record.harness_mode == "agent-under-test"
    assert record.harness_assistance == {"step_count_disclosed": False, "round_budget": "n/a"}
    trace = record.trace
    assert trace.final_text == "done: hi" and trace.stop_reason == "answer"
    assert trace.agent is not None and trace.agent.agent == spec and trace.agent.exit_code == 0
    assert '{"echo": "hi"}' in trace.agent.stderr_tail  # the agent heard the offline loop's text
    (call,) = trace.calls
    assert call.tool == "echo" and call.execution == "ok" and call.started_at is not None
    assert [r.reconstructed for r in trace.rounds] == [True, True] and trace.rounds[-1].text == "done: hi"
    assert record.trace.final_state == {"echoed": ["hi"]}


def test_the_answer_file_wins_over_stdout(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0", "expected_answer": {"contains": ["filed"]}}])
    spec = agent_script(
        tmp_path,
        "file",
        """
        asyncio.run(calls([("echo", {"text": "hi"})]))
        open(os.environ["CALLBENCH_ANSWER_FILE"], "w").write("answer filed")
        request = json.load(open(os.environ["CALLBENCH_REQUEST"]))
        assert request["case_id"] == os.environ["CALLBENCH_CASE_ID"] == "aut:c0", request
        assert request["mcp_stdio"][-1] == os.environ["CALLBENCH_MCP_URL"]
        print("log line on stdout")
        """,
    )
    record = by_id(run(suite, spec, tmp_path / "out"))["c0"]
    assert record.trace.final_text == "answer filed", record.trace.agent
    assert record.trace.agent and record.trace.agent.details["answer_source"] == "answer_file"
    assert record.verdicts["task-completion-execution"].passed


# --- whose fault ---------------------------------------------------------------------------------


def test_a_crashing_a_hanging_and_a_silent_agent_are_scored_failures_with_their_own_codes(
    tmp_path: Path,
) -> None:
    suite = echo_suite(tmp_path / "slow", [{"id": "c0"}])
    quick = echo_suite(tmp_path / "quick", [{"id": "c0", "timeout_s": 2}])
    crash = agent_script(
        tmp_path,
        "crash",
        """
        asyncio.run(calls([("echo", {"text": "hi"})]))
        print("Traceback (most recent call last):\\nKeyError: 'plan'", file=sys.stderr)
        sys.exit(3)
        """,
    )
    hang = agent_script(tmp_path, "hang", "import time\ntime.sleep(60)\n")
    silent = agent_script(tmp_path, "silent", 'asyncio.run(calls([("echo", {"text": "hi"})]))\n')
    crashed = by_id(run(suite, crash, tmp_path / "crash"))["c0"]
    assert crashed.status == "completed" and crashed.trace.stop_reason == "agent_crashed"
    assert crashed.trace.agent and crashed.trace.agent.exit_code == 3
    assert "KeyError: 'plan'" in crashed.trace.agent.stderr_tail
    # the calls it made before crashing were right, but a crashed agent fails every strict tier
    assert all(codes(crashed, t) == ["agent_crashed"] for t in TIERS)
    hung = by_id(run(quick, hang, tmp_path / "hang"))["c0"]
    assert hung.status == "completed" and codes(hung) == ["no_structured_call", "agent_timeout"]
    assert hung.duration_ms < 20_000  # killed at the limit, not after its minute
    quiet = by_id(run(suite, silent, tmp_path / "silent"))["c0"]
    assert quiet.status == "completed" and codes(quiet) == ["no_answer"]


def test_a_tool_bug_behind_the_endpoint_is_an_error_record_and_resume_reruns_it(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "ok"}, {"id": "bug", "instruction": "Echo boom."}])
    spec = agent_script(
        tmp_path,
        "echoer",
        """
        text = os.environ["CALLBENCH_INSTRUCTION"].split()[-1].rstrip(".")
        (reply, is_error), = asyncio.run(calls([("echo", {"text": text})]))
        print("done" if not is_error else "tool failed: " + reply)
        """,
    )
    first = run(suite, spec, tmp_path / "out")
    records = by_id(first)
    assert records["ok"].status == "completed"
    assert records["bug"].status == "error" and records["bug"].error is not None
    assert records["bug"].error.type.startswith("tool_bug")
    assert first.summary["n_error"] == 1
    again = callbench.run(str(suite), agent=spec, out_dir=tmp_path / "out", resume=True, progress="quiet")
    lines = (tmp_path / "out" / "records.jsonl").read_text().splitlines()
    assert sum('"case_id":"bug"' in line for line in lines) == 2  # re-run once, nothing else re-run
    assert by_id(again)["bug"].status == "error"


def test_unknown_tools_and_schema_invalid_calls_are_recorded_and_answered_as_offline(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0"}])
    spec = agent_script(
        tmp_path,
        "sloppy",
        """
        pairs = [("shout", {"text": "hi"}), ("echo", {"text": 5}), ("echo", {"text": "hi"})]
        replies = asyncio.run(calls(pairs))
        print(json.dumps(replies))
        """,
    )
    record = by_id(run(suite, spec, tmp_path / "out"))["c0"]
    unknown, invalid, good = record.trace.calls
    assert (unknown.known_tool, unknown.execution) == (False, "rejected")
    assert (invalid.schema_valid, invalid.execution) == (False, "rejected")
    assert good.execution == "ok"
    heard = json.loads(record.trace.final_text)
    assert heard[0][1] is True and heard[0][0].startswith('{"error": "Invalid call')
    assert heard[2] == ['{"echo": "hi"}', False]
    verdict = record.verdicts["native-function-contract"]
    assert not verdict.passed and {"unknown_tool", "schema_invalid"} <= set(verdict.codes)


# --- bad input: one line before any case runs ----------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("cmd:no-such-agent-binary --x", "command 'no-such-agent-binary' not found"),
        ("http:http://127.0.0.1:9/agent", "nothing accepts connections at 127.0.0.1:9"),
        ("py:no_such_module_here:agent", "cannot import module 'no_such_module_here'"),
        ("py:json:dumps", "'dumps' must be an async function"),
        ("ftp:whatever", "expected cmd:COMMAND, http:URL or py:module:function"),
        ("cmd:", "nothing after 'cmd:'"),
    ],
)
def test_an_agent_that_cannot_start_is_one_line_before_any_case_runs(
    tmp_path: Path, agent: str, message: str
) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0"}])
    with pytest.raises(ConfigError, match=message) as raised:
        run(suite, agent, tmp_path / "out")
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "out" / "records.jsonl").exists()


def test_agent_replaces_model_and_its_mode(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0"}])
    with pytest.raises(ConfigError, match="--agent replaces --model"):
        callbench.run(
            str(suite), "oracle", agent="py:builtin_mcp_agent:oracle_starter", out_dir=tmp_path / "a"
        )
    with pytest.raises(ConfigError, match="does not apply to --agent"):
        run(suite, "py:builtin_mcp_agent:oracle_starter", tmp_path / "b", harness_mode="oracle-assisted")
    with pytest.raises(ConfigError, match="needs --agent"):
        callbench.run(str(suite), "oracle", harness_mode="agent-under-test", out_dir=tmp_path / "c")


# --- rounds for display --------------------------------------------------------------------------


def test_rounds_are_reconstructed_from_call_timing_for_display_only() -> None:
    def call(i: int, at: float, ms: float) -> TraceCall:
        return TraceCall(index=i, call_id=f"c{i}", round=0, tool="t", started_at=at, duration_ms=ms)

    trace = Trace(calls=[call(0, 10.0, 5), call(1, 10.01, 5), call(2, 12.0, 5)], final_text="ok")
    rounds = reconstruct_rounds(trace)
    assert [r.call_ids for r in rounds] == [["c0", "c1"], ["c2"], []]
    assert [c.round for c in trace.calls] == [1, 1, 2] and rounds[-1].text == "ok"


# --- http: agents --------------------------------------------------------------------------------


class AgentService:
    """A user's agent service on 127.0.0.1: calls ``echo`` over MCP, then replies as ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests: list[dict[str, Any]] = []

    async def handle(self, request: Any) -> Any:
        from aiohttp import web
        from mcp import Client

        body = await request.json()
        self.requests.append(body)
        async with Client(body["mcp_url"]) as client:
            await client.call_tool("echo", {"text": "hi"})
        if self.mode == "json":
            return web.json_response({"answer": "done: hi"})
        if self.mode == "text":
            return web.Response(text="plain done")
        if self.mode == "malformed":
            return web.Response(text='{"answer": "done', content_type="application/json")
        return web.Response(status=500, text="agent service exploded: KeyError('plan')")


@pytest.mark.parametrize(
    ("mode", "outcome", "answer"),
    [
        ("json", "answer", "done: hi"),
        ("text", "answer", "plain done"),
        ("malformed", "answer", '{"answer": "done'),
        ("error", "agent_crashed", ""),
    ],
)
def test_an_http_agent_service_is_posted_the_request_and_its_reply_is_recorded_as_it_came(
    tmp_path: Path, mode: str, outcome: str, answer: str
) -> None:
    import asyncio
    import threading

    from aiohttp import web

    service = AgentService(mode)
    ready = threading.Event()
    box: dict[str, Any] = {}

    def serve() -> None:
        async def main() -> None:
            app = web.Application()
            app.router.add_post("/run", service.handle)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            box["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            box["stop"] = asyncio.Event()
            box["loop"] = asyncio.get_running_loop()
            ready.set()
            await box["stop"].wait()
            await runner.cleanup()

        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        suite = echo_suite(tmp_path, [{"id": "c0"}])
        record = by_id(run(suite, f"http:http://127.0.0.1:{box['port']}/run", tmp_path / "out"))["c0"]
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(10)
    (sent,) = service.requests
    assert (
        sent["case_id"] == "aut:c0"
        and sent["instruction"] == "Echo hi."
        and sent["mcp_url"].startswith("http")
    )
    assert record.status == "completed" and record.trace.stop_reason == outcome
    assert record.trace.final_text == answer and record.trace.calls[0].execution == "ok"
    if mode == "malformed":
        assert record.trace.agent and record.trace.agent.details["malformed_reply"] is True
    if mode == "error":
        assert record.trace.agent and "KeyError('plan')" in record.trace.agent.stderr_tail
        assert codes(record) == ["agent_crashed"]


SEEN: list[dict[str, Any]] = []


async def asks_for_the_system_prompt(
    instruction: str, mcp_url: str, *, system_prompt: str, case_id: str
) -> str:
    SEEN.append({"system_prompt": system_prompt, "case_id": case_id})
    return "ok"


def test_a_py_agent_gets_the_optional_fields_it_names(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0", "system": "Be brief."}])
    SEEN.clear()
    run(suite, f"py:{__name__}:asks_for_the_system_prompt", tmp_path / "out")
    assert SEEN == [{"system_prompt": "Be brief.", "case_id": "aut:c0"}]


# --- py: agents are isolated from each other and from callbench's loop (issue 33, items 1 and 8) ---

BLOCK_S = 5.0
"""How long the blocking agent holds its thread with ``time.sleep``: past its case's limit of 2 s."""


async def echoes_after_a_pause_but_p0_blocks(instruction: str, mcp_url: str, *, case_id: str) -> str:
    """p0 blocks its thread (a synchronous call, as a careless agent makes); every other case calls
    its tool after a short pause and answers right."""
    if case_id.endswith(":p0"):
        time.sleep(BLOCK_S)
        return "hi"
    await asyncio.sleep(0.3)
    async with Client(mcp_url) as client:
        await client.call_tool("echo", {"text": "hi"})
    return "hi"


def test_an_agent_that_blocks_its_thread_fails_only_its_own_case_at_any_concurrency(tmp_path: Path) -> None:
    cases = [{"id": f"p{i}", "timeout_s": 2} for i in range(8)]
    suite = echo_suite(tmp_path, cases)
    spec = f"py:{__name__}:echoes_after_a_pause_but_p0_blocks"
    verdicts = {}
    for concurrency in (1, 8):
        started = time.perf_counter()
        records = by_id(run(suite, spec, tmp_path / f"c{concurrency}", concurrency=concurrency))
        wall = time.perf_counter() - started
        verdicts[concurrency] = {
            case: {t: r.verdicts[t].passed for t in TIERS} for case, r in records.items()
        }
        p0 = records["p0"]
        assert p0.status == "completed" and p0.trace.stop_reason == "agent_timeout"
        assert all(codes(p0, t)[-1] == "agent_timeout" for t in TIERS)
        for case in (f"p{i}" for i in range(1, 8)):
            assert records[case].status == "completed", records[case].error
            assert all(records[case].verdicts[t].passed for t in TIERS), (
                concurrency,
                case,
                codes(records[case]),
            )
            assert records[case].duration_ms < 1900  # never waited behind p0's blocked thread
        assert wall < BLOCK_S + 5  # the run does not wait for the abandoned thread
    assert verdicts[1] == verdicts[8]


STUBBORN_RUNS: list[str] = []


STUBBORN_S = 10.0


async def ignores_cancellation(instruction: str, mcp_url: str) -> str:
    """Swallows every cancellation and goes on (for about 10 s): a badly written agent."""
    STUBBORN_RUNS.append("started")
    deadline = time.monotonic() + STUBBORN_S
    while time.monotonic() < deadline:
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            STUBBORN_RUNS.append("cancelled")
    return "hi"


def test_an_agent_that_ignores_cancellation_is_abandoned_at_its_limit(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0", "timeout_s": 0.5}])
    STUBBORN_RUNS.clear()
    started = time.perf_counter()
    record = by_id(run(suite, f"py:{__name__}:ignores_cancellation", tmp_path / "out"))["c0"]
    # The run did not wait for the agent's 10 s (the margin is for a loaded machine: run set-up,
    # the MCP endpoint and the record take seconds there).
    assert time.perf_counter() - started < STUBBORN_S / 2
    assert record.status == "completed" and record.trace.stop_reason == "agent_timeout"
    assert record.trace.agent is not None and "cancelled" in record.trace.agent.message
    assert record.duration_ms < 1500
    deadline = time.monotonic() + 5
    while "cancelled" not in STUBBORN_RUNS and time.monotonic() < deadline:
        time.sleep(0.05)
    assert STUBBORN_RUNS[:2] == ["started", "cancelled"]  # it was asked to stop on its own loop


async def exits(instruction: str, mcp_url: str) -> str:
    raise SystemExit(4)


def test_an_agent_that_raises_system_exit_is_a_crash_not_the_end_of_the_run(tmp_path: Path) -> None:
    suite = echo_suite(tmp_path, [{"id": "c0"}, {"id": "c1"}])
    records = by_id(run(suite, f"py:{__name__}:exits", tmp_path / "out"))
    assert set(records) == {"c0", "c1"}
    for record in records.values():
        assert record.status == "completed" and codes(record) == ["no_structured_call", "agent_crashed"]
        assert record.trace.agent is not None and "SystemExit: 4" in record.trace.agent.stderr_tail


# --- keys printed by an agent, a tool or a server are blanked everywhere (issue 33, item 5) --------


class RoundCollector:
    """An observer keeping what ``on_round`` and ``on_case_end`` hand to watchers, as JSON."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_round(self, case: Any, round_info: Any, calls: list[TraceCall]) -> None:
        self.seen.append(round_info.model_dump_json())
        self.seen.extend(call.model_dump_json() for call in calls)

    def on_case_end(self, record: CaseRecord) -> None:
        self.seen.append(record.model_dump_json())


def test_keys_an_agent_or_a_tool_prints_are_blanked_in_records_summary_and_watchers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Neither key is the one the run uses (there is none): one is any *_API_KEY variable of the
    # environment, the other a keys-file entry. The agent echoes the first through a tool (so the
    # tool result holds it), answers with both, and prints both on stderr.
    env_key, file_key = 'sk-env-0123456789"abc\\def', "sk-file-fedcba9876543210"
    monkeypatch.setenv("SOMEVENDOR_API_KEY", env_key)
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[keys]\nOTHER_SERVICE_KEY = "{file_key}"\n')
    monkeypatch.setenv("CALLBENCH_KEYS_FILE", str(keys))
    suite = echo_suite(tmp_path, [{"id": "leaky"}])
    agent = agent_script(
        tmp_path,
        "leaky",
        f"""
        secret = os.environ["SOMEVENDOR_API_KEY"]
        out = asyncio.run(calls([("echo", {{"text": secret}})]))
        print("leaked", secret, "{file_key}", file=sys.stderr)
        print("the tool said " + out[0][0] + " and the file holds {file_key}")
        sys.exit(3)
        """,
    )
    collector = RoundCollector()
    result = callbench.run(
        str(suite), agent=agent, out_dir=tmp_path / "out", progress="quiet", observers=[collector]
    )
    record = result.records[0]
    run_info = record.trace.agent
    assert run_info is not None and run_info.exit_code == 3  # it did run and print
    assert "***" in record.trace.final_text and "***" in run_info.stderr_tail
    assert record.trace.calls[0].arguments == {"text": "***"}
    texts = [*(path.read_text() for path in (tmp_path / "out").iterdir() if path.is_file()), *collector.seen]
    assert texts and collector.seen
    escaped = json.dumps(env_key)[1:-1]
    for text in texts:
        assert env_key not in text and escaped not in text and file_key not in text
