"""OTLP trace payloads: written as OTLP/JSON lines, read from OTLP/HTTP requests (protobuf or JSON).

:func:`encode_json` turns the SDK's finished spans into one ``ExportTraceServiceRequest`` in OTLP's
JSON encoding (hex trace and span ids, lowerCamelCase keys, 64-bit integers as strings, enums as
numbers): what the Collector's ``file`` exporter writes and its ``otlpjsonfile`` receiver reads, one
request per line.

:func:`decode_request` reads the body of an OTLP/HTTP export request (``application/x-protobuf``,
through opentelemetry-proto's classes, or ``application/json``; gzip or deflate encoded or not) into
plain :class:`ReceivedSpan` objects, the form the rest of callbench reads.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
"""OTLP's ``SpanKind`` numbers (0..5) by name."""
STATUS_CODES = ("unset", "ok", "error")


class OtlpDecodeError(ValueError):
    """An export request that cannot be read (not OTLP, truncated, compressed wrongly)."""


@dataclass
class ReceivedSpan:
    """One span as an OTLP export request carried it."""

    trace_id: str
    span_id: str
    name: str
    start: float
    """Unix time in seconds."""
    end: float
    parent_span_id: str = ""
    kind: str = "internal"
    attributes: dict[str, Any] = field(default_factory=dict)
    status: str = "unset"
    status_message: str = ""
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""

    @property
    def duration_ms(self) -> float:
        return max(0.0, (self.end - self.start) * 1000)


# --- writing: the SDK's spans as OTLP/JSON ---------------------------------------------------------


def _json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_json_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _json_attributes(value)}}
    return {"stringValue": str(value)}


def _json_attributes(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": _json_value(v)} for k, v in (attributes or {}).items()]


def encode_json(spans: Sequence[Any]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` (OTLP/JSON) holding ``spans`` (the SDK's ``ReadableSpan``),
    grouped by resource and instrumentation scope as the protobuf encoder groups them."""
    resources: dict[int, tuple[Any, dict[tuple[str, str], list[dict[str, Any]]]]] = {}
    for span in spans:
        resource = span.resource
        _, scopes = resources.setdefault(id(resource), (resource, {}))
        scope = span.instrumentation_scope
        key = (getattr(scope, "name", "") or "", getattr(scope, "version", "") or "")
        scopes.setdefault(key, []).append(_json_span(span))
    out = []
    for resource, scopes in resources.values():
        scope_spans = [
            {"scope": {"name": name, **({"version": version} if version else {})}, "spans": items}
            for (name, version), items in scopes.items()
        ]
        out.append(
            {"resource": {"attributes": _json_attributes(resource.attributes)}, "scopeSpans": scope_spans}
        )
    return {"resourceSpans": out}


def _json_span(span: Any) -> dict[str, Any]:
    context = span.get_span_context()
    item: dict[str, Any] = {
        "traceId": format(context.trace_id, "032x"),
        "spanId": format(context.span_id, "016x"),
        "name": span.name,
        "kind": int(span.kind.value) + 1,  # the SDK counts from INTERNAL = 0, OTLP from UNSPECIFIED = 0
        "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": _json_attributes(span.attributes),
    }
    if span.parent is not None:
        item["parentSpanId"] = format(span.parent.span_id, "016x")
    status = span.status
    code = int(status.status_code.value)
    if code:
        item["status"] = {"code": code, **({"message": status.description} if status.description else {})}
    return item


# --- reading: OTLP/HTTP request bodies ---------------------------------------------------------------


def _inflate(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    try:
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, EOFError, zlib.error) as exc:
        raise OtlpDecodeError(f"cannot {encoding}-decode the body: {exc}") from None
    if encoding not in ("", "identity"):
        raise OtlpDecodeError(f"unsupported Content-Encoding {encoding!r}")
    return body


def decode_request(body: bytes, content_type: str = "", content_encoding: str = "") -> list[ReceivedSpan]:
    """The spans of one OTLP/HTTP trace export request."""
    data = _inflate(body, content_encoding)
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            value = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise OtlpDecodeError(f"not JSON: {exc}") from None
        return decode_json(value)
    return decode_protobuf(data)


def decode_protobuf(data: bytes) -> list[ReceivedSpan]:
    """Spans of a protobuf ``ExportTraceServiceRequest`` (opentelemetry-proto reads it)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError (and kin): not a trace request
        raise OtlpDecodeError(f"not an OTLP protobuf trace request: {exc}") from None
    out: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: _proto_value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            for span in scope_spans.spans:
                out.append(
                    ReceivedSpan(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=_named(SPAN_KINDS, span.kind),
                        start=span.start_time_unix_nano / 1e9,
                        end=span.end_time_unix_nano / 1e9,
                        attributes={kv.key: _proto_value(kv.value) for kv in span.attributes},
                        status=_named(STATUS_CODES, span.status.code),
                        status_message=span.status.message,
                        resource=resource,
                        scope=scope,
                    )
                )
    return out


def _named(names: Sequence[str], number: int) -> str:
    return names[number] if 0 <= number < len(names) else str(number)


def _proto_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_proto_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _proto_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which)


def _hex_id(value: Any) -> str:
    """A trace or span id as OTLP/JSON writes it (hex), or as a protobuf-to-JSON mapping writes it
    (base64): read either as lowercase hex."""
    text = str(value or "")
    if not text:
        return ""
    try:
        int(text, 16)
        return text.lower()
    except ValueError:
        try:
            return base64.b64decode(text).hex()
        except ValueError:
            return text


def _nanos(value: Any) -> float:
    try:
        return int(value or 0) / 1e9
    except (TypeError, ValueError):
        return 0.0


def _json_any(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [_json_any(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return _json_kv((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _json_kv(items: Iterable[Any]) -> dict[str, Any]:
    return {
        str(item.get("key")): _json_any(item.get("value"))
        for item in items or []
        if isinstance(item, Mapping) and "key" in item
    }


def _enum(names: Sequence[str], value: Any) -> str:
    if isinstance(value, int):
        return _named(names, value)
    text = str(value or "").lower()
    for name in names:
        if text.endswith(name):
            return name
    return names[0] if text == "" else text


def decode_json(value: Any) -> list[ReceivedSpan]:
    """Spans of an OTLP/JSON ``ExportTraceServiceRequest`` (a line of :func:`encode_json`'s files)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("resourceSpans", []), list):
        raise OtlpDecodeError("not an OTLP/JSON trace request (no resourceSpans list)")
    out: list[ReceivedSpan] = []
    for resource_spans in value.get("resourceSpans") or []:
        if not isinstance(resource_spans, Mapping):
            continue
        resource = _json_kv((resource_spans.get("resource") or {}).get("attributes", []))
        for scope_spans in resource_spans.get("scopeSpans") or []:
            if not isinstance(scope_spans, Mapping):
                continue
            scope = str((scope_spans.get("scope") or {}).get("name", ""))
            for span in scope_spans.get("spans") or []:
                if not isinstance(span, Mapping):
                    continue
                status = span.get("status") or {}
                out.append(
                    ReceivedSpan(
                        trace_id=_hex_id(span.get("traceId")),
                        span_id=_hex_id(span.get("spanId")),
                        parent_span_id=_hex_id(span.get("parentSpanId")),
                        name=str(span.get("name", "")),
                        kind=_enum(SPAN_KINDS, span.get("kind", 0)),
                        start=_nanos(span.get("startTimeUnixNano")),
                        end=_nanos(span.get("endTimeUnixNano")),
                        attributes=_json_kv(span.get("attributes", [])),
                        status=_enum(STATUS_CODES, status.get("code", 0)),
                        status_message=str(status.get("message", "")),
                        resource=resource,
                        scope=scope,
                    )
                )
    return out
