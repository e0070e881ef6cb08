"""The agent under test in conversations (issue 29, item 6): ``--agent`` on a case with a user.

The agent is run once per agent turn (``cmd:``, ``http:`` and ``py:`` alike) with the user's latest
turn as its instruction and the conversation so far as ``messages``; it calls the case's tools over
MCP, on one executor session for the whole conversation; callbench's scripted or simulated user
answers. Checked here: what the agent receives turn by turn, that the session persists, that the
trace places the user turns after the agent's answers so the strict tiers and ``tau2-reward`` score
it unchanged (the gold actions played by an agent reach reward 1, an agent that never calls 0), and
whose fault: an agent that crashes on its second turn is its scored failure, a simulated user whose
endpoint fails an error record ``user_simulator:*``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from protocol_server import Fault, ProtocolServer, Turn

import callbench
from callbench.plugin import (
    Case,
    ExpectedStep,
    PythonExecutor,
    ScriptedTurn,
    Suite,
    ToolContract,
    ToolRegistry,
    UserSide,
)
from callbench.types.records import CaseRecord

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
REMEMBER = ToolContract(
    name="remember",
    description="Remember a word for later.",
    parameters={
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": False,
    },
)
RECALL = ToolContract(
    name="recall",
    description="The words remembered so far.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)
OPENING = "Please remember the word apple."
QUESTION = "Which word did I give you?"
SCRIPT = UserSide(
    script=[
        ScriptedTurn(say=OPENING),
        ScriptedTurn(say="never said: the agent never talks of bananas", when="banana"),
        ScriptedTurn(say=QUESTION, when="remembered"),
    ]
)


def remember(state: list[str], word: str) -> dict[str, Any]:
    state.append(word)
    return {"remembered": word}


def recall(state: list[str]) -> dict[str, Any]:
    return {"words": list(state)}


def notes_suite(user: UserSide = SCRIPT) -> Suite:
    """One conversation case: remember a word on the first turn, recall it on the second (the
    session's state, a list, lives for the whole conversation)."""
    case = Case(
        id="words",
        user=user,
        expected=[ExpectedStep(tool="remember", arguments={"word": "apple"}), ExpectedStep(tool="recall")],
    )
    return Suite(
        name="notes",
        cases=[case],
        registry=ToolRegistry([REMEMBER, RECALL]),
        executor=PythonExecutor({"remember": remember, "recall": recall}, state_factory=lambda c, w: []),
        scorers=list(TIERS),
    )


def run(suite: Any, agent: str, out: Path, **options: Any) -> callbench.RunResult:
    options.setdefault("progress", "quiet")
    return callbench.run(suite, agent=agent, out_dir=out, **options)


def codes(record: CaseRecord, tier: str = "task-completion-execution") -> list[str]:
    return record.verdicts[tier].codes


# --- the notes agent, in each form -------------------------------------------------------------------


async def notes_reply(instruction: str, messages: list[dict[str, Any]], mcp_url: str) -> str:
    """The first turn remembers the word it is given; the second recalls it, and names the word its
    first turn remembered as the conversation's history shows it (a stateless agent's memory)."""
    async with Client(mcp_url) as client:
        if "remember the word" in instruction:
            word = instruction.rstrip(".").split()[-1]
            await client.call_tool("remember", {"word": word})
            return "I remembered it."
        if "which word" in instruction.lower():
            result = await client.call_tool("recall", {})
            heard = "".join(block.text for block in result.content)  # type: ignore[union-attr]
            earlier = [c["arguments"]["word"] for m in messages for c in m.get("tool_calls") or []]
            return f"You gave me {earlier[0]}; recall says {heard}"
    return "Sorry?"


SEEN: list[dict[str, Any]] = []


async def notes_agent(instruction: str, mcp_url: str, *, messages: list[dict[str, Any]], turn: int) -> str:
    SEEN.append({"instruction": instruction, "messages": messages, "turn": turn})
    return await notes_reply(instruction, messages, mcp_url)


async def crashes_on_turn_2(instruction: str, mcp_url: str, *, messages: list[Any], turn: int) -> str:
    if turn == 2:
        raise RuntimeError("lost the thread")
    return await notes_reply(instruction, messages, mcp_url)


async def says_stop(instruction: str, mcp_url: str) -> str:
    return "I cannot help with that. ###STOP###"


NOTES_SCRIPT = """
import asyncio, json, os, sys
from mcp import Client

request = json.load(open(os.environ["CALLBENCH_REQUEST"]))
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"turn": os.environ["CALLBENCH_TURN"], "request": request}) + "\\n")
if sys.argv[2:] == ["crash"] and request["turn"] == 2:
    print("lost the thread", file=sys.stderr)
    sys.exit(3)
instruction, messages = request["instruction"], request["messages"]

async def main():
    async with Client(request["mcp_url"]) as client:
        if "remember the word" in instruction:
            await client.call_tool("remember", {"word": instruction.rstrip(".").split()[-1]})
            return "I remembered it."
        result = await client.call_tool("recall", {})
        earlier = [c["arguments"]["word"] for m in messages for c in m.get("tool_calls") or []]
        return f"You gave me {earlier[0]}; recall says {result.content[0].text}"

print(asyncio.run(main()))
"""


def notes_script(root: Path, *args: str) -> tuple[str, Path]:
    """A ``cmd:`` agent (a small script) and the log where it writes each request it was given."""
    script, log = root / "notes_agent.py", root / "requests.jsonl"
    script.write_text(textwrap.dedent(NOTES_SCRIPT))
    return f"cmd:{sys.executable} {script} {log} {' '.join(args)}".rstrip(), log


class NotesService:
    """An ``http:`` agent service on 127.0.0.1 running the notes agent on each POST."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.port = 0

    async def handle(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        self.bodies.append(body)
        answer = await notes_reply(body["instruction"], body["messages"], body["mcp_url"])
        return web.json_response({"answer": answer})


@pytest.fixture
def notes_service() -> Iterator[NotesService]:
    from aiohttp import web

    service, ready, box = NotesService(), threading.Event(), {}

    def serve() -> None:
        async def main() -> None:
            app = web.Application()
            app.router.add_post("/run", service.handle)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            service.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            box["stop"], box["loop"] = asyncio.Event(), asyncio.get_running_loop()
            ready.set()
            await box["stop"].wait()
            await runner.cleanup()

        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield service
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(10)


def requests_seen(form: str, log: Path | None, service: NotesService | None) -> list[dict[str, Any]]:
    """What the agent was given on each turn: instruction, messages, turn."""
    if form == "py":
        return SEEN
    if form == "cmd":
        assert log is not None
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert [int(line["turn"]) for line in lines] == [line["request"]["turn"] for line in lines]
        return [line["request"] for line in lines]
    assert service is not None
    return service.bodies


# --- a scripted conversation ------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["py", "cmd", "http"])
def test_each_turn_the_agent_gets_the_users_turn_and_the_conversation_and_the_session_persists(
    tmp_path: Path, form: str, request: pytest.FixtureRequest
) -> None:
    SEEN.clear()
    log = service = None
    if form == "py":
        spec = f"py:{__name__}:notes_agent"
    elif form == "cmd":
        spec, log = notes_script(tmp_path)
    else:
        service = request.getfixturevalue("notes_service")
        spec = f"http:http://127.0.0.1:{service.port}/run"
    record = run(notes_suite(), spec, tmp_path / "out").records[0]

    trace = record.trace
    assert record.status == "completed" and record.harness_mode == "agent-under-test+user=scripted"
    assert trace.stop_reason == "user_stop"
    assert [t.text for t in trace.user_turns or []] == [OPENING, QUESTION, "###STOP###"]
    # one executor session for the whole conversation: turn 2's recall hears turn 1's word
    assert [(c.tool, c.arguments, c.execution) for c in trace.calls] == [
        ("remember", {"word": "apple"}, "ok"),
        ("recall", {}, "ok"),
    ]
    assert trace.calls[1].result == {"words": ["apple"]}
    answer = 'You gave me apple; recall says {"words": ["apple"]}'
    assert trace.final_text == answer
    # rounds: each turn's calls, then its answer; each user turn follows the answer it replies to
    assert [(r.text, len(r.call_ids)) for r in trace.rounds] == [
        ("", 1),
        ("I remembered it.", 0),
        ("", 1),
        (answer, 0),
    ]
    assert [t.after_round for t in trace.user_turns or []] == [0, 2, 4]
    assert [c.round for c in trace.calls] == [1, 3]
    assert trace.agent is not None and trace.agent.details["turns"] == 2
    assert all(record.verdicts[tier].passed for tier in TIERS)

    first, second = requests_seen(form, log, service)
    assert (first["turn"], first["instruction"]) == (1, OPENING)
    assert first["messages"] == [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": OPENING},
    ]
    assert (second["turn"], second["instruction"]) == (2, QUESTION)
    history = second["messages"]
    assert [m["role"] for m in history] == ["assistant", "user", "assistant", "tool", "assistant", "user"]
    call = history[2]["tool_calls"][0]
    assert (call["name"], call["arguments"]) == ("remember", {"word": "apple"})
    assert history[3] == {
        "role": "tool",
        "content": '{"remembered": "apple"}',
        "tool_call_id": call["id"],
        "name": "remember",
    }
    assert history[4:] == [
        {"role": "assistant", "content": "I remembered it."},
        {"role": "user", "content": QUESTION},
    ]


KWARGS: list[dict[str, Any]] = []


async def takes_everything(instruction: str, mcp_url: str, **kwargs: Any) -> str:
    KWARGS.append(kwargs)
    return "ok"


DUMP_SCRIPT = """
import json, os, sys
request = json.load(open(os.environ["CALLBENCH_REQUEST"]))
json.dump({"turn": os.environ.get("CALLBENCH_TURN"), "keys": sorted(request)}, open(sys.argv[1], "w"))
print("ok")
"""


def test_a_single_instruction_case_is_asked_as_before_without_conversation_fields(tmp_path: Path) -> None:
    suite = notes_suite()
    suite.cases = [Case(id="one", instruction=OPENING)]
    KWARGS.clear()
    record = run(suite, f"py:{__name__}:takes_everything", tmp_path / "py").records[0]
    assert record.trace.stop_reason == "answer" and record.trace.user_turns is None
    assert "messages" not in KWARGS[0] and "turn" not in KWARGS[0] and "case_id" in KWARGS[0]
    script, dump = tmp_path / "dump.py", tmp_path / "dump.json"
    script.write_text(textwrap.dedent(DUMP_SCRIPT))
    run(suite, f"cmd:{sys.executable} {script} {dump}", tmp_path / "cmd")
    seen = json.loads(dump.read_text())
    assert seen["turn"] is None and "messages" not in seen["keys"] and "instruction" in seen["keys"]


@pytest.mark.parametrize("form", ["py", "cmd"])
def test_an_agent_that_crashes_on_its_second_turn_is_its_scored_failure(tmp_path: Path, form: str) -> None:
    if form == "py":
        spec = f"py:{__name__}:crashes_on_turn_2"
    else:
        spec, _ = notes_script(tmp_path, "crash")
    record = run(notes_suite(), spec, tmp_path / "out").records[0]
    trace = record.trace
    assert record.status == "completed" and trace.stop_reason == "agent_crashed"
    assert "agent_crashed" in codes(record)
    assert [c.tool for c in trace.calls] == ["remember"]  # turn 1 is kept
    assert [t.text for t in trace.user_turns or []] == [OPENING, QUESTION]
    assert trace.agent is not None and trace.agent.message.startswith("turn 2: ")
    assert "lost the thread" in trace.agent.stderr_tail


def test_the_agents_stop_signal_ends_the_conversation(tmp_path: Path) -> None:
    record = run(notes_suite(), f"py:{__name__}:says_stop", tmp_path / "out").records[0]
    assert record.trace.stop_reason == "agent_stop"
    assert [t.text for t in record.trace.user_turns or []] == [OPENING]


def test_the_users_turn_budget_is_kept(tmp_path: Path) -> None:
    chatty = UserSide(script=[ScriptedTurn(say=f"turn {n}") for n in range(10)], max_turns=3)
    record = run(notes_suite(chatty), f"py:{__name__}:notes_agent", tmp_path / "out").records[0]
    assert record.trace.stop_reason == "max_turns" and len(record.trace.user_turns or []) == 3
    assert record.trace.agent is not None and record.trace.agent.details["turns"] == 3


def test_a_simulated_user_whose_endpoint_fails_is_an_error_record_not_the_agents_failure(
    tmp_path: Path,
) -> None:
    user = UserSide(script=[ScriptedTurn(say=OPENING)], instructions="You want the agent to remember apple.")
    with ProtocolServer(lambda api, body: Turn(text=OPENING)) as server:
        # the simulated user opens, then its endpoint fails for good
        server.fault_rule = lambda api, body: Fault("500") if server.replies >= 1 else None
        result = run(
            notes_suite(user),
            f"py:{__name__}:notes_agent",
            tmp_path / "out",
            cache=False,
            max_retries=0,
            user_model=f"openai:sim@{server.url}",
        )
    record = result.records[0]
    assert record.status == "error" and record.error is not None
    assert record.error.type.startswith("user_simulator:"), record.error.type
    assert record.simulator is not None and record.simulator.kind == "simulated"
    assert record.harness_mode.startswith("agent-under-test+user=openai:sim")
    # the agent's turn before the fault is kept on the trace
    assert [c.tool for c in record.trace.calls] == ["remember"]
    assert record.trace.agent is not None and record.trace.agent.outcome == "answer"


# --- τ²: the gold actions played by an agent over MCP reach reward 1 ------------------------------------

_PLANS: dict[str, dict[str, Any]] = {}


def gold_plans(domain: str) -> dict[str, dict[str, Any]]:
    """Per case key: the gold calls of each agent turn (``oracle_calls``) and the oracle's text."""
    from callbench.suites.resolve import load_suite

    if not any(key.startswith(f"tau2:{domain}:") for key in _PLANS):
        for case in load_suite(f"tau2:{domain}").cases:
            _PLANS[case.key] = {"calls": case.metadata["oracle_calls"], "text": case.metadata["oracle_text"]}
    return {k: v for k, v in _PLANS.items() if k.startswith(f"tau2:{domain}:")}


async def tau2_gold_agent(instruction: str, mcp_url: str, *, case_id: str, turn: int) -> str:
    plan = _PLANS[case_id]
    calls = plan["calls"][turn - 1] if turn <= len(plan["calls"]) else []
    async with Client(mcp_url) as client:
        for call in calls:
            await client.call_tool(call["tool"], call["arguments"])
    return str(plan["text"])


async def never_calls(instruction: str, mcp_url: str) -> str:
    return "Done."


GOLD_SCRIPT = """
import asyncio, json, os, sys
from mcp import Client

request = json.load(open(os.environ["CALLBENCH_REQUEST"]))
plan = json.load(open(sys.argv[1]))[request["case_id"]]
turn = request["turn"]
calls = plan["calls"][turn - 1] if turn <= len(plan["calls"]) else []

async def main():
    async with Client(request["mcp_url"]) as client:
        for call in calls:
            await client.call_tool(call["tool"], call["arguments"])

asyncio.run(main())
print(plan["text"])
"""

ORACLE_GOLD_SHORT = {"tau2:mock:update_task_with_history_and_env_assertions"}
"""No gold actions while its assertion needs a write: the oracle misses it too (docs/conversations.md)."""


def test_tau2_gold_actions_played_by_py_and_cmd_agents_reach_reward_1(tmp_path: Path) -> None:
    pytest.importorskip("tau2.domains.mock.environment")
    plans = gold_plans("mock")
    records = run("tau2:mock", f"py:{__name__}:tau2_gold_agent", tmp_path / "py", concurrency=4).records
    assert len(records) == len(plans) == 9
    for record in records:
        assert record.status == "completed" and record.trace.stop_reason == "user_stop", record.key
        assert record.harness_mode == "agent-under-test+user=scripted"
        assert record.verdicts["tau2-reward"].passed is (record.key not in ORACLE_GOLD_SHORT), record.key
        assert all(record.verdicts[tier].passed for tier in TIERS), record.key

    plan_file = tmp_path / "plans.json"
    plan_file.write_text(json.dumps(plans))
    script = tmp_path / "gold_agent.py"
    script.write_text(textwrap.dedent(GOLD_SCRIPT))
    picked = ["create_task_1", "update_task_with_message_history", "impossible_task_1"]
    spec = f"cmd:{sys.executable} {script} {plan_file}"
    by_cmd = run("tau2:mock", spec, tmp_path / "cmd", case_ids=picked, concurrency=3).records
    assert sorted(r.case_id for r in by_cmd) == sorted(picked)
    assert all(r.verdicts["tau2-reward"].passed and r.trace.stop_reason == "user_stop" for r in by_cmd)


def test_tau2_dual_control_the_users_own_actions_run_on_the_same_session(tmp_path: Path) -> None:
    pytest.importorskip("tau2.domains.telecom.environment")
    from callbench.suites.resolve import load_suite

    gold_plans("telecom")
    cases = [
        c
        for c in load_suite("tau2:telecom").cases
        if any(t.calls for t in c.user.script or []) and len(c.metadata["oracle_calls"]) > 1  # type: ignore[union-attr]
    ][:3]
    result = run(
        "tau2:telecom", f"py:{__name__}:tau2_gold_agent", tmp_path / "out", case_ids=[c.id for c in cases]
    )
    assert len(result.records) == 3
    for record in result.records:
        trace = record.trace
        assert record.verdicts["tau2-reward"].passed, (record.key, record.verdicts["tau2-reward"].codes)
        assert trace.agent is not None and trace.agent.details["turns"] >= 2
        assert any(t.calls for t in trace.user_turns or [])  # the user's phone, not the agent's calls
        assert {c.tool for c in trace.calls}.isdisjoint(
            {call.tool for t in trace.user_turns or [] for call in t.calls}
        )


def test_an_agent_that_never_calls_scores_0_on_a_write_task(tmp_path: Path) -> None:
    pytest.importorskip("tau2.domains.mock.environment")
    record = run(
        "tau2:mock", f"py:{__name__}:never_calls", tmp_path / "out", case_ids=["create_task_1"]
    ).records[0]
    assert record.status == "completed" and record.trace.stop_reason == "user_stop"
    assert not record.verdicts["tau2-reward"].passed and record.verdicts["tau2-reward"].details["reward"] == 0
    assert not record.trace.calls


# --- with callbench's model proxy: each turn's model requests are its rounds ---------------------------


async def asks_its_model(instruction: str, mcp_url: str, *, messages: list[Any], model_url: str) -> str:
    """Remembers the word before it asks its model anything (a call ahead of the turn's first
    request), then answers with what its model says to the conversation."""
    import aiohttp

    if "remember the word" in instruction:
        async with Client(mcp_url) as client:
            await client.call_tool("remember", {"word": "apple"})
    chat = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "tool"]
    async with aiohttp.ClientSession() as http:
        body = {"model": "scripted", "messages": chat}
        async with http.post(f"{model_url}/chat/completions", json=body) as reply:
            data = await reply.json()
    return str(data["choices"][0]["message"]["content"])


def chat_responder(api: str, body: dict[str, Any]) -> Turn:
    last = body["messages"][-1]["content"]
    return Turn(text="I remembered it." if "remember" in last else "It was apple.")


def test_with_the_model_proxy_each_turns_requests_are_its_rounds_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CALLBENCH_KEYS_FILE", str(tmp_path / "no-keys.toml"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    spec = f"py:{__name__}:asks_its_model"
    with ProtocolServer(chat_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        recorded = run(notes_suite(), spec, tmp_path / "r1", record=tmp_path / "rec").records[0]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    replayed = run(notes_suite(), spec, tmp_path / "r2", replay=tmp_path / "rec").records[0]
    for record in (recorded, replayed):
        trace = record.trace
        assert record.status == "completed" and trace.stop_reason == "user_stop"
        assert [(r.text, len(r.call_ids), r.agent_request) for r in trace.rounds] == [
            ("", 1, None),  # the call before the turn's first request
            ("I remembered it.", 0, True),  # the request whose text is the agent's message
            ("It was apple.", 0, True),
        ]
        assert [t.after_round for t in trace.user_turns or []] == [0, 2, 3]
        assert trace.usage.input_tokens == 20 and trace.final_text == "It was apple."
        assert trace.agent is not None and trace.agent.details["model"]["answered"] == 2
