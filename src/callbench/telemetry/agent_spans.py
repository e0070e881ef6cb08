"""An agent's own spans (``--agent-otel``) in its case's record.

What the agent reported about itself goes in ``trace.agent.details["otel"]``: how many spans and model
requests, its token usage (input, output, reasoning, cached), the models and providers it named, the
cost its spans state (no convention names one yet: ``gen_ai.usage.cost`` and kin), and the tools its
own spans say it ran. Those are the agent's figures, not callbench's measurement.

When callbench's model proxy did not serve the agent's model (``--agent-model-proxy`` off), the
agent's model requests also become the case's rounds, each marked ``agent_reported`` (tokens, latency,
model and finish reason as its spans say; the calls that arrived over MCP after it), and their tokens
``trace.usage``: the summary's token figures and cost then read them as they read a model run's, where
otherwise an agent's cost is unknown. The proxy's account, when there is one, wins: the spans are then
only in the details, beside it.

A model request is a span whose ``gen_ai.operation.name`` is an inference operation (``chat``,
``text_completion``, ``generate_content``); one inside another (a framework's span around an SDK's)
counts once, as the innermost. The older attribute names (``gen_ai.system``,
``gen_ai.usage.prompt_tokens``...) are read too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from callbench.telemetry import conventions as sc
from callbench.telemetry.otlp import ReceivedSpan
from callbench.types.messages import Usage
from callbench.types.trace import RoundInfo, Trace, TraceCall

DETAILS_KEY = "otel"
"""``trace.agent.details["otel"]``."""


def _int(attributes: Mapping[str, Any], name: str, *older: str) -> int:
    for key in (name, *older):
        value = attributes.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            return int(value)
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
    return 0


def _has_usage(attributes: Mapping[str, Any]) -> bool:
    keys = (sc.INPUT_TOKENS, sc.OUTPUT_TOKENS, *sc.OLD_INPUT_TOKENS, *sc.OLD_OUTPUT_TOKENS)
    return any(key in attributes for key in keys)


def span_usage(span: ReceivedSpan) -> Usage | None:
    """The span's token usage (``None``: it states none)."""
    a = span.attributes
    if not _has_usage(a):
        return None
    return Usage(
        input_tokens=_int(a, sc.INPUT_TOKENS, *sc.OLD_INPUT_TOKENS),
        output_tokens=_int(a, sc.OUTPUT_TOKENS, *sc.OLD_OUTPUT_TOKENS),
        reasoning_tokens=_int(a, sc.REASONING_TOKENS, *sc.OLD_REASONING_TOKENS),
        cached_tokens=_int(a, sc.CACHE_READ_TOKENS, *sc.OLD_CACHE_READ_TOKENS),
    )


def _cost(span: ReceivedSpan) -> float | None:
    for key in sc.COST:
        value = span.attributes.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def operation(span: ReceivedSpan) -> str:
    return str(span.attributes.get(sc.OPERATION) or "")


def model_requests(spans: Sequence[ReceivedSpan]) -> list[ReceivedSpan]:
    """The spans that are one model request each, in start order, an outer one dropped when another
    is inside it."""
    inference = {s.span_id: s for s in spans if operation(s) in sc.INFERENCE_OPERATIONS}
    by_id = {s.span_id: s for s in spans}
    shadowed: set[str] = set()
    for span in inference.values():
        parent, seen = span.parent_span_id, 0
        while parent and parent in by_id and seen < 64:  # an outer request span wraps this one
            if parent in inference:
                shadowed.add(parent)
            parent, seen = by_id[parent].parent_span_id, seen + 1
    kept = [s for s in inference.values() if s.span_id not in shadowed]
    return sorted(kept, key=lambda s: (s.start, s.end))


def _model(span: ReceivedSpan) -> str | None:
    value = span.attributes.get(sc.RESPONSE_MODEL) or span.attributes.get(sc.REQUEST_MODEL)
    return str(value) if value else None


def _provider(span: ReceivedSpan) -> str | None:
    value = span.attributes.get(sc.PROVIDER) or span.attributes.get(sc.OLD_PROVIDER)
    return str(value) if value else None


def _finish(span: ReceivedSpan) -> str | None:
    value = span.attributes.get(sc.FINISH_REASONS)
    if isinstance(value, (list, tuple)) and value:
        return str(value[0])
    return str(value) if isinstance(value, str) and value else None


def _output_text(span: ReceivedSpan) -> tuple[str, str | None]:
    """The text and reasoning of the span's output messages, when the agent sent its content."""
    raw = span.attributes.get(sc.OUTPUT_MESSAGES)
    if not isinstance(raw, str):
        return "", None
    try:
        messages = json.loads(raw)
    except (ValueError, RecursionError):
        return "", None
    texts: list[str] = []
    reasoning: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif part.get("type") == "reasoning" and isinstance(part.get("content"), str):
                reasoning.append(part["content"])
    return "\n".join(texts), "\n".join(reasoning) or None


def summarize(spans: Sequence[ReceivedSpan], rejected: Sequence[str] = ()) -> dict[str, Any]:
    """What the agent's spans say about its case (``trace.agent.details["otel"]``)."""
    requests = model_requests(spans)
    total = Usage()
    cost: float | None = None
    models: list[str] = []
    providers: list[str] = []
    for span in requests:
        usage = span_usage(span)
        if usage is not None:
            total = total + usage
        found = _cost(span)
        if found is not None:
            cost = (cost or 0.0) + found
        for value, into in ((_model(span), models), (_provider(span), providers)):
            if value and value not in into:
                into.append(value)
    tools = [s for s in spans if operation(s) == sc.EXECUTE_TOOL]
    out: dict[str, Any] = {
        "spans": len(spans),
        "traces": len({s.trace_id for s in spans}),
        "requests": len(requests),
        "usage": total.model_dump(),
        "models": models,
        "providers": providers,
    }
    if cost is not None:
        out["cost_usd"] = cost
    if tools:
        out["tool_spans"] = len(tools)
        out["tool_errors"] = sum(1 for s in tools if s.status == "error" or sc.ERROR_TYPE in s.attributes)
    services = sorted({str(s.resource.get("service.name")) for s in spans if s.resource.get("service.name")})
    if services:
        out["services"] = services
    if rejected:
        out["rejected"] = list(rejected)
    return out


def reported_rounds(requests: Sequence[ReceivedSpan], calls: list[TraceCall]) -> list[RoundInfo]:
    """One round per model request the agent reported, holding the calls that arrived after it and
    before the next; calls before the first request go in a reconstructed round ahead of them."""
    rounds: list[RoundInfo] = []
    for span in requests:
        text, reasoning = _output_text(span)
        info = RoundInfo(index=len(rounds) + 1, started_at=span.start, agent_reported=True)
        info.latency_ms = span.duration_ms
        info.model = _model(span)
        info.finish_reason = _finish(span)
        info.usage = span_usage(span)
        info.text = text
        info.reasoning = reasoning
        rounds.append(info)
    starts = [s.start for s in requests]
    lead: RoundInfo | None = None
    for call in calls:
        started = call.started_at or 0.0
        after = [i for i, start in enumerate(starts) if start <= started]
        if after:
            target = rounds[after[-1]]
        else:
            if lead is None:
                lead = RoundInfo(index=0, started_at=started, reconstructed=True)
            target = lead
        target.call_ids.append(call.call_id)
    if lead is not None:
        rounds.insert(0, lead)
    return rounds


def apply_agent_spans(
    trace: Trace,
    spans: Sequence[ReceivedSpan],
    *,
    rejected: Sequence[str] = (),
    make_rounds: bool = True,
    limits: Mapping[str, int] | None = None,
) -> bool:
    """Put the agent's spans in its case's trace (see the module's docstring); ``True`` when its
    model requests became the rounds."""
    details = summarize(spans, rejected)
    requests = model_requests(spans)
    rounds_made = make_rounds and bool(requests)
    details["rounds"] = rounds_made
    if trace.agent is not None:
        trace.agent.details[DETAILS_KEY] = details
    if not rounds_made:
        return False
    trace.adopt_rounds(reported_rounds(requests, trace.calls), (limits or {}).get("reply"), reasoning=True)
    return True
