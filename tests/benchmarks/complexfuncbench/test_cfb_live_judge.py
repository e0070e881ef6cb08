"""The LLM judge decides during the episode (as in ComplexEval), through the engine and a real
OpenAI-protocol provider against a local server on 127.0.0.1 that plays both the model and the judge."""

import asyncio
import json
from pathlib import Path

import pytest
from cfb_helpers import ScriptedProvider, gold_turns, sample
from protocol_server import Fault, ProtocolServer, Turn

from callbench.api import run
from callbench.benchmarks.complexfuncbench.definitions import GENERIC_ERROR, PredCall
from callbench.benchmarks.complexfuncbench.judge import PROMPT_HASH, Judge, VerdictCache
from callbench.benchmarks.complexfuncbench.names import sanitise

# What the scripted model does per case: the first turn with one look-up written another way
# (a judge accepts it, nothing else does), then the gold path, then a final answer.
PARIS = ("Search_Hotel_Destination", {"query": "Paris, France"})
SHANGHAI = ("Search_Flight_Location", {"query": "Shanghai, China"})


def _script(case_id: str) -> list[list[tuple[str, dict]]]:
    turns = gold_turns(case_id)
    if case_id == "Hotels-0":
        turns[0] = [PARIS]
    else:  # Cross-0, Cross-1: one of four parallel look-ups rewritten
        turns[0] = [SHANGHAI, *turns[0][1:]]
    return turns


def _case_of(body: dict) -> str:
    query = next(m["content"] for m in body["messages"] if m["role"] == "user")
    for case_id in ("Hotels-0", "Cross-0", "Cross-1"):
        if sample(case_id).query == query:
            return case_id
    raise AssertionError(f"unexpected query {query!r}")


def _is_call_judge(body: dict) -> bool:
    first = body["messages"][0]
    return first["role"] == "system" and "equivalent" in first["content"]


def _responder(api: str, body: dict) -> Turn:
    first = body["messages"][0]
    if _is_call_judge(body):
        return Turn(text=json.dumps({"is_equal": True, "reason": "same place with its country"}))
    if first["role"] == "system":  # completeness / correctness of the final answer
        return Turn(text=json.dumps({"score": 2, "reason": "fine"}))
    script = _script(_case_of(body))
    done = sum(1 for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    if done >= len(script):
        return Turn(text="Here is what I found.")
    return Turn(calls=[(sanitise(name), json.dumps(args)) for name, args in script[done]])


def _records(folder: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


def _run(server: ProtocolServer, tmp_path: Path, mode: str, cases: list[str], **options) -> dict[str, dict]:
    suite_options = {"judge": f"openai:judge-model@{server.url}", "judge_cache": str(tmp_path / "judge")}
    run(
        f"complexfuncbench:fixture:{mode}",
        f"openai:cfb-model@{server.url}",
        out_dir=tmp_path / "run",
        case_ids=cases,
        suite_options=suite_options,
        cache=False,
        progress="quiet",
        **options,
    )
    return _records(tmp_path / "run")


def _tool_contents(server: ProtocolServer, case_id: str) -> list[str]:
    """Every tool result the model read in its last request for the case."""
    bodies = [
        b for _p, b, _h in server.requests if "tools" in b and b.get("tools") and _case_of(b) == case_id
    ]
    last = max(bodies, key=lambda b: len(b["messages"]))
    return [m["content"] for m in last["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("mode", ["faithful", "improved"])
def test_a_judge_accepted_call_is_answered_with_the_gold_response_during_the_episode(tmp_path, mode):
    with ProtocolServer(_responder) as server:
        record = _run(server, tmp_path, mode, ["Hotels-0"])["Hotels-0"]
        first = record["trace"]["calls"][0]
        gold_response = sample("Hotels-0").steps[0][0].response
        # The model read the annotated response of the gold look-up, not the generic error.
        assert json.loads(_tool_contents(server, "Hotels-0")[0]) == gold_response
        assert first["result"] == gold_response and first["execution"] == "ok"
        assert first["annotations"]["cfb_method"] == "judge"
        assert first["annotations"]["cfb_judge"] == {
            "model": f"openai:judge-model@{server.url}",
            "prompt_hash": PROMPT_HASH,
            "is_equal": True,
        }
        verdict = record["verdicts"]["complexeval"]
        assert verdict["passed"], verdict
        assert record["trace"]["stop_reason"] == "answer"
        assert verdict["details"]["calls"][0]["method"] == "judge"
        assert verdict["details"]["prompt_hash"] == PROMPT_HASH
        # The executor asked once; the scorer found the verdict in the shared cache.
        assert sum(_is_call_judge(b) for _p, b, _h in server.requests) == 1


def test_without_the_judge_the_same_call_gets_the_generic_error(tmp_path):
    with ProtocolServer(_responder) as server:
        run(
            "complexfuncbench:fixture:improved",
            f"openai:cfb-model@{server.url}",
            out_dir=tmp_path / "run",
            case_ids=["Hotels-0"],
            cache=False,
            progress="quiet",
        )
        assert json.loads(_tool_contents(server, "Hotels-0")[0]) == GENERIC_ERROR


def test_concurrent_cases_share_the_judge_cache(tmp_path):
    server = ProtocolServer(_responder)
    # Slow judge replies keep both cases' questions in flight at the same time.
    server.fault_rule = lambda api, body: Fault("slow", delay_s=0.4) if _is_call_judge(body) else None
    with server:
        records = _run(server, tmp_path, "faithful", ["Cross-0", "Cross-1"], concurrency=2)
        judge_requests = [b for _p, b, _h in server.requests if _is_call_judge(b)]
        assert len(judge_requests) == 1  # the same (call, gold call, definition) pair is asked once
        for case_id in ("Cross-0", "Cross-1"):
            first = records[case_id]["trace"]["calls"][0]
            assert first["annotations"]["cfb_method"] == "judge", case_id
            assert json.loads(_tool_contents(server, case_id)[0]) == sample(case_id).steps[0][0].response
            assert records[case_id]["verdicts"]["complexeval"]["passed"]
    lines = (tmp_path / "judge" / "complexeval-judge.jsonl").read_text().splitlines()
    call_rows = [json.loads(line) for line in lines if "is_equal" in line]
    assert len(call_rows) == 1 and call_rows[0]["value"]["prompt_hash"] == PROMPT_HASH


def test_a_judge_outage_during_the_run_is_an_error_record_not_a_model_failure(tmp_path, monkeypatch):
    # The judge's own Model retries with backoff (about 45 s of waiting); the outcome, not the wait,
    # is under test, so its retries here do not sleep.
    import callbench.providers.model as model_module

    async def no_wait(_: float) -> None:
        return None

    class InstantRetries(model_module.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs, sleep=no_wait)

    monkeypatch.setattr(model_module, "Model", InstantRetries)
    server = ProtocolServer(_responder)
    server.fault_rule = lambda api, body: Fault("500") if _is_call_judge(body) else None
    with server:
        record = _run(server, tmp_path, "improved", ["Hotels-0"], max_retries=0)["Hotels-0"]
    assert record["status"] == "error" and record["verdicts"] == {}


def test_simultaneous_questions_about_one_pair_reach_the_provider_once(tmp_path):
    class Slow(ScriptedProvider):
        async def generate(self, messages, tools, settings):
            await asyncio.sleep(0.05)
            return await super().generate(messages, tools, settings)

    provider = Slow(reply_for=lambda m: '{"is_equal": true, "reason": "same"}')
    judge = Judge(provider, label="scripted:judge-1", cache=VerdictCache(tmp_path))
    from callbench.benchmarks.complexfuncbench.definitions import gold_calls_of

    gold = gold_calls_of(sample("Hotels-0"))[0][0]
    pred = PredCall(0, *PARIS)
    function = next(f for f in sample("Hotels-0").functions if f["name"] == gold.name)

    async def ask_many():
        return await asyncio.gather(*(judge.judge_call(pred, gold, function, "q") for _ in range(8)))

    assert asyncio.run(ask_many()) == [True] * 8
    assert len(provider.requests) == 1
    assert len((tmp_path / "complexeval-judge.jsonl").read_text().splitlines()) == 1
    # A second event loop (e.g. `callbench score` after a run) still finds it, without asking.
    assert asyncio.run(ask_many()) == [True] * 8 and len(provider.requests) == 1


def test_waiting_on_the_judge_is_endpoint_time_for_every_case_that_waits(tmp_path):
    # The judge's request runs in a task of its own (shared by the cases asking the same pair), so
    # each waiting case must tell its own clock that it waits on an endpoint, not on the model.
    from callbench.providers.model import endpoint_waits

    class Clock:
        def __init__(self):
            self.log = []

        def begin(self):
            self.log.append("begin")

        def note(self, what):
            self.log.append(what)

        def end(self):
            self.log.append("end")

    class Slow(ScriptedProvider):
        async def generate(self, messages, tools, settings):
            await asyncio.sleep(0.05)
            return await super().generate(messages, tools, settings)

    judge = Judge(Slow(reply_for=lambda m: '{"is_equal": true, "reason": "same"}'), label="scripted:judge-1")
    from callbench.benchmarks.complexfuncbench.definitions import gold_calls_of

    gold = gold_calls_of(sample("Hotels-0"))[0][0]
    clocks = [Clock(), Clock()]

    async def one_case(clock):
        endpoint_waits.set(clock)
        return await judge.judge_call(PredCall(0, *PARIS), gold, None, "q")

    async def both():
        return await asyncio.gather(*(asyncio.create_task(one_case(c)) for c in clocks))

    assert asyncio.run(both()) == [True, True]
    assert [c.log for c in clocks] == [["begin", "request", "end"]] * 2
