"""``--otel``: one OpenTelemetry trace per case, built from its record when the case ends.

:class:`OtelObserver` is a run observer (:mod:`callbench.harness.observer`): nothing is threaded
through the round loop. When a record is written it becomes a trace (:func:`case_spans`):

* an agent span ``invoke_agent {agent}`` (``callbench``, whose loop drives the model, or the short
  name of the ``--agent``) from the case's start to its end, with the case's key, trial, status, stop
  reason and verdicts, its summed token usage, and ``error.type`` on an error record;
* one span per model request ``{operation} {model}`` (``chat``) from the round's timing: provider,
  request and response model, seed, temperature, max tokens, finish reasons, usage with reasoning and
  cached tokens; a round answered from callbench's response cache says so
  (``callbench.response.cached``); an agent's requests that callbench's model proxy served are
  spans too, rounds reconstructed from call timing are not (there was no request to time);
* one span per tool call ``execute_tool {tool}`` with its call id, callbench's execution status and
  ``error.type`` for a call that failed, was rejected or was not executed; the MCP attributes
  (``mcp.method.name``, ``mcp.protocol.version``, ``mcp.session.id`` where there is one) for a call
  that went over MCP (an agent's calls to callbench's server, a suite's calls to a live MCP server);
* with ``--otel-content`` only, the opt-in content: tool arguments and results, each request's output
  messages, the instruction and the answer on the agent span.

Spans are sent from a thread of their own (OTLP over HTTP, protobuf) or appended to a JSON-lines file
(one OTLP/JSON request per case). Telemetry never fails a run: a collector that refuses connections
(or a file that cannot be written) is one warning line, and every trace not sent is appended to the
run folder's ``otel-unsent.jsonl`` (OTLP/JSON, which a Collector's ``otlpjsonfile`` receiver reads)
instead of being lost.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import threading
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from callbench.errors import missing_extra
from callbench.telemetry import conventions as sc
from callbench.telemetry.conventions import OtelTarget
from callbench.telemetry.otlp import encode_json
from callbench.types.records import CaseRecord, RunHeader
from callbench.types.trace import RoundInfo, TraceCall
from callbench.types.version import __version__

UNSENT_FILE = "otel-unsent.jsonl"
"""In the run folder: the traces a collector or file did not take, one OTLP/JSON request a line."""
DEFAULT_TIMEOUT_S = 5.0
"""Seconds one export to a collector may take, its retries included (``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT``
or ``OTEL_EXPORTER_OTLP_TIMEOUT`` override it)."""
CLOSE_WAIT_S = 30.0
"""At the run's end, how long the traces still queued may take to go out before they are kept in
``otel-unsent.jsonl`` instead."""
EXPORTER_LOGGER = "opentelemetry.exporter.otlp"
OWN_LOOP = "callbench"
"""``gen_ai.agent.name`` of callbench's own round loop."""
REQUIRED = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


class TelemetryWarning(UserWarning):
    """Traces that could not be sent (the run goes on; they are kept in the run folder)."""

    one_line = True
    """The CLI prints it as one ``callbench: warning:`` line."""


def require_sdk(flag: str = "--otel", otlp: bool = True) -> None:
    """One :class:`~callbench.errors.MissingExtraError` line when the ``otel`` extra is missing (checked
    before anything runs; nothing is imported)."""
    from importlib.util import find_spec

    for module in REQUIRED if otlp else REQUIRED[:1]:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise missing_extra(flag, module, "otel")


# --- spans of one record -----------------------------------------------------------------------------


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes without ``None`` values (the SDK refuses them)."""
    return {k: v for k, v in attributes.items() if v is not None}


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _usage_attributes(usage: Any) -> dict[str, Any]:
    if usage is None:
        return {}
    out = {sc.INPUT_TOKENS: usage.input_tokens, sc.OUTPUT_TOKENS: usage.output_tokens}
    if usage.reasoning_tokens:
        out[sc.REASONING_TOKENS] = usage.reasoning_tokens
    if usage.cached_tokens:
        out[sc.CACHE_READ_TOKENS] = usage.cached_tokens
    return out


class RunFacts:
    """What every trace of the run shares, read once from ``run.json``'s header."""

    def __init__(self, header: RunHeader | None) -> None:
        provider = dict(header.provider) if header is not None else {}
        self.run_id = header.run_id if header is not None else ""
        self.model_spec = header.model if header is not None else ""
        self.provider = sc.provider_name(str(provider.get("provider") or "") or None)
        self.request_model = str(provider.get("model") or "") or self.model_spec or None
        settings = header.settings if header is not None else {}
        self.seed = settings.get("seed")
        self.temperature = settings.get("temperature")
        self.max_tokens = settings.get("max_tokens")
        base_url = str(provider.get("base_url") or "")
        parts = urlsplit(base_url) if base_url else None
        self.server_address = parts.hostname if parts is not None else None
        self.server_port = parts.port if parts is not None else None
        self.mcp_suites: dict[str, tuple[str | None, str]] = {}
        """Suites whose calls went to a live MCP server: suite -> (protocol version, transport)."""
        options = header.options if header is not None else {}
        cassette = options.get("cassette") if isinstance(options, Mapping) else None
        replayed = isinstance(cassette, Mapping) and cassette.get("mode") == "replay"
        for source in header.tool_sources if header is not None else []:
            if source.kind == "mcp" and not replayed:
                transport = "pipe" if source.source.startswith("stdio:") else "tcp"
                for suite in source.suites:
                    self.mcp_suites[suite] = (source.protocol_version, transport)


def case_spans(tracer: Any, record: CaseRecord, facts: RunFacts, *, content: bool = False) -> None:
    """Start and end, on ``tracer``, the spans of one record's trace (see the module's docstring)."""
    from opentelemetry import trace as api
    from opentelemetry.trace import SpanKind, Status, StatusCode

    trace = record.trace
    agent = trace.agent
    start = record.started_at or time.time()
    end = start + max(record.duration_ms, 0.0) / 1000
    # callbench's own loop is the agent that drives the model (the model is the request model)
    agent_name = agent_label(agent.agent) if agent is not None else OWN_LOOP
    if agent is None:
        kind = SpanKind.INTERNAL  # callbench's own loop plays the agent, in process
    else:
        kind = SpanKind.INTERNAL if agent.agent.startswith("py:") else SpanKind.CLIENT
    attributes: dict[str, Any] = {
        sc.OPERATION: sc.INVOKE_AGENT,
        sc.AGENT_NAME: agent_name or None,
        sc.CONVERSATION_ID: f"{facts.run_id}/{record.key}#{record.trial}",
        sc.PROVIDER: facts.provider if agent is None else None,
        sc.REQUEST_MODEL: facts.request_model if agent is None else None,
        sc.RUN_ID: facts.run_id or None,
        sc.AGENT_SPEC: agent.agent if agent is not None else None,
        sc.CASE_KEY: record.key,
        sc.CASE_TRIAL: record.trial,
        sc.SUITE: record.suite,
        sc.CATEGORY: record.category or None,
        sc.STATUS: record.status,
        sc.STOP_REASON: trace.stop_reason,
        sc.HARNESS_MODE: record.harness_mode,
        **_usage_attributes(trace.usage if _has_usage(trace.usage) else None),
    }
    for tier, verdict in record.verdicts.items():
        if verdict.applicable is not False:
            attributes[sc.VERDICT_PREFIX + tier] = bool(verdict.passed)
    if record.error is not None:
        attributes[sc.ERROR_TYPE] = record.error.type
    if content:
        attributes[sc.INPUT_MESSAGES] = _json([_message("user", [_text(record.instruction)])])
        attributes[sc.OUTPUT_MESSAGES] = _json([_message("assistant", [_text(trace.final_text)])])
    name = f"{sc.INVOKE_AGENT} {agent_name}".strip()
    root = tracer.start_span(name, kind=kind, attributes=_clean(attributes), start_time=_ns(start))
    if record.error is not None:
        root.set_status(Status(StatusCode.ERROR, record.error.message[:512]))
    parent = api.set_span_in_context(root)
    try:
        rounds = {info.index: info for info in trace.rounds}
        calls = {call.call_id: call for call in trace.calls}
        for info in trace.rounds:
            if info.reconstructed:
                continue  # no request was made: the round was inferred from call timing
            _model_span(tracer, parent, info, facts, agent is not None, content, calls)
        cursor: dict[int, float] = {}
        for call in trace.calls:
            _tool_span(tracer, parent, record, call, rounds.get(call.round), cursor, facts, content)
    finally:
        root.end(end_time=_ns(max(end, start)))


def _has_usage(usage: Any) -> bool:
    return bool(usage.input_tokens or usage.output_tokens or usage.reasoning_tokens or usage.cached_tokens)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def _message(role: str, parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "parts": parts}
    if finish:
        out["finish_reason"] = finish
    return out


def _model_span(
    tracer: Any,
    parent: Any,
    info: RoundInfo,
    facts: RunFacts,
    agent_run: bool,
    content: bool,
    calls: Mapping[str, TraceCall],
) -> None:
    from opentelemetry.trace import SpanKind

    model = (facts.request_model if not agent_run else info.model) or info.model or "unknown"
    start = info.started_at
    end = start + (info.latency_ms or 0.0) / 1000
    attributes: dict[str, Any] = {
        sc.OPERATION: sc.CHAT,
        sc.REQUEST_MODEL: model,
        sc.RESPONSE_MODEL: info.model,
        sc.FINISH_REASONS: [info.finish_reason] if info.finish_reason else None,
        sc.ROUND: info.index,
        sc.SOURCE: _source(info),
        **_usage_attributes(info.usage),
    }
    if not agent_run:
        attributes.update(
            {
                sc.PROVIDER: facts.provider,
                sc.REQUEST_SEED: facts.seed,
                sc.REQUEST_TEMPERATURE: facts.temperature,
                sc.REQUEST_MAX_TOKENS: facts.max_tokens,
                sc.SERVER_ADDRESS: facts.server_address,
                sc.SERVER_PORT: facts.server_port,
            }
        )
    if info.cached:
        attributes[sc.CACHED] = True
    if content:
        parts: list[dict[str, Any]] = []
        if info.reasoning:
            parts.append({"type": "reasoning", "content": info.reasoning})
        if info.text:
            parts.append(_text(info.text))
        for cid in info.call_ids:
            call = calls.get(cid)
            part: dict[str, Any] = {"type": "tool_call", "id": cid}
            if call is not None:
                part["name"] = call.tool
                part["arguments"] = call.arguments if call.arguments is not None else call.arguments_raw
            parts.append(part)
        attributes[sc.OUTPUT_MESSAGES] = _json([_message("assistant", parts, info.finish_reason)])
    span = tracer.start_span(
        f"{sc.CHAT} {model}",
        context=parent,
        kind=SpanKind.CLIENT,
        attributes=_clean(attributes),
        start_time=_ns(start),
    )
    span.end(end_time=_ns(max(end, start)))


def _source(info: RoundInfo) -> str:
    """Where a round's request facts come from (``callbench.source``)."""
    if info.agent_reported:
        return "agent_reported"
    if info.agent_request:
        return "agent_model_proxy"
    return "harness"


def agent_label(spec: str) -> str:
    """A short ``gen_ai.agent.name`` for an ``--agent`` spec: a ``cmd:`` agent's script (or program)
    file name, a ``py:`` agent's ``module:function``, an ``http:`` agent's URL."""
    kind, _, target = spec.partition(":")
    if kind == "cmd":
        words = target.split()
        scripts = [w for w in words if w.endswith(".py")]
        chosen = scripts[0] if scripts else (words[0] if words else target)
        return Path(chosen).name or spec
    return target or spec


def _error_type(call: TraceCall) -> str | None:
    """``error.type`` of a call that did not run cleanly (``None``: it did, or was call-only)."""
    if call.execution == "error":
        return "tool_error"
    if call.execution == "not_executed":
        return "not_executed"
    if call.execution != "rejected":
        return None
    if not call.known_tool:
        return "unknown_tool"
    if call.parse_error is not None:
        return "malformed_arguments"
    return "schema_invalid"


def _tool_span(
    tracer: Any,
    parent: Any,
    record: CaseRecord,
    call: TraceCall,
    info: RoundInfo | None,
    cursor: dict[int, float],
    facts: RunFacts,
    content: bool,
) -> None:
    from opentelemetry.trace import SpanKind, Status, StatusCode

    if call.started_at is not None:
        start = call.started_at
    else:  # callbench's own loop: the round's calls ran one after the other once its answer came
        after = (info.started_at + (info.latency_ms or 0.0) / 1000) if info is not None else record.started_at
        start = cursor.get(call.round, after)
    end = start + max(call.duration_ms, 0.0) / 1000
    cursor[call.round] = end
    error = _error_type(call)
    attributes: dict[str, Any] = {
        sc.OPERATION: sc.EXECUTE_TOOL,
        sc.TOOL_NAME: call.tool,
        sc.TOOL_CALL_ID: call.call_id,
        sc.TOOL_TYPE: "function",
        sc.EXECUTION: call.execution,
        sc.SCHEMA_VALID: call.schema_valid,
        sc.ROUND: call.round,
        sc.ERROR_TYPE: error,
    }
    attributes.update(_mcp_attributes(record, call, facts))
    if content:
        arguments = call.arguments if call.arguments is not None else call.arguments_raw
        attributes[sc.TOOL_ARGUMENTS] = arguments if isinstance(arguments, str) else _json(arguments)
        if call.error is not None:
            attributes[sc.TOOL_RESULT] = call.error
        elif call.result is not None:
            attributes[sc.TOOL_RESULT] = call.result if isinstance(call.result, str) else _json(call.result)
    span = tracer.start_span(
        f"{sc.EXECUTE_TOOL} {call.tool}",
        context=parent,
        kind=SpanKind.INTERNAL,
        attributes=_clean(attributes),
        start_time=_ns(start),
    )
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, (call.error or error)[:512]))
    span.end(end_time=_ns(end))


def _mcp_attributes(record: CaseRecord, call: TraceCall, facts: RunFacts) -> dict[str, Any]:
    """The MCP attributes of a call that went over MCP, added to its ``execute_tool`` span (the MCP
    conventions' rule when an outer tool span exists)."""
    agent = record.trace.agent
    if agent is not None and agent.mcp_url and call.started_at is not None:
        # the agent called callbench's MCP server: one stateless streamable-HTTP session per case, at
        # its own URL, whose token is the session's identity
        parts = urlsplit(agent.mcp_url)
        segments = [s for s in parts.path.split("/") if s]
        session = segments[1] if len(segments) >= 3 and segments[0] == "case" else None
        protocol = agent.details.get("mcp_protocol_version") if isinstance(agent.details, Mapping) else None
        return _clean(
            {
                sc.MCP_METHOD: sc.TOOLS_CALL,
                sc.MCP_SESSION: session,
                sc.MCP_PROTOCOL: protocol,
                sc.NETWORK_TRANSPORT: "tcp",
                sc.SERVER_ADDRESS: parts.hostname,
                sc.SERVER_PORT: parts.port,
            }
        )
    found = facts.mcp_suites.get(record.suite)
    if found is not None and call.execution in ("ok", "error"):  # sent to the server
        protocol, transport = found
        return _clean(
            {sc.MCP_METHOD: sc.TOOLS_CALL, sc.MCP_PROTOCOL: protocol, sc.NETWORK_TRANSPORT: transport}
        )
    return {}


# --- where the spans go ------------------------------------------------------------------------------


def _collector() -> Any:
    """A span processor that keeps the spans of the record being built (made when first needed: the
    SDK is imported only by a run that asked for telemetry)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class Collector(SpanProcessor):
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def on_end(self, span: Any) -> None:
            self.spans.append(span)

    return Collector()


_ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")\]]+")
_STATUS = re.compile(r"code: (\d{3}), reason: (.*)")


class _CapturedLog(logging.Handler):
    """Keeps why the exporter's exports failed (its log lines) instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = ""
        self.cause = ""
        """The first low-level cause seen (``[Errno 111] Connection refused``, ``HTTP 503 ...``)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a log line must never break telemetry
            message = str(record.msg)
        self.last = message
        found = _ERRNO.search(message)
        status = _STATUS.search(message)
        if not self.cause and found:
            self.cause = found.group(0).strip()
        elif not self.cause and status and status.group(1) != "None":
            self.cause = f"HTTP {status.group(1)} {status.group(2)}".strip()[:200]

    def reason(self) -> str:
        return self.cause or self.last[:200] or "the export failed"


class OtelObserver:
    """The run observer behind ``--otel``: one trace per record (:func:`case_spans`), sent or written.

    ``exporter`` (an SDK ``SpanExporter``, e.g. the SDK's in-memory one) replaces the target: spans are
    handed to it as each case ends, in the engine's thread.
    """

    def __init__(
        self,
        target: OtelTarget | None,
        run_dir: Path | None = None,
        *,
        content: bool = False,
        exporter: Any = None,
    ) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        self.target = target
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.content = content
        self.facts = RunFacts(None)
        self.sent = 0
        self.kept = 0
        self.warned = False
        self._lock = threading.Lock()
        self._collector = _collector()
        resource: dict[str, Any] = {"service.version": __version__}
        if not os.environ.get("OTEL_SERVICE_NAME"):
            resource["service.name"] = "callbench"
        self._resource = resource
        self.provider = TracerProvider(resource=Resource.create(resource), shutdown_on_exit=False)
        self.provider.add_span_processor(self._collector)
        self.tracer = self.provider.get_tracer("callbench", __version__)
        self._exporter = exporter
        self._queue: queue.Queue[list[Any] | None] | None = None
        self._thread: threading.Thread | None = None
        self._log: _CapturedLog | None = None
        if exporter is None and target is not None and target.kind == "otlp":
            self._start_sender(target)

    # -- observer events ------------------------------------------------------------------------------

    def on_run_start(self, header: RunHeader, total: int) -> None:
        self.facts = RunFacts(header)
        if self.facts.run_id:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider

            resource = {**self._resource, sc.RUN_ID: self.facts.run_id}
            self.provider = TracerProvider(resource=Resource.create(resource), shutdown_on_exit=False)
            self.provider.add_span_processor(self._collector)
            self.tracer = self.provider.get_tracer("callbench", __version__)

    def on_case_end(self, record: CaseRecord) -> None:
        try:
            with self._lock:
                self._collector.spans = []
                case_spans(self.tracer, record, self.facts, content=self.content)
                spans, self._collector.spans = self._collector.spans, []
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._warn(
                f"OpenTelemetry: could not build the trace of {record.key}: {type(exc).__name__}: {exc}"
            )
            return
        self._deliver(spans)

    def on_run_end(self, summary: Any) -> None:
        self.close()

    # -- delivery -------------------------------------------------------------------------------------

    def _deliver(self, spans: list[Any]) -> None:
        if not spans:
            return
        if self._exporter is not None:
            from opentelemetry.sdk.trace.export import SpanExportResult

            try:
                ok = self._exporter.export(spans) == SpanExportResult.SUCCESS
            except Exception:  # noqa: BLE001 - telemetry never fails a run
                ok = False
            if ok:
                self.sent += 1
            else:
                self._keep(spans, "the exporter did not take the spans")
            return
        if self.target is not None and self.target.kind == "file":
            try:
                with open(self.target.where, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(encode_json(spans), ensure_ascii=False) + "\n")
                self.sent += 1
            except OSError as exc:
                self._keep(spans, f"cannot write {self.target.where}: {exc.strerror or exc}")
            return
        if self._queue is not None:
            self._queue.put(spans)

    def _start_sender(self, target: OtelTarget) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        given = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get(
            "OTEL_EXPORTER_OTLP_TIMEOUT"
        )
        timeout = None if given else DEFAULT_TIMEOUT_S
        # The exporter logs each retry and failure; the reason is kept for the one warning line instead.
        self._log = _CapturedLog()
        logger = logging.getLogger(EXPORTER_LOGGER)
        self._log_state = (logger.propagate, logger.level)
        logger.addHandler(self._log)
        logger.propagate = False
        self._otlp = OTLPSpanExporter(endpoint=target.where, timeout=timeout)
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._send_loop, name="callbench-otel", daemon=True)
        self._down = False
        self._thread.start()

    def _send_loop(self) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        assert self._queue is not None
        while (spans := self._queue.get()) is not None:
            if self._down:
                self._keep(spans, "")
                continue
            try:
                ok = self._otlp.export(spans) == SpanExportResult.SUCCESS
            except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
                ok = False
                if self._log is not None:
                    self._log.last = f"{type(exc).__name__}: {exc}"
            if ok:
                self.sent += 1
                continue
            self._down = True  # one failed export: the rest of the run's traces are kept, not retried
            reason = self._log.reason() if self._log is not None else "the export failed"
            assert self.target is not None
            where = _without_credentials(self.target.where)
            self._keep(spans, f"the collector at {where} did not take the spans ({reason})")

    def _keep(self, spans: list[Any], reason: str) -> None:
        """Append ``spans`` to the run folder's ``otel-unsent.jsonl``; the first time, one warning."""
        where = self.unsent_path
        kept = False
        if where is not None:
            try:
                with self._lock, open(where, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(encode_json(spans), ensure_ascii=False) + "\n")
                kept = True
                self.kept += 1
            except OSError:
                kept = False
        if reason:
            tail = f"its traces are kept in {where}" if kept else "its traces are lost"
            self._warn(f"OpenTelemetry: {reason}; the run goes on, {tail}")

    @property
    def unsent_path(self) -> Path | None:
        return self.run_dir / UNSENT_FILE if self.run_dir is not None else None

    def _warn(self, message: str) -> None:
        if self.warned:
            return
        self.warned = True
        warnings.warn(message, TelemetryWarning, stacklevel=2)

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Send what is queued (waiting at most ``wait_s``; what is still queued then is kept in the
        run folder), then shut the exporter down. Idempotent."""
        thread, self._thread = self._thread, None
        if thread is not None and self._queue is not None:
            self._queue.put(None)
            thread.join(wait_s)
            if thread.is_alive():  # the collector is too slow: what is left is kept, not lost
                self._down = True
                leftover: list[list[Any]] = []
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        leftover.append(item)
                for spans in leftover:
                    self._keep(spans, "the collector did not take the spans in time")
            self._otlp.shutdown()
        if self._log is not None:
            logger = logging.getLogger(EXPORTER_LOGGER)
            logger.removeHandler(self._log)
            logger.propagate = self._log_state[0]
            self._log = None
        if self._exporter is not None:
            try:
                self._exporter.shutdown()
            except Exception:  # noqa: BLE001 - telemetry never fails a run
                pass


def _without_credentials(url: str) -> str:
    """``url`` as a warning may show it: no user or password, no query (a token may ride there)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc, query="", fragment="").geturl()


def observer_for(target: str | None, run_dir: Path, *, content: bool = False) -> OtelObserver | None:
    """The ``--otel`` observer of a run (``None`` without ``--otel``)."""
    if not target:
        return None
    parsed = sc.parse_target(target)
    require_sdk(otlp=parsed.kind == "otlp")
    return OtelObserver(parsed, run_dir, content=content)
