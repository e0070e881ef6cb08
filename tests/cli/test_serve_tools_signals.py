"""``callbench serve-tools`` stopped by SIGTERM (docker, systemd, IDEs and the MCP Inspector stop it so)
scores the calls made exactly as Ctrl-C does (issue 33, item 9): before, it died without a word."""

from __future__ import annotations

import asyncio
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from callbench.mcp.client import McpConnection


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)


async def _call_weather(url: str) -> str:
    async with McpConnection(url) as connection:
        reply = await connection.call_tool("get_weather", {"city": "Paris"})
    return reply.text


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_serve_tools_scores_the_calls_made(stop: signal.Signals) -> None:
    command = [sys.executable, "-m", "callbench.cli.main", "serve-tools", "--suite", "starter"]
    live = subprocess.Popen(
        [*command, "--case", "weather_paris", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(live.stderr, lines), daemon=True).start()
    seen: list[str] = []
    url = None
    deadline = time.monotonic() + 60
    try:
        while url is None:
            assert time.monotonic() < deadline and live.poll() is None, "".join(seen)
            try:
                seen.append(lines.get(timeout=0.2))
            except queue.Empty:
                continue
            found = re.search(r" at (http://127\.0\.0\.1:\d+/\S+)", seen[-1])
            url = found.group(1) if found else None
        assert '"city": "Paris"' in asyncio.run(asyncio.wait_for(_call_weather(url), 60))
        live.send_signal(stop)
        live.wait(timeout=60)
    finally:
        if live.poll() is None:
            live.kill()
    time.sleep(0.2)  # the reader thread takes the last lines
    while not lines.empty():
        seen.append(lines.get())
    err = "".join(seen)
    assert live.returncode == 0, err  # what Ctrl-C has always given: the calls were scored
    assert "Traceback" not in err, err
    assert "call 1: get_weather" in err and "1 call(s) made; verdicts on them" in err, err
    assert re.search(r"native-function-contract: (PASS|FAIL)", err), err
