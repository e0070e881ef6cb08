"""The tau2 suites: the oracle and refuse on τ²'s own tasks, the reward against τ²'s own evaluator,
and conversations end to end over the OpenAI protocol with a scripted agent and a scripted simulator."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from protocol_server import ProtocolServer, Turn

import callbench
from callbench.benchmarks.tau2.results import results
from callbench.benchmarks.tau2.reward import Tau2RewardScorer
from callbench.errors import PoolingError
from callbench.providers.agents.oracle import gold_plan
from callbench.stats import compare_runs, record_view
from callbench.suites.resolve import load_suite
from callbench.types.conversation import STOP

pytest.importorskip("tau2.domains.mock.environment")

DOMAINS = ("mock", "airline", "retail", "telecom")
EVERY = {"mock": 1, "telecom": 12, "airline": 10, "retail": 19}
"""The tasks each domain's CI runs take (every Nth: 9, 10, 5 and 6 tasks). ``CALLBENCH_TAU2_SAMPLE=all``
takes every task of the splits (about 15 minutes on 2 cores; docs/conversations.md)."""
MODELS = ("oracle", "refuse", "noisy:3")
COMPARED = {"mock": MODELS}
"""The trajectories τ²'s evaluator re-scores per domain (its own replay costs about a second each): every
agent's on mock, the oracle's and the noisy agent's elsewhere (refusing leaves the database as it was,
which mock's trajectories already check); all of them under ``CALLBENCH_TAU2_SAMPLE=all``."""
if os.environ.get("CALLBENCH_TAU2_SAMPLE") == "all":
    EVERY = dict.fromkeys(EVERY, 1)
    COMPARED = dict.fromkeys(EVERY, MODELS)

ORACLE_GOLD_SHORT = {"tau2:mock:update_task_with_history_and_env_assertions"}
"""Tasks whose gold actions do not reach reward 1 upstream either (a data defect: no gold actions,
an assertion that needs a write)."""


def sample(domain: str) -> list[str]:
    suite = load_suite(f"tau2:{domain}")
    return [c.id for c in suite.cases][:: EVERY[domain]]


def run(domain: str, model: str, out: Path, **options: Any) -> callbench.RunResult:
    return callbench.run(
        f"tau2:{domain}",
        model,
        out_dir=out,
        progress="quiet",
        case_ids=sample(domain),
        concurrency=4,
        **options,
    )


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], callbench.RunResult]:
    """The oracle, refuse and noisy agents on every domain's sample (one run each, shared)."""
    out = tmp_path_factory.mktemp("tau2")
    return {
        (domain, model): run(domain, model, out / f"{domain}-{model.replace(':', '_')}")
        for domain in DOMAINS
        for model in MODELS
    }


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_oracle_reaches_reward_1_on_every_task_with_complete_gold(played: dict, domain: str) -> None:
    records = played[(domain, "oracle")].records
    assert records and all(r.status == "completed" for r in records)
    failed = {r.key for r in records if not r.verdicts["tau2-reward"].passed}
    assert failed == {k for k in ORACLE_GOLD_SHORT if k.startswith(f"tau2:{domain}:")} & {
        r.key for r in records
    }
    for record in records:  # the strict tiers score the agent's calls against the gold actions
        assert all(v.passed for name, v in record.verdicts.items() if name != "tau2-reward"), record.key
        assert record.trace.stop_reason == "user_stop"
        assert record.simulator is not None and record.simulator.kind == "scripted"
        assert record.harness_mode.endswith("+user=scripted")


@pytest.mark.parametrize("domain", DOMAINS)
def test_refuse_scores_0_on_every_task_that_needs_a_write(played: dict, domain: str) -> None:
    suite = load_suite(f"tau2:{domain}")
    writes = {c.key for c in suite.cases if c.metadata["tau2_writes"]}
    records = played[(domain, "refuse")].records
    assert any(r.key in writes for r in records)
    for record in records:
        verdict = record.verdicts["tau2-reward"]
        if record.key in writes:
            assert not verdict.passed and verdict.applicable, record.key  # never excused as the user's fault


@pytest.fixture(scope="module")
def upstream(
    played: dict, tau2_upstream_eval: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
    """Every domain's oracle, refuse and noisy trajectories exported as τ² results and scored by the
    package's own evaluator, all in one process (its import alone takes seconds): per domain, each
    record with upstream's line."""
    out = tmp_path_factory.mktemp("tau2-results")
    paths, exported = [], {}
    for domain in DOMAINS:
        suite = load_suite(f"tau2:{domain}")
        records = [
            r
            for model in COMPARED.get(domain, ("oracle", "noisy:3"))
            for r in played[(domain, model)].records
        ]
        for index, record in enumerate(records):
            record.trial = index + 1  # distinct simulation ids in one results file
        cases = {c.id: c for c in suite.cases}
        data, skipped = results(domain, "", suite.metadata["tau2_tasks"], cases, records, "oracle")
        assert skipped == 0
        paths.append(out / f"{domain}.json")
        paths[-1].write_text(json.dumps(data))
        exported[domain] = records
    lines = {line["simulation_id"]: line for line in tau2_upstream_eval(*paths)}
    return {
        domain: [(r, lines[f"{r.key}#{r.trial}"]) for r in records] for domain, records in exported.items()
    }


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_reward_equals_taus_own_evaluator_on_every_trajectory(
    upstream: dict[str, list[tuple[Any, dict[str, Any]]]], domain: str
) -> None:
    """Reward and every component agree with τ²'s evaluator; the scorer's replay (no recorded end
    state) too."""
    suite = load_suite(f"tau2:{domain}")
    scorer = Tau2RewardScorer(suite)
    cases = {c.id: c for c in suite.cases}
    assert upstream[domain]
    for record, theirs in upstream[domain]:
        ours = record.verdicts["tau2-reward"].details
        if theirs["error"] is not None:  # an assertion whose own lookup raised: τ² stops, callbench fails it
            assert (
                "not found" in theirs["error"] and ours["reward"] == 0.0 and False in ours["env_assertions"]
            )
            continue
        assert ours["reward"] == theirs["reward"], record.key
        assert ours["reward_breakdown"] == theirs["reward_breakdown"], record.key
        for part in ("db_match", "env_assertions", "action_checks", "communicate_checks"):
            if ours["db_match"] is not None or part != "db_match":
                assert ours[part] == theirs[part], (record.key, part)
        replayed = record.trace.model_copy(update={"final_state": None})
        assert scorer.score(cases[record.case_id], replayed).details["reward"] == ours["reward"]


def test_the_noisy_agent_is_scored_without_errors(played: dict) -> None:
    for domain in DOMAINS:
        records = played[(domain, "noisy:3")].records
        assert all(r.status == "completed" for r in records)
        assert {r.verdicts["tau2-reward"].passed for r in records} >= {False}


# --- conversations over the OpenAI protocol: a scripted agent and a scripted simulated user --------


class GoldAgent:
    """Answers as the oracle would, from the conversation alone: the case is found by the user's
    opening words, the gold plan's position by the agent's turns so far."""

    def __init__(self, cases: list[Any]) -> None:
        self.by_opening = {c.user.script[0].say: c for c in cases if c.user and c.user.script}

    def __call__(self, api: str, body: dict[str, Any]) -> Turn:
        messages = body["messages"]
        opening = next(m["content"] for m in messages if m["role"] == "user")
        case = self.by_opening[opening]
        plan = gold_plan(case)
        position = sum(1 for m in messages if m["role"] == "assistant") - 1  # the greeting is not a turn
        if position < len(plan) and plan[position]:
            return Turn(calls=[(c.tool, json.dumps(c.arguments)) for c in plan[position]])
        return Turn(text=str(case.metadata["oracle_text"]))


class ScriptedSimulator:
    """Plays the simulated user: finds the case by the instructions in its system prompt and says
    the script's turns, then ends the conversation."""

    def __init__(self, cases: list[Any]) -> None:
        self.cases = [c for c in cases if c.user and c.user.instructions]
        self.requests = 0

    def __call__(self, api: str, body: dict[str, Any]) -> Turn:
        self.requests += 1
        system = body["messages"][0]["content"]
        case = next(c for c in self.cases if c.user.instructions.strip() in system)
        spoken = sum(1 for m in body["messages"] if m["role"] == "assistant")
        script = [t.say for t in case.user.script if not t.calls]
        return Turn(text=script[spoken] if spoken < len(script) else STOP, input_tokens=7, output_tokens=3)


def test_a_conversation_run_over_the_openai_protocol_with_a_simulated_user(tmp_path: Path) -> None:
    suite = load_suite("tau2:mock")
    openings = [c.user.script[0].say for c in suite.cases if c.user_opens and not c.messages]
    # Both scripted sides find the case by what the user says: cases sharing their words are left out.
    ids = [
        c.id
        for c in suite.cases
        if c.user_opens and not c.messages and openings.count(c.user.script[0].say) == 1
    ]
    assert len(ids) >= 3
    agent, simulator = GoldAgent(suite.cases), ScriptedSimulator(suite.cases)
    with ProtocolServer(agent) as agent_server, ProtocolServer(simulator) as user_server:
        result = callbench.run(
            "tau2:mock",
            f"openai:agent@{agent_server.url}",
            out_dir=tmp_path / "run",
            progress="quiet",
            case_ids=ids,
            trials=2,
            cache=False,
            user_model=f"openai:simulator@{user_server.url}",
            user_seed=11,
            user_temperature=0.0,
        )
    records = result.records
    assert len(records) == 2 * len(ids) and all(r.status == "completed" for r in records)
    assert all(r.verdicts["tau2-reward"].passed for r in records)
    info = records[0].simulator
    assert info is not None and info.kind == "simulated" and info.model.startswith("openai:simulator@")
    assert {r.simulator.seed for r in records} == {11}
    assert all("+user=openai:simulator@" in r.harness_mode for r in records)
    # The simulator's tokens are its own, never the agent's.
    for record in records:
        turns = record.trace.user_turns or []
        assert turns and all(t.usage is not None and t.usage.input_tokens == 7 for t in turns)
        assert record.trace.usage.input_tokens == 10 * len(record.trace.rounds)
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    assert header["simulator"]["kind"] == "simulated" and header["simulator"]["seed"] == 11
    figures = result.summary["scorer_aggregates"]["tau2-reward"]
    assert figures["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert figures["n_simulator_faults"] == 0 and figures["simulator_fault_rate"] == 0.0
    assert "τ² reward" in json.dumps(figures["tables"], ensure_ascii=False)
    # A run with another user is another stratum: never compared with this one.
    scripted = callbench.run(
        "tau2:mock", "oracle", out_dir=tmp_path / "scripted", progress="quiet", case_ids=ids
    )
    with pytest.raises(PoolingError):
        compare_runs(
            [record_view(r) for r in records], [record_view(r) for r in scripted.records], "tau2-reward"
        )
