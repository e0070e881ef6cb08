"""The OpenTelemetry names callbench writes and reads, and the ``--otel`` target's syntax.

Every GenAI and MCP attribute is still at "Development" status in the semantic conventions
(``open-telemetry/semantic-conventions-genai``): callbench emits the newest names, those an
instrumentation emits under ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``, and reads
the older ones too (``gen_ai.system``, ``gen_ai.usage.prompt_tokens``...) from an agent's spans.

This module imports nothing outside the standard library and :mod:`callbench.errors`: the option
checks read it on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from callbench.errors import ConfigError

# --- GenAI: operations and spans ------------------------------------------------------------------
OPERATION = "gen_ai.operation.name"
INVOKE_AGENT = "invoke_agent"
EXECUTE_TOOL = "execute_tool"
CHAT = "chat"
INFERENCE_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "responses"})
"""Operations whose span is one model request (``responses``: names some instrumentations of the
Responses API use)."""

PROVIDER = "gen_ai.provider.name"
OLD_PROVIDER = "gen_ai.system"
"""The name ``gen_ai.provider.name`` replaced (instrumentations without the opt-in still send it)."""
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
REQUEST_SEED = "gen_ai.request.seed"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
AGENT_VERSION = "gen_ai.agent.version"

INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
OLD_INPUT_TOKENS = ("gen_ai.usage.prompt_tokens",)
OLD_OUTPUT_TOKENS = ("gen_ai.usage.completion_tokens",)
OLD_REASONING_TOKENS = ("gen_ai.usage.reasoning_tokens", "gen_ai.usage.output_tokens.reasoning")
OLD_CACHE_READ_TOKENS = ("gen_ai.usage.cached_tokens", "gen_ai.usage.input_tokens.cached")
COST = ("gen_ai.usage.cost", "gen_ai.usage.cost_usd", "llm.usage.cost")
"""No convention names a request's cost yet; these are the names instrumentations use for it."""

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
"""Opt-in content: JSON lists of ``{role, parts: [{type: text|tool_call|tool_call_response|reasoning}]}``."""

TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
"""Opt-in content of a tool span (``--otel-content``)."""
ERROR_TYPE = "error.type"

# --- MCP ------------------------------------------------------------------------------------------
MCP_METHOD = "mcp.method.name"
MCP_SESSION = "mcp.session.id"
MCP_PROTOCOL = "mcp.protocol.version"
NETWORK_TRANSPORT = "network.transport"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
TOOLS_CALL = "tools/call"

# --- callbench's own attributes (outside the conventions' namespaces) -------------------------------
RUN_ID = "callbench.run.id"
CASE_KEY = "callbench.case.key"
CASE_TRIAL = "callbench.case.trial"
SUITE = "callbench.suite"
CATEGORY = "callbench.case.category"
STATUS = "callbench.case.status"
STOP_REASON = "callbench.stop_reason"
HARNESS_MODE = "callbench.harness.mode"
AGENT_SPEC = "callbench.agent.spec"
"""The ``--agent`` spec of an agent-under-test run, whole (``gen_ai.agent.name`` is its short name)."""
VERDICT_PREFIX = "callbench.verdict."
"""``callbench.verdict.<tier>``: whether the tier passed the case (absent when not applicable)."""
EXECUTION = "callbench.tool.execution"
SCHEMA_VALID = "callbench.tool.schema_valid"
CACHED = "callbench.response.cached"
ROUND = "callbench.round"
SOURCE = "callbench.source"
"""Where a model-request span's facts come from: ``harness`` (callbench's own request),
``agent_model_proxy`` (an agent's request callbench's proxy served), ``agent_reported`` (a request
the agent reported in its own spans, ``--agent-otel``)."""

SEMCONV_OPT_IN = "OTEL_SEMCONV_STABILITY_OPT_IN"
SEMCONV_LATEST = "gen_ai_latest_experimental"

PROVIDER_NAMES = {
    "openai": "openai",
    "azure": "azure.ai.openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "google": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "groq": "groq",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "perplexity": "perplexity",
    "cohere": "cohere",
    "watsonx": "ibm.watsonx.ai",
}
"""callbench's provider names as the conventions' well-known ``gen_ai.provider.name`` values; any
other provider (``vllm``, ``ollama``, a built-in agent) is sent under its own name."""


def provider_name(name: str | None) -> str | None:
    """``gen_ai.provider.name`` of a callbench provider name (``None``: none given)."""
    if not name:
        return None
    return PROVIDER_NAMES.get(name.lower(), name.lower())


# --- the --otel target ------------------------------------------------------------------------------

TRACES_PATH = "/v1/traces"
TARGET_RULE = "an OTLP/HTTP collector URL (e.g. http://127.0.0.1:4318) or file:PATH (JSON lines)"


@dataclass(frozen=True)
class OtelTarget:
    """Where ``--otel`` sends the run's traces."""

    kind: Literal["otlp", "file"]
    where: str
    """``otlp``: the traces endpoint (``.../v1/traces``); ``file``: the JSON-lines file's path."""

    def describe(self) -> str:
        return self.where if self.kind == "otlp" else f"file:{self.where}"


def parse_target(value: str, flag: str = "--otel") -> OtelTarget:
    """``http(s)://HOST[:PORT][/PATH]`` (OTLP over HTTP, protobuf; ``/v1/traces`` is added to a URL
    that does not end with it, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is read) or ``file:PATH`` (one OTLP
    JSON line per case); anything else is one :class:`ConfigError` line."""
    text = value.strip() if isinstance(value, str) else ""
    if text.startswith("file:"):
        path = text[len("file:") :].strip()
        if not path:
            raise ConfigError(f"{flag} must be {TARGET_RULE} (got {value!r}: no path after file:)")
        return OtelTarget("file", path)
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.hostname:
        try:
            parts.port  # noqa: B018 - a port that is not a number raises here
        except ValueError:
            raise ConfigError(f"{flag} must be {TARGET_RULE} (got {value!r}: bad port)") from None
        base = text.rstrip("/")
        return OtelTarget("otlp", base if base.endswith(TRACES_PATH) else base + TRACES_PATH)
    raise ConfigError(f"{flag} must be {TARGET_RULE} (got {value!r})")
