"""A tool bug in a case never changes what the case's later calls answer (issue 33, item 3).

A tool implementation that raises something other than ``ToolError`` is a harness fault: the case is
an error record (``tool_bug:...``, excluded from accuracy, re-run by ``--resume``). The calls after it
are still executed and answered as they would be without it, over MCP too (the endpoint an agent
under test or a person using ``serve-tools`` calls): ``get_weather`` after a crashing ``write_file``
answers the weather, not "harness failure".
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from mcp import Client

import callbench
from callbench.benchmarks.starter.world import BINDINGS, INLINE_TOOLS, StarterWorld, make_world
from callbench.errors import ToolBug
from callbench.executors.python import PythonExecutor
from callbench.harness.serve_case import open_case
from callbench.mcp.serve import CaseToolServer
from callbench.suites.resolve import load_suite
from callbench.suites.suite import Suite

PARIS = {"city": "Paris", "temperature": 14.0, "unit": "celsius", "condition": "light rain"}


def crashing_write_file(world: StarterWorld, filename: str, content: str) -> dict[str, Any]:
    raise IsADirectoryError(21, "Is a directory", filename)


def crashing_starter() -> Suite:
    """The starter suite with a ``write_file`` that crashes (a bug in the tool, not the model's call)."""
    suite = load_suite("starter")
    bindings = {**BINDINGS, "write_file": crashing_write_file}
    return dataclasses.replace(suite, executor=PythonExecutor(bindings, make_world, inline=INLINE_TOOLS))


def test_over_the_case_endpoint_calls_after_a_tool_bug_answer_as_without_it() -> None:
    served = open_case(crashing_starter(), "weather_paris")
    log: list[str] = []

    async def scenario() -> list[Any]:
        async with CaseToolServer() as server:
            url = server.open(served.episode.offered, served.handler(log.append))
            async with Client(url) as client:
                return [
                    await client.call_tool("get_weather", {"city": "Paris"}),
                    await client.call_tool("write_file", {"filename": "notes.txt", "content": "hi"}),
                    await client.call_tool("get_weather", {"city": "Paris"}),
                    await client.call_tool("get_weather", {"city": "Atlantis"}),  # the model's own error
                ]

    try:
        before, crash, after, unknown = asyncio.run(scenario())
    finally:
        served.close()
    assert crash.is_error and "harness failure" in crash.content[0].text
    assert not before.is_error and json.loads(before.content[0].text) == PARIS
    assert not after.is_error and json.loads(after.content[0].text) == PARIS
    assert unknown.is_error and "no weather data for 'Atlantis'" in unknown.content[0].text
    calls = served.episode.trace.calls
    assert [c.execution for c in calls] == ["ok", "not_executed", "ok", "error"]
    assert calls[2].result == PARIS
    # The bug is still the harness's: the case becomes an error record once the agent is done.
    assert isinstance(served.endpoint.failure, ToolBug)
    assert served.endpoint.failure.error_type == "IsADirectoryError"


AGENT = """
import asyncio, os
from mcp import Client

async def main():
    async with Client(os.environ["CALLBENCH_MCP_URL"]) as client:
        await client.call_tool("write_file", {"filename": "notes.txt", "content": "hi"})
        weather = await client.call_tool("get_weather", {"city": "Paris"})
        print(weather.content[0].text)

asyncio.run(main())
"""


def test_an_agent_run_keeps_the_later_calls_real_and_records_the_bug(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(AGENT))
    result = callbench.run(
        crashing_starter(),
        agent=f"cmd:{sys.executable} {script}",
        out_dir=tmp_path / "out",
        case_ids=["weather_paris"],
        progress="quiet",
    )
    (record,) = result.records
    assert record.status == "error" and record.error is not None
    assert record.error.type == "tool_bug:IsADirectoryError"
    calls = record.trace.calls
    assert [(c.tool, c.execution) for c in calls] == [("write_file", "not_executed"), ("get_weather", "ok")]
    assert calls[1].result == PARIS
