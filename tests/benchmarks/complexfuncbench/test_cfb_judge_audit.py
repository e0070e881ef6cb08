"""The judge audit of a real ComplexEval run: an OpenAI-protocol server on 127.0.0.1 plays the model
and the response judge, the judge's scores are scripted per case, and ``callbench audit-judge``
finds each case in its cell of the confusion table (and the unparsable reply apart)."""

from __future__ import annotations

import json

from cfb_helpers import gold_turns, sample
from protocol_server import ProtocolServer, Turn

from callbench.api import run
from callbench.benchmarks.complexfuncbench.names import sanitise
from callbench.cli.main import main
from callbench.review.judge_audit import audit_run

CASES = ("Hotels-0", "Cross-0", "Cross-1", "Attraction-0", "Flights-0")
ANSWERS_AT_ONCE = {"Cross-1", "Flights-0"}
"""Cases whose model answers without a call: ComplexEval fails them (stop_early)."""
JUDGE_REPLY = {
    "Hotels-0": '{"score": 2, "reason": "complete"}',  # judge pass, strict pass
    "Cross-0": '{"score": 0, "reason": "missed it"}',  # judge fail, strict pass
    "Cross-1": '{"score": 2, "reason": "looks fine"}',  # judge pass, strict fail
    "Attraction-0": "I would rate this answer highly.",  # not JSON: not parsed
    "Flights-0": '{"score": 1, "reason": "partly"}',  # judge fail, strict fail
}


def _case_in(text: str) -> str:
    for case_id in CASES:
        if sample(case_id).query in text:
            return case_id
    raise AssertionError(f"unexpected request {text[:200]!r}")


def _responder(api: str, body: dict) -> Turn:
    first = body["messages"][0]
    if first["role"] == "system" and "equivalent" in first["content"]:
        return Turn(text=json.dumps({"is_equal": False, "reason": "no"}))
    if first["role"] == "system":  # completeness / correctness of the final answer
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return Turn(text=JUDGE_REPLY[_case_in(user)])
    query = next(m["content"] for m in body["messages"] if m["role"] == "user")
    case_id = _case_in(query)
    script = [] if case_id in ANSWERS_AT_ONCE else gold_turns(case_id)
    done = sum(1 for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    if done >= len(script):
        return Turn(text="Here is what I found.")
    return Turn(calls=[(sanitise(name), json.dumps(args)) for name, args in script[done]])


def test_a_scripted_judge_is_audited_end_to_end(tmp_path, capsys):
    with ProtocolServer(_responder) as server:
        run(
            "complexfuncbench:fixture:improved",
            f"openai:cfb-model@{server.url}",
            out_dir=tmp_path / "run",
            case_ids=list(CASES),
            suite_options={
                "judge": f"openai:judge-model@{server.url}",
                "judge_cache": str(tmp_path / "judge"),
            },
            cache=False,
            progress="quiet",
        )
        judge = f"openai:judge-model@{server.url}"
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    passed = {r["case_id"]: r["verdicts"]["complexeval"]["passed"] for r in records}
    assert passed == {c: c not in ANSWERS_AT_ONCE for c in CASES}

    [a] = audit_run(tmp_path / "run").audits
    assert (a.source, a.judge, a.strict) == (
        "ComplexEval response judge",
        judge,
        "complexeval success (improved)",
    )
    key = {c: f"complexfuncbench:{c}" for c in CASES}
    assert a.confusion == [[1, 1], [1, 1]]
    assert a.judge_only_cases == [(key["Cross-1"], 1)] and a.strict_only_cases == [(key["Cross-0"], 1)]
    assert a.unparsed == {"judge_failed": 1} and a.unparsed_cases == [(key["Attraction-0"], 1)]
    assert [f.code for f in a.flags] == ["unparsed"]
    # po = 2/4, pe = 1/2: κ = 0.
    assert a.kappa is not None and a.kappa.estimate == 0.0

    assert main(["audit-judge", str(tmp_path / "run"), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "## ComplexEval response judge (" in out and "| judge pass | 1 | 1 |" in out
    assert f"- judge pass, strict fail (1): `{key['Cross-1']}`" in out
    assert f"- judge reply not parsed (1): `{key['Attraction-0']}`" in out
