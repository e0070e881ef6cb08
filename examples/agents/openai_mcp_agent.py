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


async def call_tool(mcp: Client, name: str, raw_arguments: str) -> str:
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
) -> str:
    """The agent loop; returns the model's final text.

    The in-process entry point (``--agent py:openai_mcp_agent:agent``) and what :func:`main` runs.
    The model is ``model`` or ``CALLBENCH_AGENT_MODEL``; the system message is ``system_prompt``
    (callbench passes the suite's to ``py:`` agents that name the parameter) or
    ``CALLBENCH_SYSTEM_PROMPT``, when set. The endpoint is ``model_url`` (callbench passes the case's
    model proxy URL when it records or replays the agent's model) or ``OPENAI_BASE_URL``.
    """
    model = model or env("CALLBENCH_AGENT_MODEL", required=False)
    if not model:
        raise AgentError("no model: pass --model or set CALLBENCH_AGENT_MODEL")
    system = system_prompt if system_prompt is not None else env("CALLBENCH_SYSTEM_PROMPT", required=False)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": instruction})
    async with AsyncExitStack() as stack:
        # Closed with the stack: in-process (py:), many cases share one event loop.
        llm = await stack.enter_async_context(AsyncOpenAI(max_retries=max_retries, base_url=model_url))
        mcp = await connect(stack, mcp_url)
        tools = await list_tools(mcp)
        for _ in range(max_rounds):
            extra: dict[str, Any] = {"tools": tools} if tools else {}
            reply = await complete(llm, model=model, messages=messages, **extra)
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
                content = await call_tool(mcp, c.function.name, c.function.arguments)
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
