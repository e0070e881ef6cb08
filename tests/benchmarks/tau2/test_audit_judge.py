"""The τ² audit judge (``--option audit_judge=...``): asked only about failed conversations of a
simulated user that no rule charged to the user; its findings excuse the agent as ``simulator_error``;
verdicts cached and reused offline; an unparsable judge is flagged, an absent one is an error record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from protocol_server import Fault, ProtocolServer, Turn

import callbench
from callbench.suites.resolve import load_suite
from callbench.types.conversation import STOP

pytest.importorskip("tau2.domains.mock.environment")

from callbench.benchmarks.tau2.judge import CACHE_FILE, finding_of, question  # noqa: E402
from callbench.benchmarks.tau2.trajectory import messages  # noqa: E402

CONTRADICTED = {"contradicted_instructions": True, "revealed_unknown_information": False, "reason": "asked X"}
CLEAN = {"contradicted_instructions": False, "revealed_unknown_information": False, "reason": "fine"}


def write_tasks() -> list[str]:
    """tau2:mock tasks that need a write and whose user speaks first (``refuse`` fails them)."""
    suite = load_suite("tau2:mock")
    return [c.id for c in suite.cases if c.metadata["tau2_writes"] and c.user_opens and not c.messages]


class Simulator:
    """The simulated user: says the case's opening, then ends the conversation."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, api: str, body: dict[str, Any]) -> Turn:
        self.requests += 1
        spoken = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return Turn(text="I need my task created, please." if spoken == 0 else STOP)


class Judge:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, api: str, body: dict[str, Any]) -> Turn:
        self.bodies.append(body)
        return Turn(text=self.reply)


def run(out: Path, ids: list[str], *, user: str | None, judge: str, cache: Path | None = None, **kw: Any):
    options = {"audit_judge": judge} | ({"audit_judge_cache": str(cache)} if cache else {})
    extra: dict[str, Any] = {"user_model": user, "user_seed": 3} if user else {}
    return callbench.run(
        "tau2:mock",
        "refuse",
        out_dir=out,
        progress="quiet",
        case_ids=ids,
        cache=False,
        suite_options=options,
        **extra,
        **kw,
    )


def test_a_judged_fault_excuses_the_agent_and_is_cached_for_offline_rescoring(tmp_path: Path) -> None:
    ids = write_tasks()
    assert len(ids) >= 2
    judge, simulator = Judge(json.dumps(CONTRADICTED)), Simulator()
    with ProtocolServer(simulator) as user_server, ProtocolServer(judge) as judge_server:
        result = run(
            tmp_path / "run",
            ids,
            user=f"openai:sim@{user_server.url}",
            judge=f"openai:judge@{judge_server.url}",
            cache=tmp_path / "judge",
        )
    asked = [body["messages"][1]["content"] for body in judge.bodies]
    # Once per failed conversation, and never twice about the same one (some mock tasks share a scenario).
    assert 2 <= len(asked) <= len(ids) and len(set(asked)) == len(asked)
    prompt = judge.bodies[0]["messages"][1]["content"]
    assert "Customer's instructions:" in prompt and "customer: I need my task created, please." in prompt
    for record in result.records:
        verdict = record.verdicts["tau2-reward"]
        assert not verdict.applicable and not verdict.passed
        assert verdict.reasons[0].code == "simulator_error"
        assert verdict.reasons[0].message.startswith("contradicted_instructions: (audit judge) asked X")
        assert verdict.details["audit_judge"]["judge_model"].startswith("openai:judge@")
        assert verdict.details["audit_judge"]["prompt_hash"]
    figures = result.summary["scorer_aggregates"]["tau2-reward"]
    assert figures["n_simulator_faults"] == len(ids)
    assert figures["simulator_fault_rules"] == {"contradicted_instructions": len(ids)}
    assert figures["audit_judge"] == {"asked": len(ids), "found": len(ids)}
    assert (tmp_path / "judge" / CACHE_FILE).is_file()
    # Re-scoring offline: the judge's server is gone; the cached findings give the same verdicts.
    rescored = callbench.score_run(tmp_path / "run")
    aggregates = rescored["scorer_aggregates"]["tau2-reward"]
    assert aggregates["n_simulator_faults"] == len(ids)


def test_the_judge_is_not_asked_for_a_scripted_user_or_a_passed_conversation(tmp_path: Path) -> None:
    ids = write_tasks()[:2]
    judge = Judge(json.dumps(CONTRADICTED))
    with ProtocolServer(judge) as judge_server:
        result = run(tmp_path / "run", ids, user=None, judge=f"openai:judge@{judge_server.url}")
    assert judge.bodies == []
    assert all(r.verdicts["tau2-reward"].applicable for r in result.records)  # the agent's failure
    assert "audit_judge" not in result.records[0].verdicts["tau2-reward"].details


def test_an_unparsable_judge_finds_nothing_and_is_flagged(tmp_path: Path) -> None:
    ids = write_tasks()
    judge, simulator = Judge("I think the customer was fine overall."), Simulator()
    with ProtocolServer(simulator) as user_server, ProtocolServer(judge) as judge_server:
        result = run(
            tmp_path / "run",
            ids,
            user=f"openai:sim@{user_server.url}",
            judge=f"openai:judge@{judge_server.url}",
        )
    for record in result.records:
        verdict = record.verdicts["tau2-reward"]
        assert verdict.applicable and not verdict.passed  # counted as the agent's failure
        assert verdict.details["audit_judge"]["parsed"] is False
    figures = result.summary["scorer_aggregates"]["tau2-reward"]
    assert figures["audit_judge"] == {"asked": len(ids), "unparsable": len(ids)}
    notes = json.dumps(figures["tables"], ensure_ascii=False)
    assert "WARNING: the audit judge never answered as asked" in notes


def test_a_judge_outage_is_an_error_record_not_the_agents_failure(tmp_path: Path) -> None:
    from callbench.benchmarks.tau2 import judge as judge_module
    from callbench.providers.model import Model, ModelOptions, RetryPolicy, make_provider

    ids = write_tasks()[:1]
    judge, simulator = Judge(json.dumps(CLEAN)), Simulator()
    with ProtocolServer(simulator) as user_server, ProtocolServer(judge) as judge_server:
        judge_server.fault_rule = lambda api, body: Fault("500")
        spec = f"openai:judge@{judge_server.url}"
        # The judge's own retries (six, with back-off, by default), made quick for the test.
        quick = ModelOptions(retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
        judge_module._SHARED[("AuditJudge", spec, "")] = judge_module.AuditJudge(
            Model(make_provider(spec), options=quick), label=spec
        )
        result = run(tmp_path / "run", ids, user=f"openai:sim@{user_server.url}", judge=spec, max_retries=0)
    [record] = result.records
    assert record.status == "error" and record.error is not None
    assert record.error.type.startswith("scorer:")


def test_findings_and_the_question() -> None:
    assert finding_of(None).parsed is False
    assert finding_of({"contradicted_instructions": "yes"}).parsed is False  # not the booleans asked for
    clean = finding_of(CLEAN)
    assert clean.parsed and clean.faults == ()
    both = finding_of({**CLEAN, "contradicted_instructions": True, "revealed_unknown_information": True})
    assert [f.rule for f in both.faults] == ["contradicted_instructions", "revealed_unknown_information"]
    suite = load_suite("tau2:mock")
    case = next(c for c in suite.cases if c.id == write_tasks()[0])
    text = question(case, messages(case, callbench.types.trace.Trace()))
    assert case.user is not None and case.user.instructions.strip()[:40] in text
    assert "What the instructions say the customer does not know:" in text


def test_an_unknown_option_names_the_ones_the_suite_takes() -> None:
    from callbench.benchmarks.tau2.suite import load_suite as load_tau2
    from callbench.errors import ConfigError
    from callbench.types.suite_options import SuiteOptions

    with pytest.raises(ConfigError, match="it takes split, audit_judge, audit_judge_cache"):
        load_tau2("mock", SuiteOptions(extra={"audit_jugde": "x"}))
