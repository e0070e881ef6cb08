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
    result = callbench.run("starter", "oracle", "all", out_dir=tmp_path_factory.mktemp("own"), progress="quiet")
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


def agent_env(openai_url: str, mcp_url: str, instruction: str, system: str, answer_file: Path) -> dict[str, str]:
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


async def run_agent(script: Path, env: dict[str, str], answer_file: Path) -> Run:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        "--model",
        "scripted-model",
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
    """A recording MCP server with one endpoint per starter case, each on a fresh executor session."""
    server = RecordingMCPServer()
    sessions, endpoints = [], {}
    for case in suite.cases:
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


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_agent_plays_every_starter_case_like_the_own_loop(
    agent: str,
    suite: Suite,
    own_loop: dict[str, Trace],
    starter_world: tuple[RecordingMCPServer, dict[str, Endpoint]],
    tmp_path: Path,
) -> None:
    mcp, endpoints = starter_world
    with ProtocolServer(flat_gold(suite)) as model:

        async def all_cases() -> list[Run]:
            jobs = []
            for case in suite.cases:
                answer = tmp_path / f"{case.id}.answer"
                env = agent_env(model.url, mcp.url(case.id), case.prompt_text(), suite.system_prompt, answer)
                jobs.append(run_agent(AGENTS[agent], env, answer))
            return await asyncio.gather(*jobs)

        runs = dict(zip([c.id for c in suite.cases], asyncio.run(all_cases()), strict=True))
        requests = list(model.requests)

    for case in suite.cases:
        run, trace, endpoint = runs[case.id], own_loop[case.id], endpoints[case.id]
        where = f"{agent} on {case.id}: stderr={run.stderr[-400:]!r}"
        assert run.returncode == 0, where
        assert endpoint.listed >= 1, where
        # The calls the MCP server received are the own loop's calls, in order, with its arguments.
        assert [(c.tool, c.arguments) for c in endpoint.calls] == [
            (c.tool, c.arguments) for c in trace.calls
        ], where
        assert all(c.ok for c in endpoint.calls), where
        # Nothing but the answer on stdout; the answer file holds the same text.
        assert trace.final_text, where
        assert run.stdout == trace.final_text + "\n", where
        assert run.answer_file.read_text(encoding="utf-8") == trace.final_text, where
        # The model was told exactly what the MCP server answered (the last request holds them all).
        last = [body for _, body, _ in requests if _prompt(body) == case.prompt_text()][-1]
        told = [text_of(m["content"]) for m in last["messages"] if m["role"] == "tool"]
        assert told == [c.text for c in endpoint.calls], where


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(text_of(m["content"]) for m in body["messages"] if m["role"] == "user")
