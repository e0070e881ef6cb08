"""The case time limit charges the model only for its own time (docs/providers.md, "Case time limit").

Time spent waiting on the endpoint (a request in flight, retry backoff, the rate limiter) never
makes a model failure: a case whose limit runs out while the harness waits on the endpoint is an
error record ``CaseTimeout`` that ``--resume`` re-runs. Time spent in tools or in a built-in agent
is the model's: running out there stays a scored ``timeout``. Every test runs against the local
protocol server (127.0.0.1) with per-case limits of a second or two.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from protocol_server import Api, Fault, ProtocolServer, Turn

import callbench
from callbench.catalog import catalog
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.harness.runfolder import read_header
from callbench.types.records import CaseRecord

ECHO = {
    "name": "echo",
    "description": "Echo a text back.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")


class SlowSession(ExecutorSession):
    """Answers ``echo`` after ``tool_delay_s`` seconds of (awaited) work: a slow tool."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        await asyncio.sleep(self.delay_s)
        return ToolOutcome(ok=True, result={"echo": arguments.get("text")})


class SlowExecutor(Executor):
    name = "slow-echo"

    def start(self, case: Any, workdir: Path, suite: Any) -> ExecutorSession:
        return SlowSession(float(case.executor_config.get("tool_delay_s", 0.0)))


@pytest.fixture(autouse=True)
def _slow_executor() -> None:
    catalog().executors.register("slow-echo", SlowExecutor, replace=True)


def write_suite(root: Path, cases: list[dict[str, Any]]) -> Path:
    """A folder suite of ``echo`` cases run by the slow-tool executor."""
    folder = root / "clock-suite"
    (folder / "tools").mkdir(parents=True)
    (folder / "suite.yaml").write_text("name: clock\nexecutor: slow-echo\n")
    (folder / "tools" / "echo.json").write_text(json.dumps(ECHO))
    with (folder / "cases.jsonl").open("w") as handle:
        for case in cases:
            row = {
                "category": "echo",
                "instruction": f"Echo hi for case {case['id']}.",
                "expected": [{"tool": "echo", "arguments": {"text": "hi"}}],
                **case,
            }
            handle.write(json.dumps(row) + "\n")
    return folder


def echo_responder(api: Api, body: dict[str, Any]) -> Turn:
    """Call ``echo`` once, then answer ``done`` (a correct model)."""
    last = (body.get("messages") or [{}])[-1]
    return Turn(text="done") if last.get("role") == "tool" else Turn(calls=[("echo", '{"text": "hi"}')])


def case_of(body: dict[str, Any]) -> str:
    """The case id a request belongs to (read from its user message)."""
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            return str(message["content"]).rsplit(" ", 1)[-1].rstrip(".")
    return ""


def run(suite: Path, model: str, out: Path, **options: Any) -> Any:
    options.setdefault("cache", False)
    options.setdefault("progress", "quiet")
    return callbench.run(str(suite), model, out_dir=out, **options)


def by_id(records: list[CaseRecord]) -> dict[str, CaseRecord]:
    return {r.case_id: r for r in records}


def test_stalled_request_is_an_error_record_and_resume_reruns_it(tmp_path: Path) -> None:
    """The reported bug: the limit fired mid-request and the case was scored as the model's failure."""
    suite = write_suite(tmp_path, [{"id": f"c{i}", "timeout_s": 1.5} for i in range(4)])
    stalling = {"on": True}

    def rule(api: Api, body: dict[str, Any]) -> Fault | None:
        return Fault("slow", delay_s=3.5) if stalling["on"] and case_of(body) == "c1" else None

    out = tmp_path / "run"
    with ProtocolServer(responder=echo_responder) as server:
        server.fault_rule = rule
        model = f"openai:echo@{server.url}"
        # A request timeout above the case limit: the case limit is what cuts the stalled request.
        first = run(suite, model, out, request_timeout_s=10.0, concurrency=4)
        stalled = by_id(first.records)["c1"]
        assert stalled.status == "error" and stalled.error is not None
        assert stalled.error.type == "CaseTimeout"
        assert "waiting on the endpoint" in stalled.error.message and "request" in stalled.error.message
        assert first.summary["n_error"] == 1 and first.summary["errors_by_type"] == {"CaseTimeout": 1}
        tier = first.summary["tiers"][TIERS[0]]
        assert tier["n"] == 3 and tier["accuracy"] == 1.0 and tier["n_error_excluded"] == 1

        stalling["on"] = False
        before = len(server.requests)
        second = run(suite, model, out, resume=True, request_timeout_s=10.0)
        rerun = {case_of(body) for _, body, _ in server.requests[before:]}
    assert rerun == {"c1"}
    assert second.summary["n_error"] == 0 and second.summary["n_completed"] == 4
    assert second.summary["tiers"][TIERS[0]]["accuracy"] == 1.0


def test_limit_in_retry_backoff_is_an_error_record(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [{"id": "c0", "timeout_s": 1.0}])
    with ProtocolServer(responder=echo_responder) as server:
        server.inject(Fault("503", retry_after=5))  # the backoff outlasts the case limit
        result = run(suite, f"openai:echo@{server.url}", tmp_path / "run")
    record = result.records[0]
    assert record.status == "error" and record.error is not None and record.error.type == "CaseTimeout"
    assert "retry backoff" in record.error.message


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (Fault("503", message="upstream overloaded"), "HTTP 503: upstream overloaded"),
        (Fault("html"), "an HTML page, not JSON"),
        (Fault("not_json"), "truncated or invalid JSON body"),
        (Fault("drop"), "connection"),
    ],
    ids=["503", "html", "not_json", "drop"],
)
def test_a_limit_that_cuts_the_retries_names_the_last_failed_attempt(
    tmp_path: Path, fault: Fault, cause: str
) -> None:
    """Issue 33, item 9: the message said only "(retry backoff)", never why the attempts failed."""
    suite = write_suite(tmp_path, [{"id": "c0", "timeout_s": 1.5}])
    with ProtocolServer(responder=echo_responder) as server:
        server.fault_rule = lambda api, body: fault  # every attempt fails the same way
        result = run(suite, f"openai:echo@{server.url}", tmp_path / "run")
        sent = len(server.requests)
    record = result.records[0]
    assert record.status == "error" and record.error is not None and record.error.type == "CaseTimeout"
    message = record.error.message
    assert "ran out while waiting on the endpoint" in message
    counted = re.search(r"after (\d+) failed attempts?, the last: ", message)
    assert counted is not None and 1 <= int(counted.group(1)) <= sent, message
    assert cause in message[counted.end() :], message
    assert "\n" not in message


def test_limit_while_queued_at_the_rate_limiter_is_an_error_record(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [{"id": "c0", "timeout_s": 1.0}])
    with ProtocolServer(responder=echo_responder) as server:
        # rpm=1: the first request takes the minute's only slot; round 2 queues for ~60 s.
        result = run(suite, f"openai:echo@{server.url}", tmp_path / "run", rpm=1)
        assert len(server.requests) == 1
    record = result.records[0]
    assert record.status == "error" and record.error is not None and record.error.type == "CaseTimeout"
    assert "rate limit" in record.error.message


def test_endpoint_time_does_not_eat_the_tool_budget(tmp_path: Path) -> None:
    """1.5 s stalled request + 2 s tool > 3 s limit, but only the tool's 2 s are the model's."""
    suite = write_suite(
        tmp_path, [{"id": "c0", "timeout_s": 3.0, "max_rounds": 1, "executor_config": {"tool_delay_s": 2.0}}]
    )
    with ProtocolServer(responder=echo_responder) as server:
        server.inject(Fault("slow", delay_s=1.5))
        result = run(suite, f"openai:echo@{server.url}", tmp_path / "run")
    record = result.records[0]
    assert record.status == "completed" and record.trace.stop_reason == "max_rounds"
    assert [c.execution for c in record.trace.calls] == ["ok"]
    assert record.verdicts[TIERS[0]].passed


def test_no_request_is_sent_after_the_limit(tmp_path: Path) -> None:
    """The limit ran out (in wall time) during a tool; the next request is not sent: error record."""
    suite = write_suite(tmp_path, [{"id": "c0", "timeout_s": 3.0, "executor_config": {"tool_delay_s": 2.25}}])
    with ProtocolServer(responder=echo_responder) as server:
        server.inject(Fault("slow", delay_s=1.5))  # wall 3.75 s after the tool; model time 2.25 s
        result = run(suite, f"openai:echo@{server.url}", tmp_path / "run")
        assert len(server.requests) == 1
    record = result.records[0]
    assert record.status == "error" and record.error is not None and record.error.type == "CaseTimeout"
    assert [c.execution for c in record.trace.calls] == ["ok"]


def test_slow_tool_is_a_scored_timeout_with_a_remote_model(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [{"id": "c0", "timeout_s": 1.0, "executor_config": {"tool_delay_s": 3.0}}])
    with ProtocolServer(responder=echo_responder) as server:
        result = run(suite, f"openai:echo@{server.url}", tmp_path / "run")
    record = result.records[0]
    assert record.status == "completed" and record.trace.stop_reason == "timeout"
    assert result.summary["n_error"] == 0


def test_slow_tool_is_a_scored_timeout_with_a_built_in_agent(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [{"id": "c0", "timeout_s": 0.5, "executor_config": {"tool_delay_s": 3.0}}])
    result = run(suite, "oracle", tmp_path / "run")
    record = result.records[0]
    assert record.status == "completed" and record.trace.stop_reason == "timeout"
    assert result.summary["n_error"] == 0


def test_request_timeout_has_its_own_default_below_the_case_limit(tmp_path: Path) -> None:
    from callbench.harness.config import RunConfig
    from callbench.providers.model import Model, ModelOptions, build_model
    from callbench.types.case import Case

    case_limit = Case.model_fields["timeout_s"].default
    config = RunConfig()
    assert config.request_timeout_s is not None and config.request_timeout_s <= case_limit / 2
    assert ModelOptions().request_timeout_s == config.request_timeout_s
    model: Model = build_model("openai:x@http://127.0.0.1:9/v1", config)
    assert model.options.request_timeout_s == config.request_timeout_s
    result = callbench.run("starter", "oracle", out_dir=tmp_path / "run", progress="quiet", limit=1)
    assert read_header(result.run_dir).options["request_timeout_s"] == config.request_timeout_s


def test_cli_records_the_request_timeout_default(tmp_path: Path) -> None:
    from callbench.cli.main import main

    out = tmp_path / "run"
    assert (
        main(
            ["run", "-s", "starter", "-m", "oracle", "--limit", "1", "--out", str(out), "--progress", "quiet"]
        )
        == 0
    )
    header = read_header(out)
    assert header.options["request_timeout_s"] == header.settings["timeout_s"] < 120


def test_bad_request_timeout_is_one_line(tmp_path: Path) -> None:
    from callbench.errors import ConfigError

    with pytest.raises(ConfigError, match="request_timeout_s"):
        callbench.run(
            "starter", "openai:x@http://127.0.0.1:9/v1", out_dir=tmp_path / "r", request_timeout_s=0
        )


def test_records_carry_the_round_budget_each_case_ran_with(tmp_path: Path) -> None:
    """Item 16: cases that set ``max_rounds`` (DAG: 2*n_core+2, ComplexFuncBench, BFCL) recorded 10."""
    dag = callbench.run("dag:n_core=3;seeds=1", "oracle", out_dir=tmp_path / "dag", progress="quiet")
    assert {r.harness_assistance["round_budget"] for r in dag.records} == {2 * 3 + 2}
    suite = write_suite(tmp_path, [{"id": "c0", "max_rounds": 3}, {"id": "c1"}])
    own = callbench.run(str(suite), "oracle", out_dir=tmp_path / "own", progress="quiet")
    assert {r.case_id: r.harness_assistance["round_budget"] for r in own.records} == {"c0": 3, "c1": 10}
    for result in (dag, own):
        assert (
            read_header(result.run_dir).harness_assistance["round_budget"] == 10
        )  # run.json: the mode's rule

    starter = callbench.run(
        "starter", "oracle", out_dir=tmp_path / "s", progress="quiet", harness_mode="oracle-assisted", limit=3
    )
    for record in starter.records:
        assert record.harness_assistance["round_budget"] == len(record.expected_tools) + 4
    assert read_header(starter.run_dir).harness_assistance["round_budget"] == "expected_steps + 4"


def test_a_request_shared_with_other_cases_never_touches_a_finished_case() -> None:
    """A request started in one case's context may outlive it (a shared judge request in its own
    task, awaited by several cases): it must not move, or crash on, the first case's finished clock."""
    from callbench.harness.clock import CaseClock
    from callbench.providers.model import endpoint_waits

    async def shared_request() -> str:
        waits = endpoint_waits.get()  # inherited from the case that started the task
        assert waits is not None
        waits.begin()
        try:
            await asyncio.sleep(0.3)
        finally:
            waits.end()
        return "answer"

    async def scenario() -> str:
        clock = CaseClock(0.1)
        token = endpoint_waits.set(clock)
        try:
            shared = asyncio.ensure_future(shared_request())
            await clock.run(asyncio.sleep(0.01))
        finally:
            endpoint_waits.reset(token)
        assert not clock.expired() and clock.waited_s == 0.0
        return await shared  # ends after the case and after its limit

    assert asyncio.run(scenario()) == "answer"


def test_awaiting_a_shared_request_is_endpoint_time() -> None:
    """A case awaiting a request that runs in another task (``endpoint_time``) is waiting on the
    endpoint: a limit that runs out there is a CaseTimeout, not the model's timeout."""
    from callbench.harness.clock import CaseClock
    from callbench.providers.model import endpoint_time, endpoint_waits

    async def scenario(wrap: bool) -> str:
        clock = CaseClock(0.2)
        token = endpoint_waits.set(clock)
        try:
            shared = asyncio.ensure_future(asyncio.sleep(1.0))
            pending = asyncio.shield(shared)
            await clock.run(endpoint_time(pending) if wrap else pending)
        except TimeoutError:
            pass
        finally:
            endpoint_waits.reset(token)
            shared.cancel()
        assert clock.expired()
        return clock.charged_to

    assert asyncio.run(scenario(True)) == "endpoint"
    assert asyncio.run(scenario(False)) == "model"
