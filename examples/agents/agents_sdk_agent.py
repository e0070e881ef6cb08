"""The same agent on the OpenAI Agents SDK (``openai-agents``), with its own MCP support.

The SDK's ``Runner`` owns the round loop; the MCP server of the case (``CALLBENCH_MCP_URL``) is
attached with ``MCPServerStreamableHttp`` and the model is reached through Chat Completions
(``OpenAIChatCompletionsModel``), so any OpenAI-compatible server works (``OPENAI_BASE_URL`` /
``OPENAI_API_KEY``). Tracing is off: nothing leaves the machine but the model requests.

    callbench run --agent 'cmd:python examples/agents/agents_sdk_agent.py --model M' --suite starter

Exit status 0 with the final answer on stdout (and in ``CALLBENCH_ANSWER_FILE`` when set); 1 with
one line on stderr on any failure. In-process, the same code is ``--agent py:agents_sdk_agent:agent``
(with this folder on ``PYTHONPATH`` and the model in ``CALLBENCH_AGENT_MODEL``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, ToolExecutionConfig
from agents.mcp import MCPServerStreamableHttp
from openai import APIConnectionError, APIStatusError, AsyncOpenAI


class AgentError(Exception):
    """A failure worth one line on stderr."""


def env(name: str, required: bool = True) -> str:
    value = os.environ.get(name, "")
    if required and not value:
        raise AgentError(f"environment variable {name} is not set")
    return value


async def agent(
    instruction: str,
    mcp_url: str,
    *,
    system_prompt: str | None = None,
    model: str = "",
    max_turns: int = 12,
    max_retries: int = 2,
    model_url: str | None = None,
) -> str:
    """Run the agent once; returns its final output as text.

    The in-process entry point (``--agent py:agents_sdk_agent:agent``) and what :func:`main` runs.
    The model is ``model`` or ``CALLBENCH_AGENT_MODEL``; the agent's instructions are ``system_prompt``
    (callbench passes the suite's to ``py:`` agents that name the parameter) or
    ``CALLBENCH_SYSTEM_PROMPT``, when set. The endpoint is ``model_url`` (callbench passes the case's
    model proxy URL when it records or replays the agent's model) or ``OPENAI_BASE_URL``.
    """
    model = model or env("CALLBENCH_AGENT_MODEL", required=False)
    if not model:
        raise AgentError("no model: pass --model or set CALLBENCH_AGENT_MODEL")
    if system_prompt is None:
        system_prompt = env("CALLBENCH_SYSTEM_PROMPT", required=False)
    system = system_prompt or None  # None: no system message
    config = RunConfig(
        tracing_disabled=True,
        # The SDK starts a turn's tool calls concurrently by default; one at a time keeps the
        # server-side order equal to the order the model gave them.
        tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1),
        # A call of a tool the server does not list is answered with an error the model can read,
        # as a benchmark harness would do, instead of ending the run.
        tool_not_found_behavior="return_error_to_model",
    )
    # A tool call can wait on a slow tool: give the MCP session more than the SDK's 5 s default.
    server = MCPServerStreamableHttp({"url": mcp_url}, name="callbench", client_session_timeout_seconds=60)
    try:
        await server.connect()
    except Exception as exc:
        raise AgentError(f"cannot reach the MCP server at {mcp_url}: {first_leaf(exc)}") from exc
    llm = AsyncOpenAI(max_retries=max_retries, base_url=model_url)
    try:
        assistant = Agent(
            name="assistant",
            instructions=system,
            model=OpenAIChatCompletionsModel(model=model, openai_client=llm),
            mcp_servers=[server],
        )
        result = await Runner.run(assistant, instruction, max_turns=max_turns, run_config=config)
    except APIConnectionError as exc:
        raise AgentError(f"cannot reach the model endpoint at {llm.base_url}: {exc}") from exc
    except APIStatusError as exc:
        raise AgentError(f"the model endpoint answered HTTP {exc.status_code}: {exc.message}") from exc
    finally:
        await server.cleanup()
        await llm.close()  # in-process (py:), many cases share one event loop
    return str(result.final_output or "")


def first_leaf(error: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups, for a readable message."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="", help="model name (default: $CALLBENCH_AGENT_MODEL)")
    parser.add_argument("--max-turns", type=int, default=12, help="model turns before giving up")
    parser.add_argument("--max-retries", type=int, default=2, help="retries of a failed model request")
    args = parser.parse_args()
    # Library warnings (the SDK logs failed tool calls) would blur the one-line error on stderr.
    logging.getLogger().setLevel(logging.ERROR)
    try:
        instruction, mcp_url = env("CALLBENCH_INSTRUCTION"), env("CALLBENCH_MCP_URL")
        run = agent(
            instruction, mcp_url, model=args.model, max_turns=args.max_turns, max_retries=args.max_retries
        )
        answer = asyncio.run(run)
    except Exception as exc:  # noqa: BLE001 - an agent reports any failure as one line and exits 1
        leaf = first_leaf(exc)
        reason = str(leaf) if isinstance(leaf, AgentError) else f"{type(leaf).__name__}: {leaf}"
        print(f"agents_sdk_agent: error: {reason}".replace("\n", " "), file=sys.stderr)
        return 1
    if answer_file := os.environ.get("CALLBENCH_ANSWER_FILE"):
        with open(answer_file, "w", encoding="utf-8") as handle:
            handle.write(answer)
    print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
