"""τ²'s natural-language assertions through the declared judge (``--option nl_judge=...``): in the
reward where the task's basis names them, recorded beside it (a judge pair for `callbench audit-judge`)
where it does not; a missing or unreadable answer the reward needs is the judge's fault, never the
agent's failure; offline re-scoring uses the cached answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from protocol_server import ProtocolServer, Turn

import callbench
from callbench.errors import ProviderError, SuiteError
from callbench.suites.resolve import load_suite

pytest.importorskip("tau2.domains.mock.environment")

from callbench.benchmarks.tau2.judge import nl_question, nl_verdicts  # noqa: E402
from callbench.benchmarks.tau2.reward import NLJudgeUnanswered, Tau2RewardScorer  # noqa: E402

TASK = "create_task_1"
ASSERTIONS = ["The agent created the task for the user.", "The agent confirmed the task's title."]


class Judge:
    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, api: str, body: dict[str, Any]) -> Turn:
        self.bodies.append(body)
        return Turn(text=self.reply if isinstance(self.reply, str) else json.dumps(self.reply))


def answers(*met: bool) -> dict[str, Any]:
    return {"assertions": [{"met": m, "reason": "as shown"} for m in met]}


@pytest.fixture(scope="module")
def oracle_trace(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The oracle's conversation on the task (reward 1 without NL assertions)."""
    run = callbench.run(
        "tau2:mock",
        "oracle",
        out_dir=tmp_path_factory.mktemp("nl") / "run",
        progress="quiet",
        case_ids=[TASK],
    )
    [record] = run.records
    assert record.verdicts["tau2-reward"].passed
    return record.trace


def scorer_for(judge_url: str | None, cache: Path | None = None, *, in_basis: bool = True) -> tuple[Any, Any]:
    """The suite's scorer with the task given NL assertions (in its reward basis or not), and the case."""
    options: dict[str, Any] = {}
    if judge_url is not None:
        options["nl_judge"] = f"openai:nl@{judge_url}"
    if cache is not None:
        options["nl_judge_cache"] = str(cache)
    suite = load_suite("tau2:mock", **options)
    task = suite.metadata["tau2_tasks"][TASK]
    criteria = task.evaluation_criteria
    kind = type(criteria.reward_basis[0])  # τ²'s RewardType
    basis = [*criteria.reward_basis, *([kind("NL_ASSERTION")] if in_basis else [])]
    changed = criteria.model_copy(update={"nl_assertions": ASSERTIONS, "reward_basis": basis})
    suite.metadata["tau2_tasks"][TASK] = task.model_copy(update={"evaluation_criteria": changed})
    case = next(c for c in suite.cases if c.id == TASK)
    return Tau2RewardScorer(suite), case


def test_the_judges_answers_enter_the_reward_when_its_basis_names_them(
    oracle_trace: Any, tmp_path: Path
) -> None:
    for met, reward in (((True, True), 1.0), ((True, False), 0.0)):
        judge = Judge(answers(*met))
        with ProtocolServer(judge) as server:
            scorer, case = scorer_for(server.url, tmp_path / f"cache-{reward}")
            verdict = asyncio.run(scorer.ascore(case, oracle_trace))
        assert verdict.details["reward"] == reward and verdict.passed == (reward == 1.0)
        assert verdict.details["reward_breakdown"]["NL_ASSERTION"] == reward
        assert verdict.details["nl_assertions"] == list(met)
        pair = verdict.details["judge_pair"]
        assert pair["judge_passed"] == all(met) and pair["strict_passed"] is True  # the database is right
        prompt = judge.bodies[0]["messages"][1]["content"]
        assert "1. The agent created the task for the user." in prompt and "agent:" in prompt


def test_offline_rescoring_uses_the_cached_answers_and_refuses_without_them(
    oracle_trace: Any, tmp_path: Path
) -> None:
    judge = Judge(answers(True, False))
    with ProtocolServer(judge) as server:
        scorer, case = scorer_for(server.url, tmp_path / "cache")
        asked = asyncio.run(scorer.ascore(case, oracle_trace))
        offline = scorer.score(case, oracle_trace)  # the same process's judge: its cache
    assert len(judge.bodies) == 1 and offline.details["reward"] == asked.details["reward"] == 0.0
    with ProtocolServer(Judge(answers(True, True))) as other:
        fresh, case = scorer_for(other.url)  # another judge, nothing cached
        with pytest.raises(NLJudgeUnanswered, match="not judged \\(offline"):
            fresh.score(case, oracle_trace)


def test_an_unreadable_answer_the_reward_needs_is_the_judges_fault(oracle_trace: Any) -> None:
    for reply in ("all fine", answers(True), {"assertions": [{"met": "yes"}, {"met": True}]}):
        with ProtocolServer(Judge(reply)) as server:
            scorer, case = scorer_for(server.url)
            with pytest.raises(NLJudgeUnanswered, match="unparsable reply") as raised:
                asyncio.run(scorer.ascore(case, oracle_trace))
        assert isinstance(raised.value, ProviderError)  # the engine makes it an error record


def test_without_a_judge_the_task_is_refused_in_one_line_naming_the_option(oracle_trace: Any) -> None:
    scorer, case = scorer_for(None)
    with pytest.raises(SuiteError, match="declare a judge with --option nl_judge=PROVIDER:MODEL"):
        scorer.score(case, oracle_trace)


def test_assertions_outside_the_basis_are_recorded_beside_the_reward(oracle_trace: Any) -> None:
    with ProtocolServer(Judge(answers(False, True))) as server:
        scorer, case = scorer_for(server.url, in_basis=False)
        verdict = asyncio.run(scorer.ascore(case, oracle_trace))
        broken = Judge("no JSON here")
    assert verdict.passed and "NL_ASSERTION" not in verdict.details["reward_breakdown"]
    assert verdict.details["nl_assertions"] == [False, True]
    assert verdict.details["judge_pair"]["judge_passed"] is False  # a disagreement audit-judge shows
    with ProtocolServer(broken) as server:
        scorer, case = scorer_for(server.url, in_basis=False)
        unread = asyncio.run(scorer.ascore(case, oracle_trace))
    assert unread.passed and unread.details["nl_judge"]["status"] == "unparsable reply"
    assert unread.details["judge_pair"]["judge_passed"] is None


def test_an_empty_judge_option_is_one_line() -> None:
    from callbench.errors import ConfigError

    with pytest.raises(ConfigError, match="--option nl_judge= needs a model"):
        load_suite("tau2:mock", nl_judge="")


def test_answers_and_question() -> None:
    assert nl_verdicts(answers(True, False), 2) == [True, False]
    assert nl_verdicts(answers(True), 2) is None and nl_verdicts(None, 1) is None
    assert nl_verdicts({"assertions": [{"met": 1}]}, 1) is None
    text = nl_question([{"role": "user", "content": "Hi"}, {"role": "tool", "content": "x"}], ["A", "B"])
    assert text.splitlines() == ["Conversation:", "customer: Hi", "", "Assertions:", "1. A", "2. B"]
