"""The example agents of ``examples/agents/`` run end to end on 127.0.0.1 and do what the model says.

Each agent runs as a subprocess, the way ``callbench run --agent cmd:...`` runs it, against a
local OpenAI-compatible protocol server that plays the starter suite's gold calls and a recording
MCP server (one endpoint per case) that executes them with the starter tools. Every case must
produce exactly the calls, arguments and final text of callbench's own loop with the ``oracle``
model, and the model must have been told exactly what the MCP server answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from protocol_server import ProtocolServer, Turn
from recording_mcp_server import Endpoint, RecordingMCPServer, tool

import callbench
from callbench.benchmarks.starter.suite import load_suite
from callbench.executors.base import ExecutorSession, ToolOutcome
from callbench.suites.suite import Suite, SuiteOptions
from callbench.tools.retrieve import select_tools
from callbench.types.case import Case
from callbench.types.trace import Trace

sys.path.insert(0, str(Path(__file__).parents[1] / "providers"))
from gold_responder import GoldResponder  # noqa: E402 - lives beside the provider tests

EXAMPLES = Path(__file__).parents[2] / "examples" / "agents"
AGENTS = {"openai_mcp": EXAMPLES / "openai_mcp_agent.py", "agents_sdk": EXAMPLES / "agents_sdk_agent.py"}
AGENT_TIMEOUT_S = 120.0
SMOKE_CASES = ("email_after_lookup", "three_notes", "file_round_trip")
"""A $ref chain, repeated calls and an answer built from a result. Every agent process costs 2-4 s
of imports on a small CI machine, so the smoke test plays three cases; all 16 starter cases pass
too (``CALLBENCH_SMOKE_ALL=1``)."""


@dataclass
class Run:
    """One agent process: how it ended and what it printed."""

    returncode: int
    stdout: str
    stderr: str
    answer_file: Path


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite("", SuiteOptions())


@pytest.fixture(scope="module")
def own_loop(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Trace]:
    """Traces of the oracle in callbench's own round loop, by case id: what the agents must match."""
    result = callbench.run(
        "starter", "oracle", "all", out_dir=tmp_path_factory.mktemp("own"), progress="quiet"
    )
    traces = {r.case_id: r.trace for r in result.records}
    assert len(traces) == len(suite.cases) == 16
    return traces


def offered_tools(suite: Suite, case: Case) -> list[Any]:
    """The tools the engine offers for a case (same selection as the harness)."""
    return select_tools(case.prompt_text(), suite.candidate_tools(case), suite.retrieval_k(None))


def loop_like_handler(case: Case, session: ExecutorSession) -> Any:
    """Answer calls as callbench's loop answers them: call-only steps are not executed, results and
    errors are JSON text."""
    call_only = {name for step in case.expected if step.call_only for name in step.tools}

    async def handle(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        if name in call_only:
            outcome = ToolOutcome(ok=True, result={"call_only": True, "executed": False})
        else:
            outcome = await session.call(name, arguments)
        if outcome.content is not None:
            return outcome.ok, outcome.content
        if outcome.ok:
            return True, json.dumps(outcome.result, ensure_ascii=False, default=str)
        return False, json.dumps({"error": outcome.error}, ensure_ascii=False)

    return handle


def agent_env(
    openai_url: str, mcp_url: str, instruction: str, system: str, answer_file: Path
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CALLBENCH_"))}
    env.update(
        OPENAI_BASE_URL=openai_url,
        OPENAI_API_KEY="sk-test-local",
        OPENAI_AGENTS_DISABLE_TRACING="1",
        NO_PROXY="127.0.0.1,localhost",
        CALLBENCH_INSTRUCTION=instruction,
        CALLBENCH_SYSTEM_PROMPT=system,
        CALLBENCH_MCP_URL=mcp_url,
        CALLBENCH_ANSWER_FILE=str(answer_file),
    )
    return env


async def run_agent(script: Path, env: dict[str, str], answer_file: Path, *args: str) -> Run:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        "--model",
        "scripted-model",
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), AGENT_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return Run(process.returncode, out.decode(), err.decode(), answer_file)


@pytest.fixture
def starter_world(suite: Suite, tmp_path: Path) -> Iterator[tuple[RecordingMCPServer, dict[str, Endpoint]]]:
    """A recording MCP server with one endpoint per played starter case (:func:`smoke_cases`), each
    on a fresh executor session."""
    server = RecordingMCPServer()
    sessions, endpoints = [], {}
    for case in smoke_cases(suite):
        session = suite.executor.start(case, tmp_path / "work" / case.id, suite)
        sessions.append(session)
        tools = [tool(t.name, t.description, t.parameters) for t in offered_tools(suite, case)]
        endpoints[case.id] = server.add(case.id, tools, loop_like_handler(case, session))
    with server:
        yield server, endpoints
    for session in sessions:
        session.close()


def text_of(content: Any) -> str:
    """A message's text: the Agents SDK sends tool results as a list of text parts (valid in the
    Chat Completions API), the plain SDK as a string."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return "" if content is None else str(content)


def flat_gold(suite: Suite) -> Any:
    """The gold responder, reading list-of-parts contents as their text."""
    gold = GoldResponder(suite)

    def respond(api: Any, body: dict[str, Any]) -> Turn:
        messages = [{**m, "content": text_of(m.get("content"))} for m in body["messages"]]
        return gold(api, {**body, "messages": messages})

    return respond


def smoke_cases(suite: Suite) -> list[Case]:
    if os.environ.get("CALLBENCH_SMOKE_ALL"):
        return list(suite.cases)
    return [c for c in suite.cases if c.id in SMOKE_CASES]


def requests_of(model: ProtocolServer, prompt: str) -> list[dict[str, Any]]:
    """The Chat Completions request bodies of one conversation (told apart by the user prompt)."""
    return [body for _, body, _ in model.requests if _prompt(body) == prompt]


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(text_of(m["content"]) for m in body["messages"] if m["role"] == "user")


def run_all(jobs: list[Any]) -> list[Run]:
    async def gather() -> list[Run]:
        return await asyncio.gather(*jobs)

    return asyncio.run(gather())


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_agent_plays_starter_cases_like_the_own_loop(
    agent: str,
    suite: Suite,
    own_loop: dict[str, Trace],
    starter_world: tuple[RecordingMCPServer, dict[str, Endpoint]],
    tmp_path: Path,
) -> None:
    mcp, endpoints = starter_world
    cases = smoke_cases(suite)
    with ProtocolServer(flat_gold(suite)) as model:
        jobs = []
        for case in cases:
            answer = tmp_path / f"{case.id}.answer"
            env = agent_env(model.url, mcp.url(case.id), case.prompt_text(), suite.system_prompt, answer)
            jobs.append(run_agent(AGENTS[agent], env, answer))
        runs = dict(zip([c.id for c in cases], run_all(jobs), strict=True))

        for case in cases:
            run, trace, endpoint = runs[case.id], own_loop[case.id], endpoints[case.id]
            where = f"{agent} on {case.id}: stderr={run.stderr[-400:]!r}"
            assert run.returncode == 0, where
            assert endpoint.listed >= 1, where
            # The MCP server received the own loop's calls, in order, with its arguments.
            assert [(c.tool, c.arguments) for c in endpoint.calls] == [
                (c.tool, c.arguments) for c in trace.calls
            ], where
            assert all(c.ok for c in endpoint.calls), where
            # Nothing but the answer on stdout; the answer file holds the same text.
            assert trace.final_text, where
            assert run.stdout == trace.final_text + "\n", where
            assert run.answer_file.read_text(encoding="utf-8") == trace.final_text, where
            # The model was told exactly what the MCP server answered (the last request holds it all).
            last = requests_of(model, case.prompt_text())[-1]
            told = [text_of(m["content"]) for m in last["messages"] if m["role"] == "tool"]
            assert told == [c.text for c in endpoint.calls], where
            assert last["messages"][0] == {"role": "system", "content": suite.system_prompt}, where


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def scripted(first_turn: Turn, answer: str) -> Any:
    """A model that makes ``first_turn``'s calls, then answers ``answer`` once tool results came back."""

    def respond(api: Any, body: dict[str, Any]) -> Turn:
        return Turn(text=answer) if body["messages"][-1]["role"] == "tool" else first_turn

    return respond


def slow_first_call() -> Any:
    """A tool whose first call is slow: calls started together would finish out of order."""
    seen: list[str] = []

    async def handle(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        seen.append(arguments.get("city", "?"))
        if len(seen) == 1:
            await asyncio.sleep(0.3)
        return True, json.dumps({"city": arguments.get("city"), "temp_c": 10 + len(seen)})

    return handle


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_parallel_calls_of_one_turn_run_one_after_the_other_in_order(agent: str, tmp_path: Path) -> None:
    cities = ["Oslo", "Rome", "Lima"]
    turn = Turn(calls=[("get_weather", json.dumps({"city": c})) for c in cities])
    mcp = RecordingMCPServer()
    endpoint = mcp.add("w", [tool("get_weather", "Current weather of a city.", WEATHER)], slow_first_call())
    with mcp, ProtocolServer(scripted(turn, "Oslo 11, Rome 12, Lima 13")) as model:
        answer = tmp_path / "answer.txt"
        env = agent_env(model.url, mcp.url("w"), "Weather in Oslo, Rome and Lima?", "", answer)
        (run,) = run_all([run_agent(AGENTS[agent], env, answer)])
        requests = list(model.requests)
    assert run.returncode == 0, run.stderr
    # Recorded when each call finished: concurrent calls would put the slow Oslo call last.
    assert [c.arguments for c in endpoint.calls] == [{"city": c} for c in cities]
    assert run.stdout == "Oslo 11, Rome 12, Lima 13\n"
    assert len(requests) == 2
    results = [m for m in requests[1][1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["call_1_0", "call_1_1", "call_1_2"]
    assert [json.loads(text_of(m["content"]))["city"] for m in results] == cities


def test_plain_agent_sends_malformed_and_unknown_calls_to_the_server(tmp_path: Path) -> None:
    """Arguments that are not a JSON object go out as ``{}``; an unlisted tool is still called: the
    server (callbench) sees and judges every call the model made."""
    turn = Turn(calls=[("get_weather", "{not json"), ("get_weather", "[1]"), ("no_such_tool", '{"a": 1}')])
    mcp = RecordingMCPServer()

    async def handle(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        if name != "get_weather":
            return False, json.dumps({"error": f"Unknown tool {name!r}"})
        return False, json.dumps({"error": "Invalid call: 'city' is a required property"})

    endpoint = mcp.add("w", [tool("get_weather", "Current weather of a city.", WEATHER)], handle)
    with mcp, ProtocolServer(scripted(turn, "sorry")) as model:
        answer = tmp_path / "answer.txt"
        env = agent_env(model.url, mcp.url("w"), "Weather?", "", answer)
        (run,) = run_all([run_agent(AGENTS["openai_mcp"], env, answer)])
        last = model.requests[-1][1]
    assert (run.returncode, run.stdout, run.stderr) == (0, "sorry\n", "")
    assert [(c.tool, c.arguments) for c in endpoint.calls] == [
        ("get_weather", {}),
        ("get_weather", {}),
        ("no_such_tool", {"a": 1}),
    ]
    told = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert told == [c.text for c in endpoint.calls]


def test_agents_sdk_agent_answers_malformed_and_unknown_calls_itself(tmp_path: Path) -> None:
    """The Agents SDK rejects such calls before MCP: the server never sees them (documented)."""
    turn = Turn(
        calls=[("get_weather", "{not json"), ("no_such_tool", "{}"), ("get_weather", '{"city": "Oslo"}')]
    )
    mcp = RecordingMCPServer()
    endpoint = mcp.add("w", [tool("get_weather", "Current weather of a city.", WEATHER)], slow_first_call())
    with mcp, ProtocolServer(scripted(turn, "Oslo is mild")) as model:
        answer = tmp_path / "answer.txt"
        env = agent_env(model.url, mcp.url("w"), "Weather?", "", answer)
        (run,) = run_all([run_agent(AGENTS["agents_sdk"], env, answer)])
        last = model.requests[-1][1]
    assert (run.returncode, run.stdout) == (0, "Oslo is mild\n"), run.stderr
    assert [(c.tool, c.arguments) for c in endpoint.calls] == [("get_weather", {"city": "Oslo"})]
    # The SDK puts its own "not found" answers after the executed calls' results: match by call id.
    told = {m["tool_call_id"]: text_of(m["content"]) for m in last["messages"] if m["role"] == "tool"}
    assert sorted(told) == ["call_1_0", "call_1_1", "call_1_2"]
    assert told["call_1_2"] == endpoint.calls[0].text
    assert "error" in told["call_1_0"].lower() and "not found" in told["call_1_1"]


def closed_port() -> int:
    """A 127.0.0.1 port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_failures_exit_1_with_one_line_on_stderr_and_nothing_on_stdout(agent: str, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{closed_port()}"
    mcp = RecordingMCPServer()
    mcp.add("w", [tool("get_weather", "Current weather of a city.", WEATHER)], slow_first_call())
    with mcp, ProtocolServer(scripted(Turn(text="unused"), "unused")) as model:
        answer = tmp_path / "answer.txt"
        scenarios = {
            "cannot reach the model endpoint": agent_env(dead + "/v1", mcp.url("w"), "Hi", "", answer),
            "cannot reach the MCP server": agent_env(model.url, dead + "/w/mcp", "Hi", "", answer),
            "CALLBENCH_INSTRUCTION is not set": agent_env(model.url, mcp.url("w"), "", "", answer),
        }
        # No retries: a refused connection fails at once instead of after the SDK's backoff.
        runs = run_all(
            [run_agent(AGENTS[agent], e, answer, "--max-retries", "0") for e in scenarios.values()]
        )
    for expected, run in zip(scenarios, runs, strict=True):
        assert run.returncode == 1, (expected, run.stderr)
        assert run.stdout == "", expected
        assert run.stderr.count("\n") == 1 and run.stderr.endswith("\n"), (expected, run.stderr)
        assert run.stderr.startswith(f"{AGENTS[agent].stem}: error: "), run.stderr
        assert expected in run.stderr, run.stderr
    assert not answer.exists()
