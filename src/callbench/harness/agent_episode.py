"""The in-app harness: one case's episode played by the user's agent under test over MCP.

The case's offered tools are served at a URL of its own (:class:`~callbench.mcp.serve.CaseToolServer`);
every call the agent makes there goes through :func:`~callbench.harness.loop.execute_call`, the same
function the offline loop uses, so it is checked, executed, recorded and answered exactly as there.
The agent's own loop decides everything else (prompt, recovery, when to stop), which is what this
mode measures; callbench sees calls, not rounds, so rounds are reconstructed from call timing for
display only.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.executors.base import ExecutorSession
from callbench.harness.loop import Episode, execute_call
from callbench.harness.observer import Observers
from callbench.mcp.serve import CaseToolServer, ToolReply
from callbench.providers.agent_under_test import AgentRequest, AgentResult, AgentRunner
from callbench.types.messages import ToolCall
from callbench.types.run_options import DEFAULT_SIZE_LIMITS
from callbench.types.textcap import cap_text
from callbench.types.trace import AgentRun, RoundInfo, Trace

if TYPE_CHECKING:
    from callbench.providers.model_proxy import AgentModelProxy

ROUND_GAP_S = 0.05
"""Calls that start within this long of the previous call's end (or while it runs) are shown as one
round: an agent's parallel calls, executed back to back. Display only; no scorer reads rounds."""


class CaseEndpoint:
    """The MCP tool handler of one case: serialises the agent's calls into the case's trace.

    An executor session runs calls one at a time in arrival order (a lock), as the offline loop does.
    An infrastructure failure inside a call (a tool bug, a broken executor) answers that call with
    "harness failure" and is kept (the first one) and re-raised by :meth:`raise_failure` after the
    agent finishes: the case becomes an error record, not a score. It never changes the answers to
    the calls after it: they are executed and answered as they would be without it.
    """

    def __init__(self, episode: Episode, session: ExecutorSession) -> None:
        self.episode = episode
        self.session = session
        self.failure: BaseException | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)

    async def handle(self, name: str, arguments: dict[str, Any]) -> ToolReply:
        """Execute one call the agent made and answer it with the offline loop's text."""
        arrived = time.time()
        raw = json.dumps(arguments, ensure_ascii=False)
        call = ToolCall(id=f"mcp_{next(self._ids)}", name=name, arguments_raw=raw, arguments=arguments)
        async with self._lock:
            try:
                record, text = await execute_call(self.episode, self.session, call, round_index=0)
            except Exception as exc:  # a fault of this call only: the next one is answered as usual
                if self.failure is None:
                    self.failure = exc
                return ToolReply("callbench could not execute this call (harness failure)", is_error=True)
        record.started_at = arrived
        return ToolReply(text, is_error=record.execution in ("error", "rejected", "not_executed"))

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure


ANSWER_FILE = ".callbench-answer.txt"


def agent_folder(workdir: Path) -> Path:
    """The agent's own per-case folder: beside the executor's, never inside it (file tools and state
    checks of the executor must not see the agent's files)."""
    return workdir.with_name(workdir.name + "-agent")


def request_for(episode: Episode, url: str, workdir: Path) -> AgentRequest:
    """The agent's request for one case (environment, JSON file, POST body)."""
    case = episode.case
    system = case.system if case.system is not None else episode.system_prompt
    folder = agent_folder(workdir)
    return AgentRequest(
        instruction=case.prompt_text(),
        system_prompt=system or "",
        mcp_url=url,
        mcp_stdio=[sys.executable, "-m", "callbench.mcp.bridge", url],
        case_id=case.key,
        workdir=str(folder),
        answer_file=str(folder / ANSWER_FILE),
    )


async def run_agent_episode(
    episode: Episode,
    agent: AgentRunner,
    session: ExecutorSession,
    server: CaseToolServer,
    workdir: Path,
    observers: Observers | None = None,
    *,
    model_proxy: AgentModelProxy | None = None,
    trial: int = 1,
) -> Trace:
    """Serve the case's tools, run the agent on it, and return the trace with the agent's outcome.

    With ``model_proxy`` the agent's model requests go through callbench (its own base URL for the
    case; :mod:`callbench.harness.agent_model`): they become the case's rounds and usage.

    Raises what broke callbench's side (the endpoint, the executor, the agent's model endpoint or its
    recording): the engine makes it an error record. The agent's own failures are recorded on the
    trace and scored.
    """
    trace = episode.trace
    endpoint = CaseEndpoint(episode, session)
    url = server.open(episode.offered, endpoint.handle, label=episode.case.key)
    route = None
    try:
        request = request_for(episode, url, workdir)
        if model_proxy is not None:
            from callbench.harness.agent_model import open_route

            places = {"{mcp_url}": url, "{agent_workdir}": request.workdir, "{workdir}": str(workdir)}
            route = open_route(model_proxy, episode.case.key, trial, places)
            request = replace(request, model_url=route.openai_url, anthropic_url=route.anthropic_url)
        result = await agent.run(request, episode.case.timeout_s)
    finally:
        server.close(url)
        if route is not None and model_proxy is not None:
            model_proxy.close(route)  # its tape written; it answers no more
        shutil.rmtree(agent_folder(workdir), ignore_errors=True)
    endpoint.raise_failure()
    record_outcome(trace, agent, result, url, episode.size_limits)
    served = False
    if route is not None:
        from callbench.harness.agent_model import apply_exchanges

        served = apply_exchanges(trace, route, episode.size_limits)
    if not served:
        trace.rounds = reconstruct_rounds(trace)
        if trace.truncated and "final_text" in trace.truncated:  # the answer round holds the same text
            trace.note_truncated(f"rounds[{len(trace.rounds) - 1}].text", trace.truncated["final_text"])
    if observers is not None:
        for info in trace.rounds:
            calls = [c for c in trace.calls if c.call_id in info.call_ids]
            observers.emit_round(episode.case, info, calls)
    if route is not None:
        from callbench.harness.agent_model import model_fault

        fault = model_fault(trace, route)
        if fault is not None:  # the recording or the endpoint failed: not the agent's doing
            raise fault
    return trace


def record_outcome(
    trace: Trace, agent: AgentRunner, result: AgentResult, url: str, limits: Mapping[str, int] | None = None
) -> None:
    """Put the agent's outcome on the trace: its answer and stderr within their size limits (a head
    and a tail over them, the cut noted in ``trace.truncated``)."""
    limits = limits or DEFAULT_SIZE_LIMITS
    trace.final_text, size = cap_text(result.answer, limits["answer"])
    trace.note_truncated("final_text", size)
    stderr_tail, size = cap_text(result.stderr_tail, limits["stderr"])
    trace.note_truncated("agent.stderr_tail", size)
    trace.stop_reason = result.outcome
    trace.agent = AgentRun(
        agent=agent.spec,
        outcome=result.outcome,
        exit_code=result.exit_code,
        stderr_tail=stderr_tail,
        message=result.message,
        duration_ms=result.duration_ms,
        mcp_url=url,
        details=result.details,
    )


def reconstruct_rounds(trace: Trace) -> list[RoundInfo]:
    """Group calls into display rounds by timing (:data:`ROUND_GAP_S`); the last round holds the
    final answer. Each call's ``round`` is set to its group."""
    rounds: list[RoundInfo] = []
    last_end: float | None = None
    for call in trace.calls:
        started = call.started_at or 0.0
        if not rounds or last_end is None or started - last_end > ROUND_GAP_S:
            rounds.append(RoundInfo(index=len(rounds) + 1, started_at=started, reconstructed=True))
        rounds[-1].call_ids.append(call.call_id)
        call.round = rounds[-1].index
        last_end = started + call.duration_ms / 1000
    answer = RoundInfo(index=len(rounds) + 1, started_at=last_end or time.time(), reconstructed=True)
    answer.text = trace.final_text
    rounds.append(answer)
    return rounds
