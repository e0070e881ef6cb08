"""The agent's model, recorded (issue 28, item 5): callbench's OpenAI- and Anthropic-compatible proxy
between an agent under test and its model endpoint.

The endpoint is a local stand-in speaking the real wire formats (``tests/helpers/protocol_server.py``:
Chat Completions and Anthropic Messages, JSON and server-sent events); the agents are the example
agent and small raw-HTTP agents (``tests/helpers/proxy_agent.py``). Checked here:

* ``--record DIR`` keeps every request's answer in ``DIR/model/`` (one content-addressed tape per case
  and trial, an index, no credential) and ``--replay DIR`` answers from it with the endpoint gone:
  same calls, answers, verdicts, rounds and usage;
* streamed answers pass through as events and are recorded as the event sequence, for both APIs;
* the agent's tokens, latency and requests per case are in its record (rounds marked
  ``agent_request``, ``trace.usage``) and in the summary's usage, with the cost from a price table;
* per-case routes: at concurrency 8 each case's record holds exactly its own requests;
* whose fault: an endpoint that is down or answers 5xx makes an error record when the agent then
  fails (``AgentModelUnavailable``), a score when it recovered; a replayed request the recording lacks
  is ``cassette_miss`` (strict) or answered live and added (``live``);
* the agent's environment (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``CALLBENCH_MODEL_URL``) and
  the one-line refusals of bad input.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from protocol_server import Fault, ProtocolServer, first_tool_responder
from scripted_responder import ScriptedResponder

import callbench
from callbench.errors import ConfigError, UserError
from callbench.providers.model_proxy import AgentModelProxy, body_facts, stream_facts
from callbench.providers.model_tape import ModelTapes
from callbench.suites.resolve import load_suite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
TIER = "task-completion-execution"
CASES = ["weather_paris", "email_after_lookup", "convert_distance"]
AGENT_KEY = "sk-agent-own-secret-0123456789"
OWN_KEY = "sk-callbench-config-key-987654"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No key anywhere (callbench's keys file too), the example agents importable."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PROXY_AGENT_KEY", "PROXY_AGENT_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CALLBENCH_KEYS_FILE", str(tmp_path / "no-keys.toml"))
    monkeypatch.setenv("CALLBENCH_AGENT_MODEL", "scripted")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return monkeypatch


def run(agent: str, out: Path, cases: list[str] = CASES, **options: Any) -> Any:
    return callbench.run(
        "starter", tier=TIER, agent=agent, out_dir=out, case_ids=cases, progress="quiet", **options
    )


def essence(record: Any) -> dict[str, Any]:
    """What a replay must reproduce of a record: everything but timing and per-run URLs."""
    trace = record.trace
    return {
        "status": record.status,
        "verdicts": {t: (v.passed, v.codes) for t, v in record.verdicts.items()},
        "calls": [(c.tool, c.arguments, c.result, c.execution, c.round) for c in trace.calls],
        "final_text": trace.final_text,
        "usage": trace.usage.model_dump(),
        "rounds": [
            (r.index, r.text, r.call_ids, r.usage, r.model, r.finish_reason, r.agent_request)
            for r in trace.rounds
        ],
    }


def tape_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_record_then_replay_with_the_endpoint_gone(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    with ProtocolServer(responder) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        recorded = run("py:openai_mcp_agent:agent", tmp_path / "r1", record=tmp_path / "rec", concurrency=3)
        asked = len(server.requests)
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: a request would fail
    replayed = run("py:openai_mcp_agent:agent", tmp_path / "r2", replay=tmp_path / "rec", concurrency=3)

    before = {r.key: essence(r) for r in recorded.records}
    after = {r.key: essence(r) for r in replayed.records}
    assert before == after and len(after) == 3
    assert all(r.verdicts[TIER].passed for r in replayed.records)
    # the agent's requests are the case's rounds, with the calls that followed each
    paris = next(r for r in replayed.records if r.key == "starter:weather_paris").trace
    assert [(r.agent_request, len(r.call_ids), r.model) for r in paris.rounds] == [
        (True, 1, "scripted"),
        (True, 0, "scripted"),
    ]
    assert paris.usage.input_tokens == 20 and paris.usage.output_tokens == 10
    assert paris.agent is not None and paris.agent.details["model"]["replayed"] == 2
    # the summary counts them: every request the endpoint answered when recording
    for result in (recorded, replayed):
        tokens = result.summary["usage"]["tokens"]
        assert tokens["requests"] == asked and tokens["input"] == 10 * asked
        assert result.summary["usage"]["n_latency"] == asked
    # the folder: one content-addressed tape per case and trial, an index naming them
    model = tmp_path / "rec" / "model"
    index = json.loads((model / "index.json").read_text())
    assert sorted(index["cases"]) == [f"starter:{c}#1" for c in sorted(CASES)]
    for digest in index["cases"].values():
        import hashlib

        assert hashlib.sha256((model / "cases" / f"{digest}.json").read_bytes()).hexdigest() == digest
    assert not (model / "journal.jsonl").exists()
    options = json.loads((tmp_path / "r2" / "run.json").read_text())["options"]["agent_model"]
    assert options["mode"] == "replay" and options["hash"] == ModelTapes.for_replay(tmp_path / "rec").hash
    assert "upstreams" not in options  # a strict replay asks no endpoint


def test_keys_pass_through_and_are_never_recorded(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    with ProtocolServer(responder) as server:
        server.echo_key = True  # an endpoint that puts the key it got into its answer
        env.setenv("OPENAI_BASE_URL", server.url)
        env.setenv("PROXY_AGENT_KEY", AGENT_KEY)
        run("py:proxy_agent:openai", tmp_path / "r1", cases=CASES[:1], record=tmp_path / "rec")
        env.delenv("PROXY_AGENT_KEY")
        env.setenv("OPENAI_API_KEY", OWN_KEY)  # callbench's key config: used when the agent sends none
        run("py:proxy_agent:openai", tmp_path / "r2", cases=CASES[1:2], record=tmp_path / "rec")
        sent = [headers.get("authorization") for _path, _body, headers in server.requests]
    assert sent[0] == f"Bearer {AGENT_KEY}" and sent[-1] == f"Bearer {OWN_KEY}"
    stored = tape_bytes(tmp_path / "rec") + tape_bytes(tmp_path / "r1") + tape_bytes(tmp_path / "r2")
    assert AGENT_KEY.encode() not in stored and OWN_KEY.encode() not in stored
    assert b'"authorization":""' in tape_bytes(tmp_path / "rec" / "model" / "cases")


@pytest.mark.parametrize("agent", ["openai_stream", "anthropic", "anthropic_stream"])
def test_streams_and_anthropic_pass_through_and_replay(
    env: pytest.MonkeyPatch, tmp_path: Path, agent: str
) -> None:
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    anthropic = agent.startswith("anthropic")
    with ProtocolServer(first_tool_responder if anthropic else responder) as server:
        server.stream.fragment = 3
        env.setenv("OPENAI_BASE_URL", server.url)
        env.setenv("ANTHROPIC_BASE_URL", server.root)
        recorded = run(f"py:proxy_agent:{agent}", tmp_path / "r1", cases=CASES[:2], record=tmp_path / "rec")
        asked = len(server.requests)
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    replayed = run(f"py:proxy_agent:{agent}", tmp_path / "r2", cases=CASES[:2], replay=tmp_path / "rec")
    assert {r.key: essence(r) for r in recorded.records} == {r.key: essence(r) for r in replayed.records}
    assert all(r.status == "completed" for r in replayed.records)
    assert replayed.summary["usage"]["tokens"]["requests"] == asked
    assert replayed.summary["usage"]["tokens"]["output"] == 5 * asked
    tapes = [json.loads(p.read_bytes()) for p in (tmp_path / "rec" / "model" / "cases").glob("*.json")]
    exchanges = [x for tape in tapes for x in tape["exchanges"]]
    streamed = agent.endswith("stream")
    assert all(
        ("events" in x) == streamed and x["api"] == ("anthropic" if anthropic else "openai")
        for x in exchanges
    )
    if streamed:
        rounds = [r for rec in recorded.records for r in rec.trace.rounds]
        assert all(r.ttft_ms is not None and r.ttft_ms <= r.latency_ms for r in rounds)
        if not anthropic:  # the recorded event sequence is the one the endpoint sent, event by event
            assert exchanges[0]["events"][-1] == "data: [DONE]"


def test_requests_are_attributed_to_their_case_at_concurrency(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    suite = load_suite("starter")
    responder = ScriptedResponder(suite, "oracle")
    with ProtocolServer(responder, latency_s=0.02) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        result = run(
            "py:openai_mcp_agent:agent", tmp_path / "r", cases=[], concurrency=8, agent_model_proxy=server.url
        )
    per_case: dict[str, int] = {}
    for key, _round in responder.memo:
        per_case[key] = per_case.get(key, 0) + 1
    records = {r.key: r for r in result.records}
    assert len(records) == 16
    for key, record in records.items():
        assert record.trace.agent is not None
        assert record.trace.agent.details["model"]["requests"] == per_case[key], key
        assert len(record.trace.rounds) == per_case[key]
        called = [c.call_id for c in record.trace.calls]
        assert [cid for r in record.trace.rounds for cid in r.call_ids] == called
    header = json.loads((tmp_path / "r" / "run.json").read_text())
    assert header["options"]["agent_model"] == {
        "mode": "live",
        "upstreams": {"openai": server.url, "anthropic": "https://api.anthropic.com"},
    }


def test_the_cost_of_the_agents_tokens_comes_from_the_price_table(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"scripted": {"input": 1.0, "output": 2.0}}))
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    with ProtocolServer(responder) as server:
        result = run(
            "py:openai_mcp_agent:agent", tmp_path / "r", agent_model_proxy=server.url, price_table=prices
        )
    tokens = result.summary["usage"]["tokens"]
    assert result.summary["usage"]["cost_usd"] == pytest.approx(
        (tokens["input"] * 1 + tokens["output"] * 2) / 1e6
    )
    assert result.summary["usage"]["price_model"] == "scripted"


MCP_SERVERS = ROOT / "tests" / "mcp" / "client_servers.py"
ECHO_CASES = [
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
]


def gold_responder(api: str, body: dict[str, Any]) -> Any:
    """The echo suite's gold calls, then ``done``."""
    from protocol_server import Turn

    messages = body["messages"]
    if any(m["role"] == "tool" for m in messages):
        return Turn(text="done")
    case = next(c for c in ECHO_CASES if c["instruction"] == messages[-1]["content"])
    return Turn(calls=[(c["tool"], json.dumps(c["arguments"])) for c in case["expected"]])


def test_a_suite_on_a_live_mcp_server_records_both_tapes_in_one_folder(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from callbench.mcp.client import McpConnection

    suite = tmp_path / "echo-mcp.yaml"
    suite.write_text(json.dumps({"name": "echo-mcp", "cases": ECHO_CASES}))
    tools = f"mcp:stdio:{sys.executable} {MCP_SERVERS} loose"
    options: dict[str, Any] = {
        "tools": tools,
        "tier": TIER,
        "agent": "py:proxy_agent:openai",
        "progress": "quiet",
    }
    with ProtocolServer(gold_responder) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        live = callbench.run(str(suite), out_dir=tmp_path / "live", record=tmp_path / "rec", **options)
    assert (tmp_path / "rec" / "index.json").exists() and (tmp_path / "rec" / "model" / "index.json").exists()

    async def refuse(self: Any) -> Any:
        raise AssertionError("a tool server was started")

    env.setattr(McpConnection, "__aenter__", refuse)
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    replayed = callbench.run(str(suite), out_dir=tmp_path / "replay", replay=tmp_path / "rec", **options)
    assert {r.key: essence(r) for r in live.records} == {r.key: essence(r) for r in replayed.records}
    assert all(r.status == "completed" and r.verdicts[TIER].passed for r in replayed.records)
    header = json.loads((tmp_path / "replay" / "run.json").read_text())["options"]
    assert header["cassette"]["mode"] == header["agent_model"]["mode"] == "replay"


# --- whose fault -------------------------------------------------------------------------------------


def test_an_endpoint_that_is_down_is_an_error_record_not_the_agents_failure(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = run(
        "py:proxy_agent:openai", tmp_path / "r", cases=CASES[:1], agent_model_proxy="http://127.0.0.1:9/v1"
    )
    (record,) = result.records
    assert record.status == "error" and record.error is not None
    assert record.error.type == "AgentModelUnavailable"
    assert "the agent's model endpoint failed once (request 1: http://127.0.0.1:9/v1/chat/completions" in (
        record.error.message
    )
    assert (
        "the agent then ended with agent_crashed: the endpoint's failure, not the agent's"
        in record.error.message
    )
    assert result.summary["n_error"] == 1 and result.summary["tiers"].get(TIER, {}).get("n", 0) == 0
    faults = record.trace.agent.details["model"]["upstream_faults"]
    assert faults[0]["fault"] == "upstream_unreachable"


def test_an_agent_that_recovers_from_a_5xx_is_scored_and_its_replay_fails_the_same_way(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env.setenv("PROXY_AGENT_RETRIES", "1")
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    with ProtocolServer(responder) as server:
        server.inject(Fault("503"))
        recorded = run(
            "py:proxy_agent:openai",
            tmp_path / "r1",
            cases=CASES[:1],
            agent_model_proxy=server.url,
            record=tmp_path / "rec",
        )
    replayed = run("py:proxy_agent:openai", tmp_path / "r2", cases=CASES[:1], replay=tmp_path / "rec")
    for result in (recorded, replayed):
        (record,) = result.records
        assert record.status == "completed" and record.verdicts[TIER].passed
        model = record.trace.agent.details["model"]
        assert model["requests"] == 3 and model["answered"] == 2
        (fault,) = model["upstream_faults"]
        assert fault == {
            "request": 1,
            "api": "openai",
            "path": "chat/completions",
            "status": 503,
            "fault": "upstream_status",
            "message": "the model endpoint answered HTTP 503",
        }
        assert result.summary["usage"]["tokens"]["requests"] == 2  # the failed request is not an answer


def test_a_replayed_request_the_recording_lacks(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    with ProtocolServer(responder) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        run("py:openai_mcp_agent:agent", tmp_path / "r1", cases=CASES[:1], record=tmp_path / "rec")
        env.setenv("CALLBENCH_AGENT_MODEL", "another-model")  # the agent now asks something else
        strict = run("py:openai_mcp_agent:agent", tmp_path / "r2", cases=CASES[:1], replay=tmp_path / "rec")
        (record,) = strict.records
        assert record.status == "error" and record.error is not None and record.error.type == "cassette_miss"
        assert (
            "starter:weather_paris: the agent's model request 1 is not in the recording"
            in record.error.message
        )
        assert (
            "the recording's request 1 was chat/completions, 2 messages, the last user"
            in record.error.message
        )
        hash_before = ModelTapes.for_replay(tmp_path / "rec").hash
        asked = len(server.requests)
        live = run(
            "py:openai_mcp_agent:agent",
            tmp_path / "r3",
            cases=CASES[:1],
            replay=tmp_path / "rec",
            replay_miss="live",
        )
        assert len(server.requests) == asked + 2  # the misses went to the endpoint...
    (record,) = live.records
    assert record.status == "completed" and record.verdicts[TIER].passed
    entry = json.loads((tmp_path / "r3" / "run.json").read_text())["options"]["agent_model"]
    assert entry["hash"] == hash_before and entry["hash_at_end"] != hash_before  # ...and were added
    again = run("py:openai_mcp_agent:agent", tmp_path / "r4", cases=CASES[:1], replay=tmp_path / "rec")
    assert again.records[0].status == "completed"  # now answered from the recording, offline


# --- the agent's environment and bad input ------------------------------------------------------------

PRINT_ENV = """
import json, os
names = ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "CALLBENCH_MODEL_URL", "CALLBENCH_ANTHROPIC_URL",
         "OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
request = json.load(open(os.environ["CALLBENCH_REQUEST"]))
print(json.dumps({"env": {n: os.environ.get(n) for n in names}, "json": request}))
"""


def test_a_cmd_agent_gets_its_cases_model_urls(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = tmp_path / "print_env.py"
    script.write_text(PRINT_ENV)
    result = run(
        f"cmd:{sys.executable} {script}",
        tmp_path / "r",
        cases=CASES[:2],
        agent_model_proxy="http://127.0.0.1:9/v1",
    )
    seen = [json.loads(r.trace.final_text) for r in result.records]
    bases = set()
    for answer in seen:
        found, request = answer["env"], answer["json"]
        base = found["OPENAI_BASE_URL"]
        assert base.startswith("http://127.0.0.1:") and "/case/" in base and base.endswith("/v1")
        assert found["CALLBENCH_MODEL_URL"] == request["model_url"] == base
        assert found["ANTHROPIC_BASE_URL"] == found["CALLBENCH_ANTHROPIC_URL"] == request["anthropic_url"]
        assert found["ANTHROPIC_BASE_URL"] == base.removesuffix("/v1") + "/anthropic"
        assert found["OPENAI_API_KEY"] == found["ANTHROPIC_API_KEY"] == "callbench-proxy"
        bases.add(base)
    assert len(bases) == 2  # a route per case


def test_a_closed_route_answers_404() -> None:
    async def scenario() -> tuple[int, int]:
        async with AgentModelProxy({"openai": "http://127.0.0.1:9/v1"}) as proxy:
            route = proxy.open("suite:case")
            proxy.close(route)
            async with aiohttp.ClientSession() as http:
                async with http.post(f"{route.openai_url}/chat/completions", json={}) as reply:
                    status = reply.status
                async with http.post(f"http://127.0.0.1:{proxy.port}/case/unknown/v1/x", json={}) as reply:
                    return status, reply.status

    assert asyncio.run(scenario()) == (404, 404)


def test_bad_input_is_one_line(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    agent = "py:openai_mcp_agent:agent"
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"empty: not a cassette folder \(no index.json\)"):
        run(agent, tmp_path / "a", replay=tmp_path / "empty")
    (tmp_path / "empty" / "index.json").write_text('{"format": "callbench-cassette/1"}')  # tools only
    with pytest.raises(UserError, match=r"no recording of an agent's model requests \(model/index.json is"):
        run(agent, tmp_path / "a", replay=tmp_path / "empty")
    with pytest.raises(UserError, match="no such cassette folder"):
        run(agent, tmp_path / "b", replay=tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="--agent-model-proxy applies to --agent runs"):
        callbench.run("starter", "oracle", agent_model_proxy="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="is not an http"):
        run(agent, tmp_path / "c", agent_model_proxy="ftp://x")
    with pytest.raises(ConfigError, match="must take model_url="):
        run("py:proxy_agent:_loop", tmp_path / "d", agent_model_proxy="http://127.0.0.1:9/v1")
    # a corrupt or truncated tape
    responder = ScriptedResponder(load_suite("starter"), "oracle")
    with ProtocolServer(responder) as server:
        run(agent, tmp_path / "e", cases=CASES[:1], agent_model_proxy=server.url, record=tmp_path / "rec")
    tape = next((tmp_path / "rec" / "model" / "cases").glob("*.json"))
    tape.write_bytes(tape.read_bytes()[:-20])
    with pytest.raises(UserError, match="is corrupt or truncated"):
        run(agent, tmp_path / "f", replay=tmp_path / "rec")


def test_usage_is_read_from_every_answer_shape() -> None:
    chat = {
        "model": "m",
        "choices": [{"message": {"content": "hi", "tool_calls": [{}]}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 7,
            "completion_tokens": 3,
            "completion_tokens_details": {"reasoning_tokens": 2},
            "prompt_tokens_details": {"cached_tokens": 4},
        },
    }
    facts = body_facts("openai", "chat/completions", chat)
    assert (facts.input_tokens, facts.output_tokens, facts.reasoning_tokens, facts.cached_tokens) == (
        7,
        3,
        2,
        4,
    )
    assert (facts.text, facts.calls, facts.model, facts.finish_reason) == ("hi", 1, "m", "stop")
    response = {
        "model": "r",
        "status": "completed",
        "usage": {"input_tokens": 9, "output_tokens": 4, "output_tokens_details": {"reasoning_tokens": 1}},
        "output": [
            {"type": "function_call"},
            {"type": "message", "content": [{"type": "output_text", "text": "ok"}]},
        ],
    }
    facts = body_facts("openai", "responses", response)
    assert (facts.input_tokens, facts.output_tokens, facts.reasoning_tokens, facts.calls, facts.text) == (
        9,
        4,
        1,
        1,
        "ok",
    )
    events = [
        "event: response.output_text.delta\ndata: "
        + json.dumps({"type": "response.output_text.delta", "delta": "o"}),
        f"data: {json.dumps({'type': 'response.completed', 'response': response})}",
    ]
    facts = stream_facts("openai", "responses", events)
    assert (facts.input_tokens, facts.output_tokens, facts.finish_reason) == (9, 4, "completed")
    messages = {
        "model": "c",
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use"}],
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 2, "output_tokens": 6},
    }
    facts = body_facts("anthropic", "v1/messages", messages)
    assert (facts.input_tokens, facts.cached_tokens, facts.output_tokens, facts.calls) == (7, 2, 6, 1)
