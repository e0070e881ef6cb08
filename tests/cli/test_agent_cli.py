"""``--agent`` and ``serve-tools`` through the installed console script, as a newcomer types them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fresh_cli import FreshCli, assert_clean_error
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

AGENT = """
import asyncio, os
from mcp import Client

async def main():
    async with Client(os.environ["CALLBENCH_MCP_URL"]) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        if "get_weather" in tools:
            await client.call_tool("get_weather", {"city": "Paris"})
    print("It is 14 degrees and raining in Paris.")

asyncio.run(main())
"""


def test_an_agent_run_works_from_the_installed_script(fresh_cli: FreshCli, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    python = fresh_cli.script.parent / "python"  # the fresh venv's Python: mcp must be installed there
    out = tmp_path / "run"
    argv = ["run", "--suite", "starter", "--case", "weather_paris", "--agent", f"cmd:{python} {agent}"]
    done = fresh_cli.run(*argv, "-o", str(out), "--progress", "quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agent-under-test" in done.stdout and "agent:cmd:" in done.stdout
    record = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert record["harness_mode"] == "agent-under-test"
    assert record["verdicts"]["task-completion-execution"]["passed"] is True
    assert record["trace"]["agent"]["exit_code"] == 0


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--agent", "cmd:my-agnet --fast"], "command 'my-agnet' not found"),
        (["--agent", "http:http://127.0.0.1:9/run"], "nothing accepts connections at 127.0.0.1:9"),
        (["--agent", "python agent.py"], "expected cmd:COMMAND, http:URL or py:module:function"),
        (["--agent", "py:missing_agent_module:run"], "cannot import module 'missing_agent_module'"),
        (["--model", "oracle", "--agent", "cmd:true"], "--agent replaces --model"),
        (["--mode", "agent-under-test"], "--mode agent-under-test needs --agent SPEC"),
        (["--agent", "cmd:true", "--mode", "oracle-assisted"], "does not apply to --agent"),
    ],
)
def test_agent_mistakes_are_one_line_before_anything_runs(
    fresh_cli: FreshCli, tmp_path: Path, argv: list[str], says: str
) -> None:
    out = tmp_path / "run"
    stderr = assert_clean_error(fresh_cli.run("run", "--suite", "starter", *argv, "-o", str(out)), 2, says)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert not out.exists()


def test_serve_tools_mistakes_are_one_line(fresh_cli: FreshCli) -> None:
    typo = fresh_cli.run("serve-tools", "--suite", "starter", "--case", "weather_pari")
    assert_clean_error(typo, 2, ["'weather_pari'", "weather_paris"])
    assert_clean_error(fresh_cli.run("serve-tools", "--case", "weather_paris"), 2, "--suite")
    assert_clean_error(fresh_cli.run("serve-tools", "--suite", "nosuch", "--case", "x"), 2, "nosuch")


def test_serve_tools_over_stdio_answers_and_scores_the_calls(fresh_cli: FreshCli, tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"

    async def session() -> list[tuple[str, bool]]:
        params = StdioServerParameters(
            command=str(fresh_cli.script),
            args=["serve-tools", "--suite", "starter", "--case", "weather_paris", "--stdio"],
            cwd=str(fresh_cli.scratch),
        )
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert "get_weather" in names
                replies = []
                for name, args in (("get_weather", {"city": "Paris"}), ("get_weather", {"town": "Paris"})):
                    result = await client.call_tool(name, args)
                    replies.append((result.content[0].text, bool(result.is_error)))
                return replies

    (good, good_error), (bad, bad_error) = asyncio.run(asyncio.wait_for(session(), 120))
    assert not good_error and json.loads(good)["city"] == "Paris"
    assert bad_error and "Invalid call" in bad
    text = log.read_text()
    assert "call 1: get_weather" in text and "-> rejected" in text, text
    assert "2 call(s) made" in text and "native-function-contract: FAIL" in text, text
    assert "Traceback" not in text


def test_the_serve_tools_help_names_the_transports(fresh_cli: FreshCli) -> None:
    done = fresh_cli.run("serve-tools", "--help")
    assert done.returncode == 0 and "--stdio" in done.stdout and "--port" in done.stdout
