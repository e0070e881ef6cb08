"""The OpenTelemetry tests need the ``otel`` extra (the SDK, its OTLP/HTTP exporter and
opentelemetry-proto); without it they are skipped."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra")

from otel_fixtures import Collector  # noqa: E402 - after the extra is known to be there


@pytest.fixture
def collector() -> Iterator[Collector]:
    """A local OTLP/HTTP collector on 127.0.0.1 (POST /v1/traces, protobuf)."""
    with Collector() as running:
        yield running
