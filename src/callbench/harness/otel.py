"""OpenTelemetry in a run: ``--otel`` (a trace per case, out) and ``--agent-otel`` (an agent's own spans,
in), set up for the engine. The work is in :mod:`callbench.telemetry`; here the run's options are
checked before anything runs and the observer is made once the run folder exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callbench.errors import ConfigError
from callbench.harness.config import RunConfig
from callbench.providers.agent_under_test import PythonAgent, parse_agent
from callbench.telemetry.conventions import parse_target


def check_otel(config: RunConfig) -> None:
    """One line, before the run folder exists, for what would make ``--otel`` or ``--agent-otel``
    fail later: the ``otel`` extra missing, ``--agent-otel`` without ``--agent`` or with Ray, a ``py:``
    agent that cannot be told its case's endpoint."""
    from callbench.telemetry.export import require_sdk

    if config.otel:
        require_sdk("--otel", otlp=parse_target(config.otel).kind == "otlp")
    if not config.agent_otel:
        return
    if config.agent is None:
        raise ConfigError("--agent-otel receives an agent's own spans: it needs --agent SPEC")
    if config.backend != "local":
        raise ConfigError("--agent-otel receives the agent's spans in this process: not with --backend ray")
    require_sdk("--agent-otel", otlp=False)
    from importlib.util import find_spec

    if find_spec("opentelemetry.proto") is None:  # the protobuf classes an OTLP request is read with
        from callbench.errors import missing_extra

        raise missing_extra("--agent-otel", "opentelemetry.proto", "otel")
    agent = parse_agent(config.agent)
    if isinstance(agent, PythonAgent) and not agent.takes("otel_endpoint"):
        raise ConfigError(
            f"--agent {agent.spec!r} with --agent-otel: the function must take otel_endpoint= (its case's "
            "OTLP/HTTP endpoint) and export its spans there: a py: agent runs in callbench's process, "
            "where OTEL_EXPORTER_OTLP_ENDPOINT cannot differ per case"
        )


def otel_observers(config: RunConfig, run_dir: Path) -> list[Any]:
    """The ``--otel`` observer of the run (none without ``--otel``)."""
    if not config.otel:
        return []
    from callbench.telemetry.export import observer_for

    observer = observer_for(config.otel, run_dir, content=config.otel_content)
    return [observer] if observer is not None else []
