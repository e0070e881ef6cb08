"""The judge through a real provider (OpenAI protocol) against a local server on 127.0.0.1."""

import asyncio
import json

from cfb_helpers import gold_turns, trace_of, wire_turns
from protocol_server import ProtocolServer, Turn

from callbench.benchmarks.complexfuncbench.scorer import ComplexEvalScorer
from callbench.benchmarks.complexfuncbench.suite import load_suite
from callbench.suites.suite import SuiteOptions


def _responder(api, body):
    system = body["messages"][0]["content"]
    if "equivalent" in system:
        return Turn(text=json.dumps({"is_equal": True, "reason": "Paris, France is Paris"}))
    return Turn(text=json.dumps({"score": 1, "reason": "partly"}))


def test_judge_model_string_builds_a_provider_and_verdicts_are_cached(tmp_path):
    with ProtocolServer(_responder) as server:
        options = SuiteOptions(
            extra={"judge": f"openai:judge-model@{server.url}", "judge_cache": str(tmp_path / "judge")}
        )
        suite = load_suite("complexfuncbench:fixture:faithful", options)
        case = next(c for c in suite.cases if c.id == "Hotels-0")
        turns = gold_turns("Hotels-0")
        turns[0] = [("Search_Hotel_Destination", {"query": "Paris, France"})]
        trace = trace_of(wire_turns(case, turns), final_text="Hotel Lumiere")
        verdict = asyncio.run(ComplexEvalScorer(suite).ascore(case, trace))
        assert verdict.passed and verdict.details["calls"][0]["method"] == "judge"
        assert verdict.details["judge_model"] == f"openai:judge-model@{server.url}"
        assert verdict.details["response"] == {"status": "scored", "completeness": 1, "correctness": 1}
        assert len(server.requests) == 3
        # A second scorer (e.g. `callbench score`) finds every verdict in the cache folder.
        again = asyncio.run(ComplexEvalScorer(suite).ascore(case, trace))
        assert again.passed and len(server.requests) == 3
