"""``callbench serve-tools``: one case's tools as an MCP server for a person (or any MCP client).

The case is prepared exactly as a run prepares it for an agent under test (same offered tools, same
executor, same :class:`~callbench.harness.agent_episode.CaseEndpoint`), so what a person sees here is
what ``--agent`` runs see. Every call is logged as it happens; when the server stops, the calls made
are scored by the suite's scorers (without a final answer: answer checks report it missing).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.executors.base import ExecutorSession, resolve_executor
from callbench.harness.agent_episode import CaseEndpoint, reconstruct_rounds
from callbench.harness.loop import Episode
from callbench.harness.modes import AGENT_UNDER_TEST, ModePolicy
from callbench.harness.prepare import build_scorers, check_selection
from callbench.mcp.serve import CaseToolServer, ToolReply, serve_stdio
from callbench.suites.suite import Suite
from callbench.types.verdict import Verdict

Log = Callable[[str], None]


def stderr_log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass
class ServedCase:
    """A case opened for serving: its episode (the trace fills as calls arrive) and executor session."""

    suite: Suite
    episode: Episode
    session: ExecutorSession
    endpoint: CaseEndpoint
    workdir: Path
    ended: bool = False
    """The session was ended (:meth:`end_session` or :meth:`close`)."""

    @property
    def offered_names(self) -> list[str]:
        return [t.name for t in self.episode.offered]

    def handler(self, log: Log) -> Callable[[str, dict[str, Any]], Any]:
        """The endpoint's handler, logging one line per call."""

        async def logged(name: str, arguments: dict[str, Any]) -> ToolReply:
            reply = await self.endpoint.handle(name, arguments)
            call = self.episode.trace.calls[-1]
            args = json.dumps(arguments, ensure_ascii=False)
            log(f"call {call.index + 1}: {name} {args} -> {call.execution}: {reply.text[:200]}")
            return reply

        return logged

    async def score(self, tiers: Sequence[str] = ()) -> dict[str, Verdict]:
        """The suite's verdicts on the calls made so far."""
        trace = self.episode.trace
        trace.rounds = reconstruct_rounds(trace)
        trace.final_state = self.session.snapshot()
        case = self.episode.case
        return {name: await s.ascore(case, trace) for name, s in build_scorers(self.suite, tiers).items()}

    async def end_session(self) -> None:
        """End the session on the loop that served it: what only an awaited stop can release (a tool
        server started for this case) is released with the rest."""
        if not self.ended:
            self.ended = True
            await self.session.aclose()

    def close(self) -> None:
        if not self.ended:
            self.ended = True
            self.session.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def open_case(suite: Suite, case_id: str, k: int | str | None = None) -> ServedCase:
    """Prepare one case of ``suite`` for serving (one-line UserError for an unknown or ambiguous id)."""
    check_selection([suite], [case_id])
    cases = suite.select([case_id])
    if len(cases) != 1:
        ids = ", ".join(c.id for c in cases[:6])
        raise UserError(
            f"--case {case_id!r} matches {len(cases)} cases of suite {suite.name!r} ({ids}); give one"
        )
    case = cases[0]
    offered = suite.offered_tools(case, k)
    policy = ModePolicy(AGENT_UNDER_TEST)
    episode = Episode(case, offered, policy, suite.system_prompt, registry=suite.registry_for(case))
    workdir = Path(tempfile.gettempdir()) / f"callbench-serve-{os.getpid()}-{time.monotonic_ns()}"
    session = resolve_executor(suite.executor_name(case)).start(case, workdir, suite)
    return ServedCase(suite, episode, session, CaseEndpoint(episode, session), workdir)


async def serve_http(served: ServedCase, port: int, log: Log, stop: asyncio.Event | None = None) -> None:
    """Serve over streamable HTTP on 127.0.0.1 until ``stop`` is set (or the task is cancelled)."""
    async with CaseToolServer(port=port) as server:
        url = server.open(served.episode.offered, served.handler(log), label=served.episode.case.key)
        log(f"serving {served.episode.case.key}: {len(served.offered_names)} tools at {url}")
        log(f"instruction: {served.episode.case.prompt_text()}")
        log("stop with Ctrl-C (or SIGTERM); the calls made are then scored")
        try:
            await (stop or asyncio.Event()).wait()
        finally:
            await asyncio.shield(served.end_session())


async def until_terminated(work: Awaitable[None]) -> None:
    """Await ``work``; SIGTERM ends it as Ctrl-C does, so the calls made are still scored.

    docker, systemd, IDEs and the MCP Inspector stop a server with SIGTERM, whose default action
    ends the process on the spot. Here it cancels the serving task, as asyncio does on the first
    Ctrl-C, and the wait returns normally (where the loop cannot take signal handlers, as on
    Windows, SIGTERM keeps its default action).
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopped = False

    def stop() -> None:
        nonlocal stopped
        if task is not None and not stopped:
            stopped = True
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (NotImplementedError, RuntimeError, ValueError):
        # asyncio raises NotImplementedError on Windows loops, RuntimeError/ValueError off the main
        # thread: SIGTERM keeps its default action there, and the work runs as it is.
        await work
        return
    try:
        await work
    except asyncio.CancelledError:
        if not stopped or task is None or task.uncancel() > 0:
            raise  # cancelled by something else as well
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def serve_over_stdio(served: ServedCase, log: Log) -> None:
    """Serve over stdin/stdout until the client closes them (log lines go to stderr)."""
    log(f"serving {served.episode.case.key} over stdio: {len(served.offered_names)} tools")
    try:
        await serve_stdio(served.episode.offered, served.handler(log), label=served.episode.case.key)
    finally:
        await asyncio.shield(served.end_session())
