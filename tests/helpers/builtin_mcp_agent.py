"""Agents under test for tests: callbench's built-in agents (oracle, noisy...) driven by a minimal
agent loop of their own that calls the case's tools over MCP.

``py:builtin_mcp_agent:oracle_starter`` (the module is on pytest's ``pythonpath``) plays the starter
suite's gold path through the real MCP endpoint, so its verdicts must equal the oracle's in
callbench's own loop. The loop here is deliberately plain, like a user's: send the instruction,
execute every call over MCP, feed the text results back, stop when the model answers.
"""

from __future__ import annotations

from typing import Any

from mcp import Client

from callbench.providers.agents import noisy, oracle
from callbench.suites.resolve import load_suite
from callbench.suites.suite import Suite
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message

MAX_ROUNDS = 12
_SUITES: dict[str, Suite] = {}


def suite_named(spec: str) -> Suite:
    if spec not in _SUITES:
        _SUITES[spec] = load_suite(spec)
    return _SUITES[spec]


async def play(suite_spec: str, model_spec: str, instruction: str, mcp_url: str) -> str:
    """Play the case whose instruction this is with a built-in agent, over MCP; return its answer."""
    suite = suite_named(suite_spec)
    case = next(c for c in suite.cases if c.prompt_text() == instruction)
    kind, _, arg = model_spec.partition(":")
    player = {"oracle": oracle, "noisy": noisy}[kind].make_provider(arg).for_case(case)
    async with Client(mcp_url) as client:
        listed = (await client.list_tools()).tools
        # The built-in agents draw their mistakes from the contracts (schemas, read-only flags): the
        # listed names are mapped back to the suite's contracts so that they make the same calls as
        # in callbench's loop; the listing itself is checked in tests/mcp/test_case_server.py.
        tools = [suite.registry.find(t.name) or _listed(t) for t in listed]
        messages = (
            [Message.system(suite.system_prompt)] if suite.system_prompt else []
        ) + case.start_messages()
        for _ in range(MAX_ROUNDS):
            turn = await player.generate(messages, tools, GenerationSettings())
            messages.append(Message.assistant(turn))
            if not turn.tool_calls:
                return turn.text
            for call in turn.tool_calls:
                result = await client.call_tool(call.name, call.arguments or {})
                messages.append(Message.tool(call, _text(result)))
    return ""


def _listed(tool: Any) -> ToolContract:
    return ToolContract(
        name=tool.name, description=tool.description or "", parameters=tool.input_schema, strict=False
    )


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def oracle_starter(instruction: str, mcp_url: str) -> str:
    return await play("starter", "oracle", instruction, mcp_url)


async def noisy_starter(instruction: str, mcp_url: str) -> str:
    return await play("starter", "noisy:2", instruction, mcp_url)


async def oracle_genomics(instruction: str, mcp_url: str) -> str:
    return await play("genomics", "oracle", instruction, mcp_url)


async def noisy_genomics(instruction: str, mcp_url: str) -> str:
    return await play("genomics", "noisy:2", instruction, mcp_url)
