"""OpenTelemetry, out and in (docs/interop.md, "OpenTelemetry"; docs/agents.md, "The agent's own spans").

* :mod:`~callbench.telemetry.conventions`: the GenAI and MCP semantic conventions' names callbench
  writes and reads, and the ``--otel`` target's syntax (standard library only);
* :mod:`~callbench.telemetry.export`: ``--otel``, a run observer that turns each record into one trace
  (agent span, a span per model request, a span per tool call) sent over OTLP/HTTP or written as
  OTLP/JSON lines; telemetry never fails a run;
* :mod:`~callbench.telemetry.otlp`: OTLP/JSON writing and OTLP/HTTP request reading (protobuf, JSON);
* :mod:`~callbench.telemetry.receiver`: ``--agent-otel``, an OTLP/HTTP receiver on 127.0.0.1 with a
  route per case for an agent under test's own spans;
* :mod:`~callbench.telemetry.agent_spans`: those spans in the case's record (the agent's reported
  model requests, tokens and cost).

The OpenTelemetry SDK and exporter come with the ``otel`` extra and are imported only by a run that
asks for telemetry. This package sits beside ``callbench.mcp`` in the layers: it reads records and
traces (``callbench.types``) and imports nothing else of callbench's but :mod:`callbench.errors`.
"""
