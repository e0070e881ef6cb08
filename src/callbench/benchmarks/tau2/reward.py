"""Scorer ``tau2-reward``: τ²'s own reward of a conversation, and the simulator audit.

The reward follows τ²-bench 26.3's evaluation of type ``all`` (written here from its documented
rules; checked against the package's own evaluator on the same trajectories in the tests):

* a simulation that did not end by the user's or the agent's stop signal scores 0;
* a task without evaluation criteria scores 1;
* **DB**: a fresh environment in the task's initial state replays every call of the trajectory, the
  agent's and the user's, in order (``Environment.get_response``); another applies the gold actions
  (``make_tool_call``, a failing gold action ignored); the agent's and the user's database hashes must
  both match;
* **ENV_ASSERTION**: each of the task's assertions holds on the replayed environment;
* **ACTION**: each gold action matches some call of the trajectory (the same name, and equal values of
  its ``compare_args``, or of all the call's arguments when it names none);
* **COMMUNICATE**: each piece of information appears, case-insensitively, in some message of the
  agent's with commas removed;
* the reward is the product of the components the task's ``reward_basis`` names. Natural-language
  assertions need a judge; a task whose basis names them is refused with one line.

A failed conversation is then audited for simulator faults (:mod:`callbench.benchmarks.tau2.audit`,
then, for a simulated user, the declared audit judge of :mod:`callbench.benchmarks.tau2.judge`): one
found makes the verdict not applicable with the reason ``simulator_error`` (out of the agent's rates,
counted apart), never the agent's failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from callbench.benchmarks.tau2 import trajectory as tj
from callbench.benchmarks.tau2.audit import SimulatorFault, simulator_faults
from callbench.benchmarks.tau2.data import environments, final_state
from callbench.benchmarks.tau2.judge import (
    AuditJudge,
    Finding,
    JsonJudge,
    NLJudge,
    finding_of,
    nl_question,
    nl_verdicts,
    shared_judge,
)
from callbench.benchmarks.tau2.judge import question as judge_question
from callbench.plugin import (
    Aggregate,
    Case,
    CaseRecord,
    ProviderError,
    Reason,
    Scorer,
    Suite,
    SuiteError,
    Trace,
    Verdict,
)

NAME = "tau2-reward"
FINISHED = ("user_stop", "agent_stop")
SIMULATOR_ERROR = "simulator_error"


def communicated(info: str, texts: list[str]) -> bool:
    """τ²'s communicate check of one piece of information against the agent's messages."""
    needle = info.lower()
    return any(needle in text.lower().replace(",", "") for text in texts)


def replayed_environment(domain: str, task: Any, calls: list[dict[str, Any]]) -> Any:
    """The task's environment after every call of the trajectory (its history's too), in order."""
    from tau2.data_model.message import ToolCall as Tau2ToolCall  # installed separately

    env = environments(domain).for_task(task, history=False)
    for call in calls:
        env.get_response(Tau2ToolCall(**call))
    return env


def gold_run(domain: str, task: Any) -> tuple[Any, list[str]]:
    """The task's environment after its gold actions, and the ids of the gold actions that fail there
    (a failing gold action is skipped, as in τ²: some gold paths look up what does not exist)."""
    env = environments(domain).for_task(task)
    failed = []
    actions = task.evaluation_criteria.actions if task.evaluation_criteria else None
    for action in actions or []:
        try:
            env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
        except Exception:  # noqa: BLE001 - τ² logs and skips a gold action that fails
            failed.append(str(action.action_id))
    return env, failed


def gold_environment(domain: str, task: Any) -> Any:
    """The task's environment after its gold actions (a failing gold action is skipped, as in τ²)."""
    return gold_run(domain, task)[0]


_GOLD_HASHES: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}


def gold_hashes(domain: str, task: Any) -> tuple[str | None, str | None]:
    """The gold state's agent and user database hashes (computed once per task and process)."""
    key = (domain, str(task.id), task.model_dump_json())
    if key not in _GOLD_HASHES:
        gold = gold_environment(domain, task)
        _GOLD_HASHES[key] = (gold.get_db_hash(), gold.get_user_db_hash())
    return _GOLD_HASHES[key]


def end_state(domain: str, task: Any, calls: list[dict[str, Any]], recorded: Any) -> dict[str, Any]:
    """The environment's end state: as the executor recorded it (``final_state["tau2"]``), else by
    replaying the trajectory's calls (a trajectory imported from τ²'s results)."""
    if isinstance(recorded, dict) and {"db_hash", "user_db_hash", "env_assertions"} <= set(recorded):
        return recorded
    return final_state(replayed_environment(domain, task, calls), task)


def reward(
    domain: str,
    task: Any,
    trajectory: list[dict[str, Any]],
    termination: str,
    recorded: Any = None,
    *,
    nl_met: list[bool] | None = None,
) -> dict[str, Any]:
    """τ²'s reward of one trajectory and its components (``reward``, ``reward_breakdown``, checks).
    ``recorded``: the end state the executor kept, when the trajectory ran on callbench; ``nl_met``:
    the NL-assertion judge's answers, which a task whose basis names ``NL_ASSERTION`` needs."""
    out: dict[str, Any] = {
        "reward": 0.0,
        "reward_breakdown": {},
        "db_match": None,
        "env_assertions": [],
        "action_checks": [],
        "communicate_checks": [],
        "termination": termination,
    }
    if termination not in FINISHED:
        out["note"] = f"simulation ended prematurely ({termination})"
        return out
    criteria = task.evaluation_criteria
    if criteria is None:
        return {**out, "reward": 1.0, "note": "no evaluation criteria"}
    basis = {b.value for b in criteria.reward_basis}
    if "NL_ASSERTION" in basis and nl_met is None:
        raise SuiteError(
            f"τ² task {task.id!r}: its reward needs its natural-language assertions judged: declare a "
            "judge with --option nl_judge=PROVIDER:MODEL"
        )
    calls = tj.tool_calls_in_order(trajectory)
    total, breakdown = 1.0, {}
    nothing_to_check = criteria.actions is None and criteria.env_assertions is None
    if nothing_to_check:  # τ² scores 1 and names no DB or assertion component
        out["db_match"] = True
        env_reward, assertions = 1.0, []
        db_reward = 1.0
    else:
        state = end_state(domain, task, calls, recorded)
        matched = gold_hashes(domain, task) == (state["db_hash"], state["user_db_hash"])
        out["db_match"] = matched
        db_reward = 1.0 if matched else 0.0
        assertions = list(state["env_assertions"])
        env_reward = 1.0 if all(assertions) else 0.0
    out["env_assertions"] = assertions
    if "DB" in basis and not nothing_to_check:
        breakdown["DB"] = db_reward
        total *= db_reward
    if "ENV_ASSERTION" in basis and not nothing_to_check:
        breakdown["ENV_ASSERTION"] = env_reward
        total *= env_reward
    checks = [any(tj.action_matches(a, c) for c in calls) for a in criteria.actions or []]
    out["action_checks"] = checks
    if "ACTION" in basis:
        breakdown["ACTION"] = 1.0 if all(checks) else 0.0
        total *= breakdown["ACTION"]
    texts = tj.assistant_texts(trajectory)
    told = [communicated(info, texts) for info in criteria.communicate_info or []]
    out["communicate_checks"] = told
    if "COMMUNICATE" in basis:
        breakdown["COMMUNICATE"] = 1.0 if all(told) else 0.0
        total *= breakdown["COMMUNICATE"]
    if "NL_ASSERTION" in basis and nl_met is not None:
        breakdown["NL_ASSERTION"] = 1.0 if all(nl_met) else 0.0
        total *= breakdown["NL_ASSERTION"]
    out["reward"] = total
    out["reward_breakdown"] = breakdown
    return out


NOT_ASKED = object()
"""What offline scoring gets from a judge whose answer is not cached (it never asks)."""
Answer = Callable[[JsonJudge, str], Awaitable[Any]]


@dataclass(frozen=True)
class NLAnswers:
    """The NL-assertion judge's answers for one conversation (``met`` ``None``: none usable)."""

    met: list[bool] | None
    status: str


class Tau2RewardScorer(Scorer):
    """τ²'s reward per conversation (pass = reward 1), natural-language assertions judged by the
    declared NL judge (``--option nl_judge=...``), with the simulator audit: the rules, then the
    declared audit judge (``--option audit_judge=...``) where they found nothing."""

    name = NAME

    def __init__(self, suite: Suite) -> None:
        self.tasks: dict[str, Any] = dict(suite.metadata.get("tau2_tasks") or {})
        self.domain = str(suite.metadata.get("domain") or "")
        meta = suite.metadata
        self.judge: AuditJudge | None = (
            shared_judge(str(meta["audit_judge"]), meta.get("audit_judge_cache"))
            if meta.get("audit_judge")
            else None
        )
        self.nl_judge: NLJudge | None = (
            shared_judge(str(meta["nl_judge"]), meta.get("nl_judge_cache"), NLJudge)
            if meta.get("nl_judge")
            else None
        )

    def score(self, case: Case, trace: Trace) -> Verdict:
        """The verdict, with the judges' cached answers where they are needed (no request)."""
        return _run_now(self._score(case, trace, _cached))

    async def ascore(self, case: Case, trace: Trace) -> Verdict:
        """The verdict, asking the judges where they are needed and their answer is not cached."""
        return await self._score(case, trace, _asked)

    async def _score(self, case: Case, trace: Trace, answer: Answer) -> Verdict:
        task = self.tasks.get(str(case.executor_config.get("task_id", case.id)))
        if task is None:
            return Verdict(scorer=NAME, passed=False, applicable=False, rationale="not a τ² task")
        trajectory = tj.messages(case, trace)
        termination = tj.termination_reason(trace)
        nl = await self._nl_answers(task, trajectory, termination, answer)
        recorded = (trace.final_state or {}).get("tau2")
        result = reward(self.domain, task, trajectory, termination, recorded, nl_met=nl.met if nl else None)
        verdict = _verdict_of(result)
        if nl is not None:
            verdict = _with_nl(verdict, nl, self.nl_judge)
        if verdict.passed:
            return verdict
        verdict = _charged_to_user(verdict, simulator_faults(case, task, trajectory, trace, result))
        if not self._needs_judge(verdict, trace):
            return verdict
        assert self.judge is not None
        reply = await answer(self.judge, judge_question(case, trajectory))
        if reply is NOT_ASKED:
            return _with_judge_note(
                verdict, {"judge_model": self.judge.label, "status": "not asked (offline)"}
            )
        return _judged(verdict, finding_of(reply), self.judge)

    async def _nl_answers(
        self, task: Any, trajectory: list[dict[str, Any]], termination: str, answer: Answer
    ) -> NLAnswers | None:
        """The NL judge's answers on a finished conversation of a task with assertions (``None``: no
        judge, no assertions, or a conversation τ² scores 0 anyway). A task whose reward needs them
        and gets none: the judge's fault, raised (an error record), never the agent's failure."""
        criteria = task.evaluation_criteria
        assertions = [str(a) for a in (criteria.nl_assertions or [])] if criteria is not None else []
        if not assertions or self.nl_judge is None or termination not in FINISHED:
            return None
        reply = await answer(self.nl_judge, nl_question(trajectory, assertions))
        if reply is NOT_ASKED:
            found = NLAnswers(None, "not judged (offline: no cached answer)")
        else:
            met = nl_verdicts(reply, len(assertions))
            found = NLAnswers(met, "judged" if met is not None else "unparsable reply")
        if found.met is None and "NL_ASSERTION" in {b.value for b in criteria.reward_basis}:
            raise NLJudgeUnanswered(
                f"τ² task {task.id!r}: the NL-assertion judge gave no answer: {found.status}"
            )
        return found

    def _needs_judge(self, verdict: Verdict, trace: Trace) -> bool:
        """A failed conversation of a simulated user that no rule charged to the user, with a judge."""
        simulated = any(turn.model for turn in trace.user_turns or [])
        return self.judge is not None and simulated and not verdict.passed and verdict.applicable

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate | None:
        from callbench.benchmarks.tau2.figures import reward_figures

        return reward_figures(records)


class NLJudgeUnanswered(ProviderError):
    """The NL-assertion judge's answer a task's reward needs is missing or unreadable: the record is an
    error record (the judge's fault), re-run by ``--resume``."""


async def _cached(judge: JsonJudge, text: str) -> Any:
    """Offline scoring's answer: the cached reply, or :data:`NOT_ASKED` (it never suspends)."""
    reply = judge.lookup(text)
    return NOT_ASKED if reply is None else reply


async def _asked(judge: JsonJudge, text: str) -> Any:
    return await judge.ask(text)


def _run_now(pending: Coroutine[Any, Any, Verdict]) -> Verdict:
    """The result of a coroutine that never suspends (scoring with cached answers only)."""
    try:
        pending.send(None)
    except StopIteration as done:
        return done.value
    pending.close()
    raise RuntimeError("offline τ² scoring waited on a judge")


def _verdict_of(result: dict[str, Any]) -> Verdict:
    """The reward verdict of one conversation's reward components."""
    passed = result["reward"] == 1.0
    return Verdict(
        scorer=NAME,
        passed=passed,
        partial=result["reward"],
        reasons=[] if passed else _reasons(result),
        rationale=f"reward {result['reward']:g}" + (f" ({result['note']})" if "note" in result else ""),
        details=result,
        metrics={"reward": result["reward"]},
    )


def _with_nl(verdict: Verdict, nl: NLAnswers, judge: NLJudge | None) -> Verdict:
    """The NL judge's answers in the details, and beside the deterministic components as a judge pair
    (``callbench audit-judge``): does the judge's "every assertion holds" agree with the reward's
    other components (database, assertions, actions, communicated information)?"""
    label = judge.label if judge is not None else ""
    others = [v for k, v in verdict.details.get("reward_breakdown", {}).items() if k != "NL_ASSERTION"]
    pair = {
        "source": "τ² NL assertions",
        "judge": label,
        "judge_passed": None if nl.met is None else all(nl.met),
        "status": nl.status,
        "strict": "τ² reward without NL assertions",
        "strict_passed": all(v == 1.0 for v in others),
    }
    note = {"judge_model": label, "prompt_hash": judge.prompt_hash if judge else "", "status": nl.status}
    details = {**verdict.details, "nl_assertions": nl.met or [], "nl_judge": note, "judge_pair": pair}
    return verdict.model_copy(update={"details": details})


def _charged_to_user(verdict: Verdict, faults: Sequence[SimulatorFault]) -> Verdict:
    """A failed verdict with simulator faults: not applicable (out of the agent's rates), the faults
    first among its reasons as ``simulator_error``; unchanged without faults."""
    if not faults:
        return verdict
    return verdict.model_copy(
        update={
            "applicable": False,
            "reasons": [Reason(code=SIMULATOR_ERROR, message=f"{f.rule}: {f.message}") for f in faults]
            + verdict.reasons,
            "rationale": f"simulator fault ({faults[0].rule}): {verdict.rationale}",
            "details": {
                **verdict.details,
                "simulator_faults": [
                    *verdict.details.get("simulator_faults", []),
                    *(f.as_dict() for f in faults),
                ],
            },
        }
    )


def _with_judge_note(verdict: Verdict, note: dict[str, Any]) -> Verdict:
    """The judge's note in the details, and its outcome as a metric (``audit_judge``: 1 found faults,
    0 found none, -1 unparsable reply, -2 not asked offline), which summaries of slimmed records keep."""
    if "parsed" not in note:
        outcome = -2.0
    else:
        outcome = -1.0 if not note["parsed"] else float(bool(note["faults"]))
    return verdict.model_copy(
        update={
            "details": {**verdict.details, "audit_judge": note},
            "metrics": {**verdict.metrics, "audit_judge": outcome},
        }
    )


def _judged(verdict: Verdict, finding: Finding, judge: AuditJudge) -> Verdict:
    """The verdict with the audit judge's finding recorded and its faults charged to the user."""
    return _charged_to_user(_with_judge_note(verdict, finding.as_dict(judge)), finding.faults)


def _reasons(result: dict[str, Any]) -> list[Reason]:
    if "note" in result and result["reward"] == 0.0 and result["db_match"] is None:
        return [Reason(code="premature_termination", message=result["note"])]
    out = []
    if result["db_match"] is False and "DB" in result["reward_breakdown"]:
        out.append(Reason(code="db_mismatch", message="the database differs from the gold actions' database"))
    if result["reward_breakdown"].get("ENV_ASSERTION") == 0.0:
        out.append(Reason(code="env_assertion_failed", message="an environment assertion does not hold"))
    if result["reward_breakdown"].get("ACTION") == 0.0:
        out.append(Reason(code="action_missing", message="a gold action has no matching call"))
    if result["reward_breakdown"].get("COMMUNICATE") == 0.0:
        out.append(
            Reason(code="info_not_communicated", message="the agent did not tell the user a required fact")
        )
    return out
