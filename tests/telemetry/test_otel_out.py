"""``--otel``: one trace per case following the GenAI and MCP conventions, sent over OTLP/HTTP, written
as OTLP/JSON lines or handed to the SDK's in-memory exporter; telemetry never fails a run."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otel_fixtures import USAGE, paris_model, refused_url

import callbench
from callbench.errors import ConfigError, MissingExtraError
from callbench.harness.config import Output
from callbench.telemetry.export import UNSENT_FILE, OtelObserver, TelemetryWarning, case_spans
from callbench.telemetry.otlp import decode_json
from callbench.types.manifest import ToolSourceManifest
from callbench.types.records import CaseRecord, ErrorInfo, RunHeader
from callbench.types.trace import AgentRun, RoundInfo, Trace, TraceCall


def by_name(spans: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


def test_each_case_is_one_trace_with_agent_model_and_tool_spans(tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    observer = OtelObserver(None, exporter=memory)
    result = callbench.run(
        "starter",
        paris_model(),
        case_ids=["weather_paris"],
        out_dir=tmp_path / "run",
        cache=False,
        settings={"seed": 7},
        observers=[observer],
    )
    spans = memory.get_finished_spans()
    named = by_name(list(spans))
    assert sorted(named) == ["chat scripted", "execute_tool get_weather", "invoke_agent callbench"]
    (root,) = named["invoke_agent callbench"]
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}  # one trace
    assert root.parent is None
    assert all(s.parent.span_id == root.context.span_id for s in spans if s is not root)
    record = result.records[0]
    a = root.attributes
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "callbench"
    assert a["gen_ai.provider.name"] == "scripted" and a["gen_ai.request.model"] == "scripted"
    assert a["callbench.case.key"] == "starter:weather_paris" and a["callbench.case.trial"] == 1
    assert a["callbench.case.status"] == "completed" and a["callbench.stop_reason"] == "answer"
    assert a["callbench.verdict.task-completion-execution"] is True
    assert a["gen_ai.usage.input_tokens"] == 2 * USAGE.input_tokens
    assert a["gen_ai.usage.reasoning.output_tokens"] == 2 * USAGE.reasoning_tokens
    assert root.start_time == int(record.started_at * 1e9)
    requests = sorted(named["chat scripted"], key=lambda s: s.start_time)
    assert [s.attributes["gen_ai.response.finish_reasons"] for s in requests] == [("tool_calls",), ("stop",)]
    first = requests[0].attributes
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.request.seed"] == 7
    assert first["gen_ai.usage.input_tokens"] == USAGE.input_tokens
    assert first["gen_ai.usage.output_tokens"] == USAGE.output_tokens
    assert first["gen_ai.usage.reasoning.output_tokens"] == USAGE.reasoning_tokens
    assert first["gen_ai.usage.cache_read.input_tokens"] == USAGE.cached_tokens
    assert first["callbench.source"] == "harness"
    (tool,) = named["execute_tool get_weather"]
    t = tool.attributes
    assert t["gen_ai.operation.name"] == "execute_tool" and t["gen_ai.tool.name"] == "get_weather"
    assert t["gen_ai.tool.call.id"] == record.trace.calls[0].call_id
    assert t["callbench.tool.execution"] == "ok" and "error.type" not in t
    assert requests[0].end_time <= tool.start_time <= requests[1].start_time  # ran between the requests
    # content is opt-in: none of it without --otel-content
    assert not any(k.endswith(("messages", "arguments", "result")) for s in spans for k in s.attributes)


def test_content_is_sent_only_when_asked(tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    callbench.run(
        "starter",
        paris_model(),
        case_ids=["weather_paris"],
        out_dir=tmp_path / "run",
        cache=False,
        observers=[OtelObserver(None, exporter=memory, content=True)],
    )
    named = by_name(list(memory.get_finished_spans()))
    tool = named["execute_tool get_weather"][0].attributes
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"city": "Paris", "unit": "celsius"}
    assert json.loads(tool["gen_ai.tool.call.result"])["city"] == "Paris"
    first = min(named["chat scripted"], key=lambda s: s.start_time).attributes
    (message,) = json.loads(first["gen_ai.output.messages"])
    assert message["role"] == "assistant" and message["finish_reason"] == "tool_calls"
    assert message["parts"][0]["type"] == "tool_call" and message["parts"][0]["name"] == "get_weather"
    root = named["invoke_agent callbench"][0].attributes
    assert json.loads(root["gen_ai.input.messages"])[0]["parts"][0]["content"].startswith(
        "What's the weather"
    )
    assert "Paris" in json.loads(root["gen_ai.output.messages"])[0]["parts"][0]["content"]


def test_spans_go_to_an_otlp_http_collector(collector: Any, tmp_path: Path) -> None:
    cases = ["weather_paris", "convert_distance", "email_after_lookup"]
    result = callbench.run(
        "starter", "oracle", case_ids=cases, out_dir=tmp_path / "run", cache=False, otel=collector.url
    )
    assert {r.case_id for r in result.records} == set(cases)
    assert set(collector.paths) == {"/v1/traces"}
    spans = collector.spans()
    roots = [s for s in spans if s.name == "invoke_agent callbench"]
    assert len(roots) == 3 and len({s.trace_id for s in spans}) == 3
    keys = {kv.value.string_value for s in roots for kv in s.attributes if kv.key == "callbench.case.key"}
    assert keys == {f"starter:{c}" for c in cases}
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(tools) == sum(len(r.trace.calls) for r in result.records)
    resource = {
        kv.key: kv.value.string_value for kv in collector.requests[0].resource_spans[0].resource.attributes
    }
    assert resource["service.name"] == "callbench" and resource["callbench.run.id"] == "run"
    assert not (tmp_path / "run" / UNSENT_FILE).exists()


def test_a_collector_that_refuses_connections_is_one_warning_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")  # the exporter's retries, shortened
    cases = ["weather_paris", "convert_distance", "email_after_lookup"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = callbench.run(
            "starter", "oracle", case_ids=cases, out_dir=tmp_path / "run", cache=False, otel=refused_url()
        )
    assert sorted(r.case_id for r in result.records) == sorted(cases)
    assert all(r.status == "completed" for r in result.records)
    said = [str(w.message) for w in caught if issubclass(w.category, TelemetryWarning)]
    assert len(said) == 1, said
    assert "did not take the spans" in said[0] and "the run goes on" in said[0] and UNSENT_FILE in said[0]
    lines = (tmp_path / "run" / UNSENT_FILE).read_text().splitlines()
    kept = [decode_json(json.loads(line)) for line in lines]
    assert len(kept) == 3
    assert {
        s.attributes["callbench.case.key"] for spans in kept for s in spans if s.parent_span_id == ""
    } == {f"starter:{c}" for c in cases}


def test_the_command_line_writes_otlp_json_lines(tmp_path: Path) -> None:
    from callbench.cli.main import main

    out = tmp_path / "spans.jsonl"
    argv = ["run", "-s", "starter", "-m", "oracle", "--case", "weather_paris", "--case", "convert_distance"]
    argv += ["--out", str(tmp_path / "run"), "--progress", "quiet", "--no-cache"]
    assert main([*argv, "--otel", f"file:{out}", "--otel-content"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 2  # one OTLP/JSON export request per case
    first = json.loads(lines[0])
    span = first["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16  # hex, as OTLP/JSON writes ids
    assert isinstance(span["startTimeUnixNano"], str) and isinstance(span["kind"], int)
    spans = [s for line in lines for s in decode_json(json.loads(line))]
    assert any("gen_ai.tool.call.arguments" in s.attributes for s in spans)
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    assert "otel" not in header["options"].get("config", {})  # how a run is watched is not recorded


def test_a_missing_extra_is_one_line_before_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def without_sdk(name: str, *args: Any) -> Any:
        return None if name.startswith("opentelemetry.sdk") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_sdk)
    with pytest.raises(
        MissingExtraError, match=r"--otel needs the module 'opentelemetry.sdk'.*callbench\[otel\]"
    ):
        callbench.run("starter", "oracle", out_dir=tmp_path / "run", otel="file:x.jsonl")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("target", ["ftp://host", "127.0.0.1:4318", "file:", "http://:80"])
def test_a_target_that_is_not_a_url_or_a_file_is_one_line(target: str) -> None:
    with pytest.raises(ConfigError, match="--otel.*OTLP/HTTP collector URL"):
        Output(otel=target)


# --- spans of stored records (no run) ------------------------------------------------------------------


def spans_of(record: CaseRecord, header: RunHeader | None = None, content: bool = False) -> dict[str, Any]:
    memory = InMemorySpanExporter()
    observer = OtelObserver(None, exporter=memory, content=content)
    if header is not None:
        observer.on_run_start(header, 1)
    observer.on_case_end(record)
    return {s.name: s for s in memory.get_finished_spans()}


def record_of(trace: Trace, **fields: Any) -> CaseRecord:
    base = {"key": "s:c", "suite": "s", "case_id": "c", "category": "x", "harness_mode": "production-parity"}
    return CaseRecord(**{**base, "trace": trace, "started_at": 1000.0, "duration_ms": 500.0, **fields})


def test_an_error_record_and_failed_calls_carry_error_type() -> None:
    calls = [
        TraceCall(index=0, call_id="a", round=1, tool="f", execution="error", error="boom"),
        TraceCall(index=1, call_id="b", round=1, tool="nope", known_tool=False, execution="rejected"),
        TraceCall(index=2, call_id="c", round=1, tool="g", parse_error="bad JSON", execution="rejected"),
        TraceCall(index=3, call_id="d", round=1, tool="h", execution="rejected", schema_errors=["x"]),
        TraceCall(index=4, call_id="e", round=1, tool="k", execution="not_executed"),
    ]
    trace = Trace(rounds=[RoundInfo(index=1, started_at=1000.1, latency_ms=50)], calls=calls)
    error = ErrorInfo(type="tool_server_timeout", message="no answer")
    spans = spans_of(record_of(trace, status="error", error=error))
    root = spans["invoke_agent callbench"]
    assert root.attributes["error.type"] == "tool_server_timeout" and root.status.status_code.name == "ERROR"
    kinds = {
        name.split()[-1]: s.attributes.get("error.type")
        for name, s in spans.items()
        if "execute_tool" in name
    }
    assert kinds == {
        "f": "tool_error",
        "nope": "unknown_tool",
        "g": "malformed_arguments",
        "h": "schema_invalid",
        "k": "not_executed",
    }
    assert spans["execute_tool f"].status.status_code.name == "ERROR"


def test_calls_over_mcp_carry_the_mcp_attributes() -> None:
    # an agent under test called callbench's MCP server (one stateless session per case URL)
    agent = AgentRun(
        agent="cmd:python my_agent.py --fast",
        outcome="answer",
        mcp_url="http://127.0.0.1:4567/case/TOKEN123/mcp",
        details={"mcp_protocol_version": "2025-11-25"},
    )
    call = TraceCall(index=0, call_id="mcp_1", round=1, tool="f", execution="ok", started_at=1000.2)
    trace = Trace(
        rounds=[RoundInfo(index=1, started_at=1000.2, reconstructed=True)], calls=[call], agent=agent
    )
    spans = spans_of(record_of(trace, harness_mode="agent-under-test"))
    assert "invoke_agent my_agent.py" in spans and not any(n.startswith("chat ") for n in spans)
    assert spans["invoke_agent my_agent.py"].attributes["callbench.agent.spec"] == agent.agent
    tool = spans["execute_tool f"].attributes
    assert tool["mcp.method.name"] == "tools/call" and tool["mcp.session.id"] == "TOKEN123"
    assert tool["mcp.protocol.version"] == "2025-11-25" and tool["server.port"] == 4567
    # a suite whose tools came from a live MCP server (stdio): the manifest's protocol version
    source = ToolSourceManifest(
        kind="mcp", source="stdio:mcp-server-git", suites=["s"], protocol_version="2025-06-18"
    )
    header = RunHeader(
        run_id="r",
        created_at="",
        callbench_version="",
        python_version="",
        model="m",
        harness_mode="x",
        tool_sources=[source],
    )
    plain = TraceCall(index=0, call_id="c1", round=1, tool="git_log", execution="ok")
    trace = Trace(rounds=[RoundInfo(index=1, started_at=1000.1, latency_ms=5)], calls=[plain])
    tool = spans_of(record_of(trace), header)["execute_tool git_log"].attributes
    assert tool["mcp.method.name"] == "tools/call" and tool["mcp.protocol.version"] == "2025-06-18"
    assert tool["network.transport"] == "pipe" and "mcp.session.id" not in tool


def test_a_cached_round_says_so_and_a_broken_record_is_a_warning() -> None:
    trace = Trace(rounds=[RoundInfo(index=1, started_at=1000.1, cached=True, model="m")])
    spans = spans_of(record_of(trace))
    assert spans["chat m"].attributes["callbench.response.cached"] is True

    class Broken:
        key = "s:broken"

    memory = InMemorySpanExporter()
    observer = OtelObserver(None, exporter=memory)
    with pytest.warns(TelemetryWarning, match="could not build the trace of s:broken"):
        observer.on_case_end(Broken())  # type: ignore[arg-type]
    assert memory.get_finished_spans() == ()


def test_case_spans_use_the_records_timing() -> None:
    rounds = [RoundInfo(index=1, started_at=1000.1, latency_ms=100), RoundInfo(index=2, started_at=1000.4)]
    calls = [
        TraceCall(index=0, call_id="a", round=1, tool="f", execution="ok", duration_ms=50),
        TraceCall(index=1, call_id="b", round=1, tool="g", execution="ok", duration_ms=20),
    ]
    spans = spans_of(record_of(Trace(rounds=rounds, calls=calls)))
    f, g = spans["execute_tool f"], spans["execute_tool g"]
    assert f.start_time == pytest.approx(1000.2e9, abs=1e3) and f.end_time == pytest.approx(
        1000.25e9, abs=1e3
    )
    assert g.start_time == f.end_time  # the round's calls ran one after the other
    assert spans["invoke_agent callbench"].end_time == pytest.approx(1000.5e9, abs=1e3)
    assert callable(case_spans)
