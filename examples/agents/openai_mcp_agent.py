"""A minimal tool-calling agent: the official ``openai`` SDK (Chat Completions) + the ``mcp`` client.

It reads the agent-under-test contract from the environment (``CALLBENCH_INSTRUCTION``,
``CALLBENCH_MCP_URL``, optional ``CALLBENCH_SYSTEM_PROMPT`` and ``CALLBENCH_ANSWER_FILE``), offers
the MCP server's tools to the model as function tools and loops model -> tool calls -> MCP
``call_tool`` -> tool messages until the model answers without calls. The answer goes to stdout
(and to ``CALLBENCH_ANSWER_FILE`` when set). The model endpoint is the standard
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``; any OpenAI-compatible server works.

    callbench run --agent 'cmd:python examples/agents/openai_mcp_agent.py --model M' --suite starter

Exit status 0 with the answer on stdout; 1 with one line on stderr on any failure. In-process, the
same loop is ``--agent py:openai_mcp_agent:agent`` (with this folder on ``PYTHONPATH`` and the
model in ``CALLBENCH_AGENT_MODEL``).

OpenTelemetry: when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set,
or ``otel_endpoint`` is given in-process, the agent sends its own spans there over OTLP/HTTP, named
and attributed as the GenAI semantic conventions say (``invoke_agent``, one ``chat {model}`` per model
request with its token usage, reasoning and cached tokens included, one ``execute_tool {tool}`` per
call). ``callbench run --agent-otel`` receives them and records the agent's tokens. It needs the
``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-http`` packages
(``pip install 'callbench[otel]'``); without them the agent runs without spans.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

from mcp import Client
from openai import APIConnectionError, APIStatusError, AsyncOpenAI
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode


class AgentError(Exception):
    """A failure worth one line on stderr."""


def env(name: str, required: bool = True) -> str:
    value = os.environ.get(name, "")
    if required and not value:
        raise AgentError(f"environment variable {name} is not set")
    return value


async def list_tools(mcp: Client) -> list[dict[str, Any]]:
    """Every tool of the MCP server, as a Chat Completions function tool (follows pagination)."""
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await mcp.list_tools(cursor=cursor)
        for t in page.tools:
            function = {"name": t.name, "description": t.description or "", "parameters": t.input_schema}
            tools.append({"type": "function", "function": function})
        if not (cursor := page.next_cursor):
            return tools


class Telemetry:
    """The agent's own spans (GenAI semantic conventions), sent over OTLP/HTTP to ``endpoint``; a
    no-op tracer without an endpoint or without the OpenTelemetry SDK. A provider of its own, not the
    global one: in-process, several cases run at once, each with its own endpoint."""

    def __init__(self, endpoint: str | None) -> None:
        self.provider: Any = None
        self.tracer: Any = trace.NoOpTracer()
        if not endpoint:
            return
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:  # the agent runs the same, without spans
            return
        traces = (
            endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
        )
        self.provider = TracerProvider(resource=Resource.create({"service.name": "openai_mcp_agent"}))
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces, timeout=5)))
        self.tracer = self.provider.get_tracer("openai_mcp_agent")

    def close(self) -> None:
        """Send what is left before the agent returns (a process exits right after)."""
        if self.provider is not None:
            self.provider.shutdown()

    def request(self, model: str) -> Any:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
        }
        return self.tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)

    @staticmethod
    def answered(span: Any, reply: Any) -> None:
        """The reply's model, finish reasons and token usage on its request span."""
        span.set_attribute("gen_ai.response.model", reply.model or "")
        span.set_attribute("gen_ai.response.id", reply.id or "")
        span.set_attribute("gen_ai.response.finish_reasons", [c.finish_reason or "" for c in reply.choices])
        usage = reply.usage
        if usage is None:
            return
        span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
        details = usage.completion_tokens_details
        if details is not None and details.reasoning_tokens:
            span.set_attribute("gen_ai.usage.reasoning.output_tokens", details.reasoning_tokens)
        prompt = usage.prompt_tokens_details
        if prompt is not None and prompt.cached_tokens:
            span.set_attribute("gen_ai.usage.cache_read.input_tokens", prompt.cached_tokens)

    def tool(self, name: str, call_id: str) -> Any:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "extension",
            "mcp.method.name": "tools/call",
        }
        return self.tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes)


async def call_tool(mcp: Client, name: str, raw_arguments: str, span: Any = None) -> str:
    """Run one call on the MCP server; the text it returns (a result or an error) goes to the model."""
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError:
        arguments = None
    # MCP carries arguments as an object, so text that is not a JSON object cannot be forwarded as
    # is. We still send the call (with {}) rather than drop it: the server sees and records that
    # the model called this tool, and its own validation decides what the model hears back.
    if not isinstance(arguments, dict):
        arguments = {}
    result = await mcp.call_tool(name, arguments)
    if result.is_error and span is not None:
        span.set_attribute("error.type", "tool_error")
        span.set_status(Status(StatusCode.ERROR))
    texts = [b.text if b.type == "text" else b.model_dump_json() for b in result.content]
    return "\n".join(texts)


async def connect(stack: AsyncExitStack, url: str) -> Client:
    """An open MCP client session (closed with ``stack``)."""
    try:
        return await stack.enter_async_context(Client(url))
    except Exception as exc:
        raise AgentError(f"cannot reach the MCP server at {url}: {first_leaf(exc)}") from exc


async def complete(llm: AsyncOpenAI, **request: Any) -> Any:
    """One Chat Completions request; endpoint failures become one readable line."""
    try:
        return await llm.chat.completions.create(**request)
    except APIConnectionError as exc:
        raise AgentError(f"cannot reach the model endpoint at {llm.base_url}: {exc}") from exc
    except APIStatusError as exc:
        raise AgentError(f"the model endpoint answered HTTP {exc.status_code}: {exc.message}") from exc


async def agent(
    instruction: str,
    mcp_url: str,
    *,
    system_prompt: str | None = None,
    model: str = "",
    max_rounds: int = 12,
    max_retries: int = 2,
    model_url: str | None = None,
    otel_endpoint: str | None = None,
) -> str:
    """The agent loop; returns the model's final text.

    The in-process entry point (``--agent py:openai_mcp_agent:agent``) and what :func:`main` runs.
    The model is ``model`` or ``CALLBENCH_AGENT_MODEL``; the system message is ``system_prompt``
    (callbench passes the suite's to ``py:`` agents that name the parameter) or
    ``CALLBENCH_SYSTEM_PROMPT``, when set. The endpoint is ``model_url`` (callbench passes the case's
    model proxy URL when it records or replays the agent's model) or ``OPENAI_BASE_URL``. Spans go to
    ``otel_endpoint`` (callbench passes the case's with ``--agent-otel``) or the OTLP variables.
    """
    model = model or env("CALLBENCH_AGENT_MODEL", required=False)
    if not model:
        raise AgentError("no model: pass --model or set CALLBENCH_AGENT_MODEL")
    system = system_prompt if system_prompt is not None else env("CALLBENCH_SYSTEM_PROMPT", required=False)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": instruction})
    endpoint = otel_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    telemetry = Telemetry(endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "openai_mcp_agent"}
    try:
        with telemetry.tracer.start_as_current_span("invoke_agent openai_mcp_agent", attributes=attributes):
            return await loop(telemetry, mcp_url, messages, model, max_rounds, max_retries, model_url)
    finally:
        telemetry.close()


async def loop(
    telemetry: Telemetry,
    mcp_url: str,
    messages: list[dict[str, Any]],
    model: str,
    max_rounds: int,
    max_retries: int,
    model_url: str | None,
) -> str:
    """Model -> tool calls -> MCP -> tool messages, until the model answers without calls."""
    async with AsyncExitStack() as stack:
        # Closed with the stack: in-process (py:), many cases share one event loop.
        llm = await stack.enter_async_context(AsyncOpenAI(max_retries=max_retries, base_url=model_url))
        mcp = await connect(stack, mcp_url)
        tools = await list_tools(mcp)
        for _ in range(max_rounds):
            extra: dict[str, Any] = {"tools": tools} if tools else {}
            with telemetry.request(model) as span:
                reply = await complete(llm, model=model, messages=messages, **extra)
                telemetry.answered(span, reply)
            if not reply.choices:
                raise AgentError("the model endpoint returned no choices")
            message = reply.choices[0].message
            calls = [c for c in message.tool_calls or [] if c.type == "function"]
            if not calls:
                return message.content or ""
            messages.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": c.function.model_dump()} for c in calls
                    ],
                }
            )
            for c in calls:  # parallel calls of one turn run one after the other, in order
                with telemetry.tool(c.function.name, c.id) as span:
                    content = await call_tool(mcp, c.function.name, c.function.arguments, span)
                messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
    raise AgentError(f"no final answer after {max_rounds} model turns")


def first_leaf(error: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups, for a readable message."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="", help="model name (default: $CALLBENCH_AGENT_MODEL)")
    parser.add_argument("--max-rounds", type=int, default=12, help="model turns before giving up")
    parser.add_argument("--max-retries", type=int, default=2, help="retries of a failed model request")
    args = parser.parse_args()
    # Library warnings (e.g. a call of an unlisted tool) would blur the one-line error on stderr.
    logging.getLogger().setLevel(logging.ERROR)
    try:
        instruction, mcp_url = env("CALLBENCH_INSTRUCTION"), env("CALLBENCH_MCP_URL")
        run = agent(
            instruction, mcp_url, model=args.model, max_rounds=args.max_rounds, max_retries=args.max_retries
        )
        answer = asyncio.run(run)
    except Exception as exc:  # noqa: BLE001 - an agent reports any failure as one line and exits 1
        leaf = first_leaf(exc)
        reason = str(leaf) if isinstance(leaf, AgentError) else f"{type(leaf).__name__}: {leaf}"
        print(f"openai_mcp_agent: error: {reason}".replace("\n", " "), file=sys.stderr)
        return 1
    if answer_file := os.environ.get("CALLBENCH_ANSWER_FILE"):
        with open(answer_file, "w", encoding="utf-8") as handle:
            handle.write(answer)
    print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
