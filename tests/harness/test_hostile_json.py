"""Any valid JSON from a model, an agent or a tool is data: stored losslessly and scored, never a crash.

JSON allows what Python and UTF-8 handle badly: a lone UTF-16 surrogate (``"\\ud800"``), NUL
characters, values nested thousands deep, integers of thousands of digits, numbers past a float's
range; a server or an agent may also send bytes that are not UTF-8. Each is fed through every
provider protocol (streamed and not), the agent paths (``py:``, ``cmd:``, ``http:``), the response
cache, ``records.jsonl``, ``--watch``, ``show``, ``view`` and the report (issue 33, item 7).
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_server import Api, ProtocolServer, StreamStyle, Turn
from responses_server import Reply, ResponsesServer, model_rounds

import callbench
from callbench.cli.main import main as cli_main
from callbench.harness.runfolder import read_records
from callbench.providers.cache import ResponseCache
from callbench.providers.text_calls import detect_text_calls, parse_text_calls
from callbench.providers.wire import parse_arguments
from callbench.report.live import LiveServer
from callbench.types.jsoncodec import MAX_DEPTH, depth_exceeds, load_model, model_json_bytes
from callbench.types.messages import GenerationSettings, ModelTurn, ToolCall
from callbench.types.records import CaseRecord
from callbench.types.trace import TraceCall

SURROGATE_TEXT = "a lone \ud800 surrogate, a NUL \x00 and \udfff"
DEEP = "[" * 10_000 + "]" * 10_000
HOSTILE_ARGS = {
    "surrogate": json.dumps({"city": "Par\ud800is"}),
    "nul": json.dumps({"city": "Pa\x00ris"}),
    "deep": '{"city": ' + DEEP + "}",
    "deep100": '{"city": ' + "[" * 100 + "]" * 100 + "}",
    "digits": '{"city": ' + "9" * 5_000 + "}",
    "float": '{"city": 1e999999}',
    "nan": '{"city": NaN}',
}
UNUSABLE = {"deep", "deep100", "digits", "float", "nan"}
"""Argument texts callbench keeps as text and scores as malformed calls (the reason says why)."""


# --- the codec and the argument parser, on any input --------------------------------------------


ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)  # surrogates and NUL included


@settings(max_examples=200, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(text=ANY_TEXT, raw=ANY_TEXT)
def test_a_record_holds_any_text_and_reads_it_back_unchanged(text: str, raw: str) -> None:
    call = TraceCall(index=0, call_id="c", round=1, tool="t", arguments_raw=raw, result={"k": text})
    data = model_json_bytes(call)
    data.decode("utf-8")  # the line is UTF-8 whatever the text held
    again = load_model(TraceCall, data)
    assert again.arguments_raw == raw and again.result == {"k": text}


def _nested(depth: int) -> str:
    return '{"a": ' + "[" * depth + "1" + "]" * depth + "}"


HOSTILE_TEXTS = st.one_of(
    st.sampled_from(list(HOSTILE_ARGS.values())),
    st.integers(1, 20_000).map(_nested),
    st.integers(1, 6_000).map(lambda n: '{"n": ' + "7" * n + "}"),
    st.integers(300, 400).map(lambda e: '{"x": 1e' + str(e) + "}"),
    st.sampled_from(['{"x": Infinity}', '{"x": -Infinity}', "[1, 2]", '"text"', "null", "{", "{}"]),
    ANY_TEXT.map(lambda t: json.dumps({"t": t})),
)


@settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(raw=HOSTILE_TEXTS)
def test_any_argument_text_is_a_value_or_a_reason_never_an_exception(raw: str) -> None:
    arguments, reason = parse_arguments(raw)
    assert (arguments is None) != (reason is None)
    if arguments is not None:
        assert not depth_exceeds(arguments)
        call = TraceCall(index=0, call_id="c", round=1, tool="t", arguments_raw=raw, arguments=arguments)
        assert load_model(TraceCall, model_json_bytes(call)).arguments == arguments


TEXT_CALL_SHAPES = [
    '<tool_call>{{"name": "get_weather", "arguments": {0}}}</tool_call>',
    '{{"name": "get_weather", "arguments": {0}}}',
    '[TOOL_CALLS] [{{"name": "get_weather", "arguments": {0}}}]',
    '<|python_tag|>{{"name": "get_weather", "parameters": {0}}}',
    "[get_weather(city={0})]",
]


@settings(max_examples=100, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(TEXT_CALL_SHAPES), raw=HOSTILE_TEXTS)
def test_calls_written_in_text_with_any_json_are_read_or_left_as_text(shape: str, raw: str) -> None:
    """Prompt mode and ``--recover-text-calls`` read calls out of text: any payload in any format."""
    text = shape.format(raw)
    for parsed in (parse_text_calls(text, {"get_weather"}), detect_text_calls(text, {"get_weather"})):
        for call in parsed.calls if parsed is not None else []:
            assert (call.arguments is None) or not depth_exceeds(call.arguments)


def test_unusable_json_arguments_say_why() -> None:
    reasons = {kind: parse_arguments(HOSTILE_ARGS[kind])[1] for kind in UNUSABLE}
    assert reasons == {
        "deep": f"unusable JSON arguments: it nests deeper than {MAX_DEPTH} levels",
        "deep100": f"unusable JSON arguments: it nests deeper than {MAX_DEPTH} levels",
        "digits": "unusable JSON arguments: an integer in it has more digits than Python converts",
        "float": "unusable JSON arguments: the number 1e999999 is beyond a 64-bit float",
        "nan": "unusable JSON arguments: NaN is not a JSON number",
    }
    assert parse_arguments(HOSTILE_ARGS["surrogate"]) == ({"city": "Par\ud800is"}, None)
    assert parse_arguments({"deep": json.loads("[" * 100 + "]" * 100)})[1] == (
        f"arguments nest deeper than {MAX_DEPTH} levels"
    )


def test_the_response_cache_keeps_a_turn_with_any_text(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    turn = ModelTurn(
        text=SURROGATE_TEXT,
        tool_calls=[ToolCall(id="c1", name="t", arguments_raw=HOSTILE_ARGS["surrogate"], arguments=None)],
    )
    cache.put("k", turn, "openai", "m")
    again = cache.get("k")
    assert again is not None and again.text == SURROGATE_TEXT
    assert again.tool_calls[0].arguments_raw == HOSTILE_ARGS["surrogate"]


# --- through every provider, end to end ----------------------------------------------------------


def _answered(messages: list[dict[str, Any]]) -> bool:
    last = messages[-1] if messages else {}
    content = last.get("content")
    return last.get("role") == "tool" or (
        isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
    )


def _weather_tool(tools: list[dict[str, Any]]) -> str:
    """The starter tool taking a ``city`` (so the hostile values are the model's to get wrong)."""
    return next(t["name"] for t in tools if "weather" in t["name"])


def hostile_turns(kinds: list[str]) -> Any:
    """A responder: round 1 says hostile text and makes one hostile call per kind; then it answers."""

    def respond(api: Api, body: dict[str, Any]) -> Turn:
        if _answered(body.get("messages") or []):
            return Turn(text=SURROGATE_TEXT)
        name = _weather_tool([t["function"] if api == "openai" else t for t in body["tools"]])
        return Turn(text=SURROGATE_TEXT, calls=[(name, HOSTILE_ARGS[k]) for k in kinds])

    return respond


# Anthropic sends arguments as JSON objects: only what a server can write as one reaches it.
OBJECT_KINDS = ["surrogate", "nul", "deep100"]
STRING_KINDS = list(HOSTILE_ARGS)


@pytest.fixture(params=["openai", "openai-stream", "anthropic", "anthropic-stream", "responses"])
def endpoint(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str], dict[str, Any]]]:
    """``(model spec, hostile kinds sent, run options)`` for one protocol, streamed or not."""
    api = request.param
    options: dict[str, Any] = {"settings": GenerationSettings(stream=api.endswith("-stream"))}
    if api == "responses":

        def respond(body: dict[str, Any]) -> Reply:
            tool = _weather_tool(body["tools"])
            if model_rounds(body["input"]):
                return Reply(text=SURROGATE_TEXT)
            return Reply(text=SURROGATE_TEXT, calls=[(tool, HOSTILE_ARGS[k]) for k in STRING_KINDS])

        with ResponsesServer(respond) as server:
            yield f"openai-responses:m@{server.url}", STRING_KINDS, options
        return
    kinds = OBJECT_KINDS if api.startswith("anthropic") else STRING_KINDS
    with ProtocolServer(hostile_turns(kinds)) as server:
        server.stream_style = StreamStyle(fragment=3)
        if api.startswith("anthropic"):
            yield f"anthropic:m@{server.root}", kinds, options
        else:
            yield f"openai:m@{server.url}", kinds, options


def _check_run(run_dir: Path, kinds: list[str], n_cases: int) -> list[CaseRecord]:
    records = read_records(run_dir)
    assert len(records) == n_cases and all(r.status == "completed" for r in records), [
        r.error for r in records
    ]
    for record in records:
        trace = record.trace
        assert trace.rounds[0].text == SURROGATE_TEXT and trace.final_text == SURROGATE_TEXT
        assert len(trace.calls) == len(kinds)
        for kind, call in zip(kinds, trace.calls, strict=True):  # in the order they were made
            if kind in UNUSABLE:
                assert (
                    call.arguments is None
                    and "nest" in (call.parse_error or "")
                    or ("unusable JSON" in (call.parse_error or ""))
                ), (kind, call.parse_error)
                assert call.execution == "rejected"
            else:
                assert call.parse_error is None and call.arguments == json.loads(HOSTILE_ARGS[kind])
                assert call.execution in ("ok", "error")  # executed: the tool answered, or refused
        assert not any(v.passed for v in record.verdicts.values())  # wrong calls, scored as such
    return records


def test_every_provider_stores_and_scores_hostile_replies(
    endpoint: tuple[str, list[str], dict[str, Any]], tmp_path: Path
) -> None:
    model, kinds, options = endpoint
    for run, cache in enumerate((False, True, True)):  # the third run is answered from the cache
        out = tmp_path / f"run-{run}"
        callbench.run(
            "starter",
            model,
            out_dir=out,
            cache=cache,
            case_ids=["weather_paris"],
            progress="quiet",
            **options,
        )
        (record,) = _check_run(out, kinds, 1)
        assert all(r.cached for r in record.trace.rounds) == (run == 2)


@pytest.fixture
def hostile_run(tmp_path: Path) -> Iterator[Path]:
    with ProtocolServer(hostile_turns(STRING_KINDS)) as server:
        out = tmp_path / "run"
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = cli_main(
                [
                    "run",
                    "--suite",
                    "starter",
                    "--model",
                    f"openai:m@{server.url}",
                    "-o",
                    str(out),
                    "--case",
                    "weather_paris",
                    "--watch",
                    "--no-cache",
                ]
            )
        assert code == 0, stderr.getvalue()[-2000:]
        assert "Traceback" not in stderr.getvalue() + stdout.getvalue()
        yield out


def test_watch_show_report_and_view_read_a_hostile_run(hostile_run: Path, tmp_path: Path) -> None:
    _check_run(hostile_run, STRING_KINDS, 1)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert cli_main(["show", str(hostile_run)]) == 0
        assert cli_main(["report", str(hostile_run), "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_bytes().decode("utf-8")  # valid UTF-8
    assert "surrogate" in html
    server = LiveServer(hostile_run, port=0)
    server.start_background()
    try:
        with urllib.request.urlopen(server.url + "api/update?offset=0", timeout=10) as reply:
            update = json.loads(reply.read())
        (row,) = update["records"]
        with urllib.request.urlopen(
            server.url + f"api/record?key={row['key']}&trial={row.get('trial', 1)}", timeout=10
        ) as reply:
            record = json.loads(reply.read())
    finally:
        server.close()
    assert record["trace"]["final_text"] == SURROGATE_TEXT


# --- the agent paths ------------------------------------------------------------------------------


async def answers_with_hostile_text(instruction: str, mcp_url: str) -> str:
    return SURROGATE_TEXT


class _RawAgentService(BaseHTTPRequestHandler):
    """An ``http:`` agent service answering with JSON whose answer holds bytes that are not UTF-8."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b'{"answer": "ok \xff\xfe \\ud800 end"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_agents_answering_hostile_text_are_stored_and_scored(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end')\n")
    service = ThreadingHTTPServer(("127.0.0.1", 0), _RawAgentService)
    threading.Thread(target=service.serve_forever, daemon=True).start()
    agents = {
        "py": (f"py:{__name__}:answers_with_hostile_text", SURROGATE_TEXT),
        "cmd": (f"cmd:{sys.executable} {script}", "ok \udcff\udcfe end"),
        "http": (f"http:http://127.0.0.1:{service.server_port}/run", "ok \udcff\udcfe \ud800 end"),
    }
    try:
        for name, (spec, answer) in agents.items():
            out = tmp_path / name
            callbench.run("starter", agent=spec, out_dir=out, case_ids=["weather_paris"], progress="quiet")
            (record,) = read_records(out)
            assert record.status == "completed" and record.trace.final_text == answer, (name, record.error)
            assert not record.verdicts["task-completion-execution"].passed  # no call: a scored failure
    finally:
        service.shutdown()


def test_a_lone_surrogate_in_arguments_to_an_mcp_server_is_the_models_refused_call(tmp_path: Path) -> None:
    from callbench.executors.mcp import McpExecutor

    servers = Path(__file__).parents[1] / "mcp" / "client_servers.py"
    executor = McpExecutor(f"stdio:{sys.executable} {servers} loose")

    async def play() -> list[Any]:
        session = executor.start(None, tmp_path, None)  # type: ignore[arg-type]
        try:
            return [
                await session.call("echo", {"message": "a\ud800b", "times": 1}),
                await session.call("echo", {"message": "a\x00b", "times": 1}),
                await session.call("echo", {"message": "ok", "times": 1}),
            ]
        finally:
            await executor.aclose()

    surrogate, nul, ok = asyncio.run(play())
    assert surrogate.ok is False and "lone UTF-16 surrogate" in (surrogate.error or "")
    assert (nul.ok, nul.result) == (True, "a\x00b")
    assert (ok.ok, ok.result) == (True, "ok")  # the connection still serves


RAW_MCP_SERVER = r"""
import json, sys

def send(data):
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()

for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        version = message["params"]["protocolVersion"]
        info = {"name": "raw", "version": "1"}
        result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        # A text block holding an escaped lone surrogate, then bytes that are not UTF-8.
        head = b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": ' % ident
        send(head + b'"x \\ud800 \xff y"}], "isError": false}}')
        continue
    elif ident is not None:  # any other request: "method not found", as the protocol asks
        error = {"code": -32601, "message": "method not found"}
        send(json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode())
        continue
    else:
        continue
    send(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode())
"""


def test_a_tool_servers_result_with_any_text_is_stored_as_it_came(tmp_path: Path) -> None:
    """The SDK's reader refuses both; callbench's stdio transport reads them as the tool's text."""
    from callbench.executors.mcp import McpExecutor

    server = tmp_path / "raw_server.py"
    server.write_text(RAW_MCP_SERVER)
    executor = McpExecutor(f"stdio:{sys.executable} {server}")

    async def play() -> Any:
        session = executor.start(None, tmp_path, None)  # type: ignore[arg-type]
        try:
            return await asyncio.wait_for(session.call("echo", {}), 30)
        finally:
            await executor.aclose()

    outcome = asyncio.run(play())
    assert (outcome.ok, outcome.result) == (True, "x \ud800 \udcff y")
    call = TraceCall(index=0, call_id="c", round=1, tool="echo", result=outcome.result)
    assert load_model(TraceCall, model_json_bytes(call)).result == "x \ud800 \udcff y"
