"""The in-app harness: one case's episode played by the user's agent under test over MCP.

The case's offered tools are served at a URL of its own (:class:`~callbench.mcp.serve.CaseToolServer`);
every call the agent makes there goes through :func:`~callbench.harness.loop.execute_call`, the same
function the offline loop uses, so it is checked, executed, recorded and answered exactly as there.
The agent's own loop decides everything else (prompt, recovery, when to stop), which is what this
mode measures; callbench sees calls, not rounds, so rounds are reconstructed from call timing for
display only.

A conversation case (one with a user, docs/conversations.md) keeps its tool server, executor session
and agent folder for the whole conversation, and runs the agent once per agent turn
(:func:`converse`): the user's latest turn is the request's instruction, the conversation so far its
``messages``, and the agent's answer its message to the user, whom callbench plays with the same
scripted or simulated user as the offline loop (:func:`~callbench.harness.loop.user_speaks`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.executors.base import ExecutorSession
from callbench.harness.loop import Episode, execute_call, user_speaks
from callbench.harness.modes import round_override
from callbench.harness.observer import Observers
from callbench.mcp.serve import CaseToolServer, ToolReply
from callbench.providers.agent_under_test import AgentRequest, AgentResult, AgentRunner
from callbench.types.conversation import AGENT_STOP_SIGNALS
from callbench.types.messages import Message, ToolCall, Usage
from callbench.types.run_options import DEFAULT_SIZE_LIMITS
from callbench.types.textcap import cap_text
from callbench.types.trace import AgentRun, RoundInfo, Trace, TraceCall

if TYPE_CHECKING:
    from callbench.providers.model_proxy import AgentModelProxy, CaseModelRoute
    from callbench.telemetry.receiver import SpanReceiver

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
        self.heard: dict[str, str] = {}
        """What the agent heard for each call (by call id): the conversation's history keeps it."""
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
                return ToolReply(HARNESS_FAILURE, is_error=True)
        record.started_at = arrived
        self.heard[call.id] = text
        return ToolReply(text, is_error=record.execution in ("error", "rejected", "not_executed"))

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure


HARNESS_FAILURE = "callbench could not execute this call (harness failure)"
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
    span_receiver: SpanReceiver | None = None,
) -> Trace:
    """Serve the case's tools, run the agent on it, and return the trace with the agent's outcome.

    With ``model_proxy`` the agent's model requests go through callbench (its own base URL for the
    case; :mod:`callbench.harness.agent_model`): they become the case's rounds and usage. With
    ``span_receiver`` (``--agent-otel``) the agent is given an OTLP endpoint of the case's own, and the
    spans it sends there go in the record (:mod:`callbench.telemetry.agent_spans`).

    Raises what broke callbench's side (the endpoint, the executor, the agent's model endpoint or its
    recording): the engine makes it an error record. The agent's own failures are recorded on the
    trace and scored.
    """
    trace = episode.trace
    endpoint = CaseEndpoint(episode, session)
    url = server.open(episode.offered, endpoint.handle, label=episode.case.key)
    route = None
    spans_route = None
    received: list[Any] = []
    protocol: str | None = None
    conversation: Conversation | None = None
    try:
        request = request_for(episode, url, workdir)
        if model_proxy is not None:
            from callbench.harness.agent_model import open_route

            places = {"{mcp_url}": url, "{agent_workdir}": request.workdir, "{workdir}": str(workdir)}
            route = open_route(model_proxy, episode.case.key, trial, places)
            request = replace(request, model_url=route.openai_url, anthropic_url=route.anthropic_url)
        if span_receiver is not None:
            spans_route = span_receiver.open(episode.case.key, trial)
            request = replace(request, otel_endpoint=spans_route.endpoint)
        if episode.user is None:
            result = await agent.run(request, episode.case.timeout_s)
        else:  # the server, the session and the agent's folder stay up for the whole conversation
            conversation = await converse(episode, agent, session, endpoint, request)
            result = conversation.outcome()
        if spans_route is not None and span_receiver is not None:  # an agent service exports late
            received = await span_receiver.collect(spans_route, 0.5 if agent.kind == "http" else 0.0)
    finally:
        if spans_route is not None and span_receiver is not None:
            span_receiver.discard(spans_route)
        protocol = server.protocol_version(url)
        server.close(url)
        if route is not None and model_proxy is not None:
            model_proxy.close(route)  # its tape written; it answers no more
        shutil.rmtree(agent_folder(workdir), ignore_errors=True)
    endpoint.raise_failure()
    if conversation is not None:
        stop = trace.stop_reason  # the conversation's (user_stop, agent_stop, max_turns...)
        record_outcome(trace, agent, result, url, episode.size_limits)
        trace.stop_reason = stop
        conversation_rounds(trace, conversation, route, episode.size_limits)
        if spans_route is not None:  # a conversation's rounds are its turns': the spans go in the details
            from callbench.telemetry.agent_spans import apply_agent_spans

            apply_agent_spans(trace, received, rejected=spans_route.rejected, make_rounds=False)
    else:
        record_outcome(trace, agent, result, url, episode.size_limits)
        served = False
        if route is not None:
            from callbench.harness.agent_model import apply_exchanges

            served = apply_exchanges(trace, route, episode.size_limits)
        if spans_route is not None:  # the agent's own account: its rounds when the proxy gave none
            from callbench.telemetry.agent_spans import apply_agent_spans

            reported = apply_agent_spans(
                trace,
                received,
                rejected=spans_route.rejected,
                make_rounds=not served,
                limits=episode.size_limits,
            )
            served = served or reported
        if not served:
            trace.rounds = reconstruct_rounds(trace)
            if trace.truncated and "final_text" in trace.truncated:  # the answer round holds the same text
                trace.note_truncated(f"rounds[{len(trace.rounds) - 1}].text", trace.truncated["final_text"])
    if protocol is not None and trace.agent is not None:  # what the agent's MCP client spoke
        trace.agent.details["mcp_protocol_version"] = protocol
    if observers is not None:
        for info in trace.rounds:
            calls = [c for c in trace.calls if c.call_id in info.call_ids]
            observers.emit_round(episode.case, info, calls)
    if route is not None:
        from callbench.harness.agent_model import model_fault

        fault = model_fault(trace, route)
        if fault is not None:  # the recording or the endpoint failed: not the agent's doing
            raise fault
    if conversation is not None and conversation.fault is not None:
        raise conversation.fault  # the simulated user failed (user_simulator:<kind>): never the agent's
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
    rounds = timing_rounds(trace.calls)
    last = trace.calls[-1] if trace.calls else None
    last_end = (last.started_at or 0.0) + last.duration_ms / 1000 if last is not None else None
    answer = RoundInfo(index=len(rounds) + 1, started_at=last_end or time.time(), reconstructed=True)
    answer.text = trace.final_text
    rounds.append(answer)
    return rounds


def timing_rounds(calls: list[TraceCall]) -> list[RoundInfo]:
    """The calls grouped into display rounds by timing: a call that starts within :data:`ROUND_GAP_S`
    of the previous call's end joins its round. Each call's ``round`` is set to its group."""
    rounds: list[RoundInfo] = []
    last_end: float | None = None
    for call in calls:
        started = call.started_at or 0.0
        if not rounds or last_end is None or started - last_end > ROUND_GAP_S:
            rounds.append(RoundInfo(index=len(rounds) + 1, started_at=started, reconstructed=True))
        rounds[-1].call_ids.append(call.call_id)
        call.round = rounds[-1].index
        last_end = started + call.duration_ms / 1000
    return rounds


# --- conversations: the agent run once per agent turn, callbench's user answering ------------------


@dataclass
class AgentTurn:
    """One agent turn of a conversation: one run of the agent, and the calls it made meanwhile."""

    number: int
    result: AgentResult
    first_call: int
    """Index in ``trace.calls`` of the turn's first call; ``last_call`` is one past its last."""
    last_call: int
    started_at: float
    ended_at: float


@dataclass
class Conversation:
    """What :func:`converse` played: the agent's turns, and a fault of callbench's side that ended it
    (raised once the trace is recorded: the case becomes an error record)."""

    timeout_s: float
    turns: list[AgentTurn] = field(default_factory=list)
    fault: Exception | None = None

    def outcome(self) -> AgentResult:
        """The agent's outcome over the whole conversation: its last turn's (the conversation ended
        there), with the time of every turn and each turn's stderr."""
        if not self.turns:  # the user ended the conversation before the agent's first turn
            return AgentResult("answer", message="the user ended the conversation before the agent spoke")
        last = self.turns[-1].result
        stderr = "".join(
            f"[callbench: turn {t.number}]\n{t.result.stderr_tail.rstrip()}\n"
            for t in self.turns
            if t.result.stderr_tail.strip()
        )
        message = last.message
        if message and last.outcome != "answer":
            message = f"turn {self.turns[-1].number}: {message}"
            if last.outcome == "agent_timeout":
                message += f" (the {self.timeout_s:g}s limit is the agent's time over all its turns)"
        return replace(
            last,
            stderr_tail=stderr,
            message=message,
            duration_ms=sum(t.result.duration_ms for t in self.turns),
            details={**last.details, "turns": len(self.turns)},
        )


async def converse(
    episode: Episode,
    agent: AgentRunner,
    session: ExecutorSession,
    endpoint: CaseEndpoint,
    request: AgentRequest,
) -> Conversation:
    """Play a conversation case with the agent under test, turn by turn, as the offline loop plays it
    with a model: the user opens (or the case's messages do), the agent is run with the user's turn
    and the conversation so far, its answer is its message, the user answers, and so on until a stop
    signal (``user_stop``, ``agent_stop``), the user's turn budget (``max_turns``), the round budget
    counted in agent turns (``max_rounds``) or an agent failure (its outcome). The case's time limit
    is the agent's own time over all its turns (the user's time is not counted)."""
    case, trace = episode.case, episode.trace
    played = Conversation(case.timeout_s)
    budget = episode.policy.round_budget(len(episode.expected), round_override(case))
    spent = 0.0
    try:
        if case.user_opens and await user_speaks(episode, session, 0):
            return played
        for number in range(1, budget + 1):
            first, started, clock = len(trace.calls), time.time(), time.perf_counter()
            left = case.timeout_s - spent
            if left <= 0:
                message = f"the agent used the case time limit of {case.timeout_s:g}s before this turn"
                result = AgentResult("agent_timeout", message=message)
            else:
                asked = replace(
                    request,
                    instruction=last_user_text(episode.messages),
                    messages=conversation_json(episode.messages),
                    turn=number,
                )
                result = await agent.run(asked, left)
            spent += time.perf_counter() - clock
            played.turns.append(AgentTurn(number, result, first, len(trace.calls), started, time.time()))
            episode.messages.extend(heard_messages(trace.calls[first:], endpoint.heard))
            episode.messages.append(Message(role="assistant", content=result.answer))
            if endpoint.failure is not None:  # callbench's failure: an error record, raised by the caller
                return played
            if result.outcome != "answer":
                trace.stop_reason = result.outcome
                return played
            if any(signal in result.answer for signal in AGENT_STOP_SIGNALS):
                trace.stop_reason = "agent_stop"
                return played
            # ``after_round`` is the agent's turn here; conversation_rounds makes it the turn's round
            if await user_speaks(episode, session, number):
                return played
        trace.stop_reason = "max_rounds"
    except Exception as exc:  # noqa: BLE001 - the user's side failed: raised once the trace is kept
        played.fault = exc
    return played


def last_user_text(messages: list[Message]) -> str:
    """The user's latest message: what the agent is asked this turn."""
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def conversation_json(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation as the agent receives it (``messages``): user and assistant messages with
    their text, the agent's calls as an assistant message's ``tool_calls`` (``id``, ``name``,
    ``arguments``) followed by one ``tool`` message per call with what it heard. No system message:
    that is the request's ``system_prompt``."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": call.id,
                    "name": call.name,
                    "arguments": call.arguments if call.arguments is not None else call.arguments_raw,
                }
                for call in message.tool_calls
            ]
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id
            if message.name is not None:
                item["name"] = message.name
        out.append(item)
    return out


def heard_messages(calls: list[TraceCall], heard: Mapping[str, str]) -> list[Message]:
    """The agent's calls of one turn as conversation messages: each call, then what it heard."""
    out: list[Message] = []
    for record in calls:
        call = ToolCall(
            id=record.call_id,
            name=record.tool,
            arguments_raw=record.arguments_raw,
            arguments=record.arguments,
        )
        out.append(Message(role="assistant", content="", tool_calls=[call]))
        out.append(Message.tool(call, heard.get(record.call_id, HARNESS_FAILURE)))
    return out


def conversation_rounds(
    trace: Trace, conversation: Conversation, route: CaseModelRoute | None, limits: Mapping[str, int]
) -> None:
    """The trace's rounds for a conversation, turn by turn: the turn's rounds (its model requests when
    callbench's proxy served them, else its calls grouped by timing), then a round holding the agent's
    message to the user (a request round whose text it is, when its last one is), after which that
    turn's user turn is placed (``after_round``). The scorers read these as the offline loop's."""
    answered: list[Any] = []
    if route is not None:
        from callbench.harness.agent_model import note_model_details, request_rounds

        answered = note_model_details(trace, route)
    rounds: list[RoundInfo] = []
    answer_round: dict[int, RoundInfo] = {}
    starts = [turn.started_at for turn in conversation.turns]
    for position, turn in enumerate(conversation.turns):
        calls = trace.calls[turn.first_call : turn.last_call]
        mine = [x for x in answered if _turn_of(x.started_at, starts) == position]
        if mine:
            turn_rounds = request_rounds(mine, calls)
        else:
            turn_rounds = timing_rounds(calls)
        answer = turn.result.answer
        last = turn_rounds[-1] if turn_rounds else None
        if last is None or last.call_ids or not last.agent_request or last.text.strip() != answer.strip():
            last = RoundInfo(index=0, started_at=turn.ended_at, reconstructed=True, text=answer)
            turn_rounds.append(last)
        rounds.extend(turn_rounds)
        answer_round[turn.number] = last
    for n, info in enumerate(rounds):
        info.index = n + 1
        if info is rounds[-1] and not info.agent_request:  # the conversation's last answer: final_text
            info.text = trace.final_text
            trace.note_truncated(f"rounds[{n}].text", (trace.truncated or {}).get("final_text"))
            continue
        info.text, size = cap_text(info.text, limits["reply" if info.agent_request else "answer"])
        trace.note_truncated(f"rounds[{n}].text", size)
    by_id = {cid: info.index for info in rounds for cid in info.call_ids}
    for call in trace.calls:
        call.round = by_id.get(call.call_id, call.round)
    trace.rounds = rounds
    user_turns = trace.user_turns or []
    for position, user_turn in enumerate(user_turns):
        if user_turn.after_round in answer_round:
            index = answer_round[user_turn.after_round].index
            user_turns[position] = user_turn.model_copy(update={"after_round": index})
    if answered:
        total = Usage()
        for info in rounds:
            if info.usage is not None:
                total = total + info.usage
        trace.usage = total


def _turn_of(started_at: float, starts: list[float]) -> int:
    """The agent turn a model request belongs to: the last one started before it (else the first)."""
    position = 0
    for n, start in enumerate(starts):
        if start <= started_at:
            position = n
    return position
