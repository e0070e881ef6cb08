"""``callbench doctor`` (issue 25, item 5): each serving fault the doctor server simulates is caught by
exactly the check meant for it, a healthy server passes every check, doctor stays within its request
budget, and an endpoint that fails in every way gives a table, never a crash."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from doctor_server import FAULTS, DoctorServer

import callbench
from callbench.errors import ConfigError, FatalProviderError, TransientProviderError
from callbench.harness.doctor import (
    CHECKS,
    EARLIER_KEY,
    MAX_REQUESTS,
    PREFLIGHT_KEY,
    DoctorOptions,
    DoctorReport,
    long_prompt,
    reported_limit,
    run_doctor,
    stored_preflight,
)
from callbench.harness.runfolder import read_header
from callbench.providers.base import Provider
from callbench.providers.model import make_provider
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

ALL = {check.id for check in CHECKS}
FAST = DoctorOptions(context_probe_tokens=20_000)
"""The server's window is 8,192 tokens: a 20,000-token probe is past it (the default size is tested once)."""


def doctor(server: DoctorServer, query: str = "strict=1", options: DoctorOptions = FAST) -> DoctorReport:
    async def go() -> DoctorReport:
        provider = make_provider(server.model(query=query))
        try:
            return await run_doctor(provider, options=options)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def statuses(report: DoctorReport) -> dict[str, str]:
    return {check.id: check.status for check in report.checks}


def failed(report: DoctorReport) -> set[str]:
    return {check.id for check in report.failed}


def test_a_healthy_server_passes_every_check_within_the_budget() -> None:
    with DoctorServer() as server:
        report = doctor(server, options=DoctorOptions())  # the default 2.2M-token probe, once
    assert statuses(report) == dict.fromkeys(ALL, "passed"), [c.evidence for c in report.checks]
    assert report.passed and report.requests == len(server.requests) <= MAX_REQUESTS
    assert report.context_limit_tokens == 8192
    assert [c.id for c in report.checks] == [c.id for c in CHECKS]  # every check, in order
    assert sum(c.requests for c in report.checks) == report.requests
    # The streamed check did stream, and the probe past the window was refused, not answered.
    assert any(body.get("stream") is True for body in server.requests)
    assert max(body.get("prompt_tokens", 0) for body in server.requests) > 2_000_000


FAULT_CASES: list[tuple[str, str, set[str]]] = [
    ("parallel_as_one", "strict=1", {"parallel_calls"}),
    ("tool_choice_required_ignored", "strict=1", {"tool_choice_required"}),
    ("tool_choice_none_ignored", "strict=1", {"tool_choice_none"}),
    ("strict_ignored", "strict=1", {"strict_schema"}),
    ("bad_json_args", "strict=1", {"arguments_json"}),
    # The parser fails: no call is decoded, so 'one call' fails with it and the checks that need a
    # decoded call are skipped rather than failed a second time.
    ("raw_text_calls", "strict=1", {"one_call", "no_leaked_tokens"}),
    ("special_tokens", "strict=1", {"no_leaked_tokens"}),
    ("reasoning_required", "strict=1", {"reasoning_round_trip"}),  # the preset sends no reasoning back
    ("reasoning_rejected", "strict=1&reasoning_replay=reasoning_content", {"reasoning_round_trip"}),
    ("no_usage", "strict=1", {"usage"}),
    ("broken_stream", "strict=1", {"streaming"}),
    ("stream_drops_calls", "strict=1", {"streaming"}),
    ("content_null_refused", "strict=1&null_content=1", {"tool_result_round_trip"}),
    ("tool_results_refused", "strict=1", {"tool_result_round_trip"}),
    ("context_500", "strict=1", {"context_limit"}),
    ("context_truncated", "strict=1", {"context_limit"}),
    # A model that calls the wrong (offered) tool: the server decoded the call, so nothing fails.
    ("wrong_tool", "strict=1", set()),
]


@pytest.mark.parametrize(("fault", "query", "expected"), FAULT_CASES, ids=[c[0] for c in FAULT_CASES])
def test_each_fault_is_caught_by_exactly_its_check(fault: str, query: str, expected: set[str]) -> None:
    with DoctorServer(fault) as server:
        report = doctor(server, query)
    assert failed(report) == expected, {c.id: c.evidence for c in report.checks}
    assert report.requests == len(server.requests) <= MAX_REQUESTS
    for check in report.checks:
        assert check.evidence.strip(), check  # a result always says why
        if check.id not in expected:
            assert check.status in ("passed", "skipped"), check


def test_every_simulated_fault_has_a_case() -> None:
    assert {fault for fault, _, _ in FAULT_CASES} == set(FAULTS)


def test_raw_text_calls_skip_what_needs_a_decoded_call_and_say_why() -> None:
    with DoctorServer("raw_text_calls") as server:
        report = doctor(server)
    got = statuses(report)
    for name in ("parallel_calls", "tool_choice_required", "tool_choice_none", "strict_schema", "streaming"):
        assert got[name] == "skipped"
    one = next(c for c in report.checks if c.id == "one_call")
    assert "<tool_call>" in one.evidence and "parser failed" in one.evidence
    assert got["tool_result_round_trip"] == "passed"  # a synthetic call: independent of the parser


def test_the_fix_the_evidence_names_makes_the_check_pass() -> None:
    """Faults of the preset, not of the server alone: with the quirk that fixes them they pass."""
    with DoctorServer("reasoning_required") as server:
        report = doctor(server)
        fixed = doctor(server, "strict=1&reasoning_replay=reasoning_content")
    evidence = next(c.evidence for c in report.checks if c.id == "reasoning_round_trip")
    assert "reasoning_content" in evidence and "reasoning_replay" in evidence
    assert fixed.passed, fixed.failed
    with DoctorServer("content_null_refused") as server:
        assert doctor(server).passed  # callbench sends "" beside tool calls by default
        nulls = doctor(server, "strict=1&null_content=1")
    round_trip = next(c for c in nulls.checks if c.id == "tool_result_round_trip")
    assert "valid string" in round_trip.evidence and "null_content" in round_trip.evidence
    assert statuses(nulls)["reasoning_round_trip"] == "skipped"  # fails for the same reason: said once


def test_the_parallel_failure_says_what_it_corrupts() -> None:
    with DoctorServer("parallel_as_one") as server:
        report = doctor(server)
    (check,) = report.failed
    assert check.corrupts.startswith(
        "parallel calls decoded as one: BFCL's parallel categories would score 0"
    )
    assert "1 decoded" in check.evidence


def test_strict_not_sent_is_skipped_with_what_the_call_did() -> None:
    with DoctorServer("strict_ignored") as server:
        report = doctor(server, query="")
    strict = next(c for c in report.checks if c.id == "strict_schema")
    assert strict.status == "skipped" and "?strict=1" in strict.evidence and "breaks it" in strict.evidence
    assert report.passed


def test_a_slow_server_fails_the_latency_check_only() -> None:
    with DoctorServer(latency_s=0.15) as server:
        report = doctor(server, options=DoctorOptions(context_probe_tokens=20_000, case_limit_s=0.4))
    assert failed(report) == {"latency"}
    assert "--case-timeout" in report.failed[0].evidence


def test_a_reasoning_free_model_skips_the_reasoning_check() -> None:
    with DoctorServer(reasoning=False) as server:
        report = doctor(server)
    assert statuses(report)["reasoning_round_trip"] == "skipped" and report.passed


def test_the_budget_is_a_hard_limit() -> None:
    with DoctorServer() as server:
        report = doctor(server, options=DoctorOptions(max_requests=3, context_probe_tokens=20_000))
    assert report.requests == len(server.requests) == 3
    spent = [c for c in report.checks if "budget is spent" in c.evidence]
    assert spent and all(c.status == "skipped" for c in spent)
    with pytest.raises(ConfigError, match="max_requests"):
        DoctorOptions(max_requests=31)
    with pytest.raises(ConfigError, match="--context-probe"):
        DoctorOptions(context_probe_tokens=-1)


def test_context_probe_zero_skips_the_check_and_sends_no_long_prompt() -> None:
    with DoctorServer() as server:
        report = doctor(server, options=DoctorOptions(context_probe_tokens=0))
    assert statuses(report)["context_limit"] == "skipped"
    assert not any("prompt_tokens" in body for body in server.requests)


class Broken(Provider):
    """A provider whose every request fails the way ``error`` says."""

    name = "broken"
    model = "m"

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        self.calls += 1
        raise self.error


def _doctor_of(provider: Provider) -> DoctorReport:
    return asyncio.run(run_doctor(provider, options=FAST))


@pytest.mark.parametrize(
    "error",
    [
        TransientProviderError("broken HTTP 503: overloaded"),
        FatalProviderError("broken HTTP 400: tools are not supported by this model"),
        RuntimeError("a bug in the provider"),
    ],
    ids=["transient", "fatal-400", "internal"],
)
def test_an_endpoint_that_always_fails_gives_a_table_never_a_crash(error: BaseException) -> None:
    provider = Broken(error)
    report = _doctor_of(provider)
    assert len(report.checks) == len(CHECKS) and not report.passed
    one = report.checks[0]
    assert one.status == "failed" and type(error).__name__ in one.evidence
    assert report.requests == provider.calls <= MAX_REQUESTS  # never retried: each attempt is evidence
    assert statuses(report)["parallel_calls"] == "skipped"


def test_a_refused_first_request_is_one_line_not_a_table_of_the_same_error() -> None:
    provider = Broken(FatalProviderError("broken HTTP 404: not found: check the model name 'm'"))
    with pytest.raises(FatalProviderError, match="doctor checked nothing"):
        _doctor_of(provider)
    assert provider.calls == 1


def test_a_built_in_agent_has_no_endpoint_to_check() -> None:
    with pytest.raises(ConfigError, match="doctor checks a model endpoint"):
        asyncio.run(run_doctor(make_provider("baseline"), label="baseline"))


class Scripted(Provider):
    """Answers from a fixed list of turns (one per request)."""

    name = "scripted"
    model = "m"

    def __init__(self, turns: list[ModelTurn]) -> None:
        self.turns = list(turns)

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        return self.turns.pop(0) if self.turns else ModelTurn(text="fine")


def test_merged_parallel_calls_and_bare_json_text_are_named() -> None:
    call = ToolCall(
        id="a", name="get_weather", arguments_raw='{"city": "Paris"}', arguments={"city": "Paris"}
    )
    merged = ToolCall(id="b", name="get_weather", arguments_raw='{"city": "Paris"}{"city": "Tokyo"}')
    bare = ModelTurn(text='{"name": "get_weather", "arguments": {"city": "Paris"}}')
    report = _doctor_of(Scripted([ModelTurn(tool_calls=[call]), ModelTurn(tool_calls=[merged]), bare]))
    parallel = next(c for c in report.checks if c.id == "parallel_calls")
    assert parallel.status == "failed" and "two calls merged" in parallel.evidence
    leaks = next(c for c in report.checks if c.id == "no_leaked_tokens")
    assert leaks.status == "failed" and "bare JSON call object" in leaks.evidence


def test_plain_json_text_that_names_no_tool_is_not_a_leak() -> None:
    call = ToolCall(id="a", name="get_weather", arguments_raw="{}", arguments={})
    report = _doctor_of(Scripted([ModelTurn(tool_calls=[call]), ModelTurn(text='{"answer": 42}')]))
    assert statuses(report)["no_leaked_tokens"] == "passed"


def test_the_limit_is_read_from_the_overflow_message() -> None:
    text = (
        "This model's maximum context length is 8,192 tokens. However, your messages resulted in "
        "2200000 tokens."
    )
    assert reported_limit(text) == 8192
    assert reported_limit("the request exceeds the available context size") is None
    assert 39_000 < len(long_prompt(20_000)) < 41_000


def test_the_report_round_trips_through_json() -> None:
    with DoctorServer("no_usage") as server:
        report = doctor(server)
    again = DoctorReport.from_json(report.to_json())
    assert again.to_json() == report.to_json()
    assert (
        again.verdict_line() == report.verdict_line() and "1 failed (usage reported)" in again.verdict_line()
    )
    assert DoctorReport.from_json({"checks": [{"id": "x", "status": "weird"}]}).checks[0].status == "skipped"


# --- run --preflight ---------------------------------------------------------------------------


class Seen:
    def __init__(self) -> None:
        self.reports: list[DoctorReport] = []
        self.order: list[str] = []

    def on_preflight(self, report: DoctorReport) -> None:
        self.reports.append(report)
        self.order.append("preflight")

    def on_case_start(self, *args: Any) -> None:
        self.order.append("case")


def test_preflight_runs_before_the_first_case_and_is_kept_in_run_json(tmp_path: Path) -> None:
    seen = Seen()
    out = tmp_path / "run"
    with DoctorServer("parallel_as_one") as server:
        callbench.run(
            "starter",
            server.model(),
            out_dir=out,
            case_ids=["weather_paris"],
            cache=False,
            preflight=True,
            observers=[seen],
        )
        first = read_header(out).options[PREFLIGHT_KEY]
        assert seen.order[0] == "preflight" and "case" in seen.order
        assert first["checks"][1]["id"] == "parallel_calls" and first["checks"][1]["status"] == "failed"
        assert first["passed"] is False and first["model"] == server.model()
        # A failed check does not stop the run: the case ran and was scored.
        assert (out / "records.jsonl").read_text().count("\n") == 1
        # The preflight is how a run starts, not what it measures: it is not in the recorded config,
        # so a resume may add (or leave out) --preflight; the earlier table is kept.
        assert "preflight" not in read_header(out).options["config"]
        callbench.run(
            "starter", server.model(), out_dir=out, resume=True, cache=False, preflight=True, progress="quiet"
        )
    header = read_header(out)
    assert header.options[EARLIER_KEY] == [first]
    report = stored_preflight(header.options)
    assert report is not None and report.at and len(report.checks) == len(CHECKS)


def test_preflight_needs_an_endpoint_and_says_so_before_any_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with pytest.raises(ConfigError, match="--preflight checks a model endpoint"):
        callbench.run("starter", "oracle", out_dir=out, preflight=True)
    assert not out.exists()


def test_a_wrong_tool_is_the_models_choice_not_a_serving_fault() -> None:
    with DoctorServer("wrong_tool") as server:
        report = doctor(server)
    one = next(c for c in report.checks if c.id == "one_call")
    assert one.status == "passed" and "get_time" in one.evidence and "model's choice" in one.evidence
