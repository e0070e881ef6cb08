"""The round loop: one case's episode against a model and an executor session."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from callbench.executors.base import ExecutorSession, ToolOutcome, TurnDirective
from callbench.harness.conversation import ConversationUser
from callbench.harness.modes import CONTINUATION_GUIDANCE, ORACLE_NUDGE, ModePolicy, round_override
from callbench.harness.observer import Observers
from callbench.harness.validate import check_call
from callbench.providers.text_calls import detect_text_calls
from callbench.providers.wire import ContextLengthError, ToolNameMap, round_prefix
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.conversation import AGENT_STOP_SIGNALS
from callbench.types.fields import set_fields
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall
from callbench.types.run_options import DEFAULT_SIZE_LIMITS
from callbench.types.textcap import cap_text, cap_value
from callbench.types.trace import RoundInfo, Trace, TraceCall


class ModelLike(Protocol):
    """Anything with ``async generate(messages, tools, settings) -> ModelTurn`` (a Model or Provider)."""

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn: ...


@dataclass
class Episode:
    """Mutable state of one running case; the trace survives a timeout or a provider error."""

    case: Case
    offered: list[ToolContract]
    policy: ModePolicy
    system_prompt: str
    trace: Trace = field(default_factory=Trace)
    messages: list[Message] = field(default_factory=list)
    registry: ToolRegistry | None = None
    """The case's registry, for declared equivalents (default: one built from the offered tools)."""
    recover_text_calls: bool = False
    """``--recover-text-calls``: a call the server left in an answer's text is taken as a call."""
    size_limits: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_SIZE_LIMITS))
    """``--size-limit``: bytes the trace keeps of each reply, answer, tool result and stderr tail."""
    user: ConversationUser | None = None
    """A conversation case's user (:mod:`callbench.harness.conversation`), speaking after every answer."""

    def __post_init__(self) -> None:
        self.offered_by_name = {t.name: t for t in self.offered}
        self.call_only_tools = {tool for s in self.case.expected if s.call_only for tool in s.tools}
        self.expected = self.case.expected_tools()
        registry = self.registry if self.registry is not None else ToolRegistry(self.offered)
        # What counts as progress for the oracle-assisted nudge: a step's tools or a declared equivalent.
        self.accepted = [
            sorted({*alts, *(e for name in alts for e in registry.equivalents(name))})
            for alts in self.expected
        ]
        system = self.case.system if self.case.system is not None else self.system_prompt
        self.messages = ([Message.system(system)] if system else []) + self.case.start_messages()


async def run_episode(
    episode: Episode,
    model: ModelLike,
    session: ExecutorSession,
    settings: GenerationSettings,
    observers: Observers | None = None,
) -> Trace:
    """Run rounds until the model answers without calls, or a budget is spent. Returns the trace.

    Provider errors propagate (the engine turns them into error records); the partial trace
    stays on ``episode.trace``. A context-length refusal is the exception: the conversation no
    longer fits the model's window, which retrying cannot change, so the episode ends there
    (``stop_reason="context_overflow"``) and is scored, with that reason counted apart.
    """
    case, trace = episode.case, episode.trace
    budget = episode.policy.round_budget(len(episode.expected), round_override(case))
    observers = observers or Observers()
    if episode.user is not None and case.user_opens and await user_speaks(episode, session, 0):
        return trace
    for round_index in range(1, budget + 1):
        info = RoundInfo(index=round_index, started_at=time.time())
        trace.rounds.append(info)
        try:
            turn = await model.generate(episode.messages, episode.offered, settings)
        except ContextLengthError:
            info.finish_reason = CONTEXT_OVERFLOW
            trace.stop_reason = "context_overflow"
            observers.emit_round(case, info, [])
            return trace
        turn = read_text_calls(turn, episode, round_prefix(episode.messages))
        _record_turn(trace, info, turn, episode.size_limits["reply"])
        episode.messages.append(Message.assistant(turn))
        await session.begin_round(round_index, turn.tool_calls)
        new_calls = [await _execute(episode, session, call, round_index) for call in turn.tool_calls]
        observers.emit_round(case, info, new_calls)
        if _call_cap_reached(episode):
            trace.stop_reason = "max_calls"
            return trace
        if session.episode_over():
            trace.stop_reason = "executor_end"
            return trace
        directive = await session.after_turn(bool(turn.tool_calls))
        _apply(episode, directive)
        if directive.action == "stop":
            trace.stop_reason = "max_rounds"
            return trace
        if directive.action == "continue":
            continue
        if not turn.tool_calls:
            if episode.user is not None:  # a conversation: the user answers the agent
                if any(signal in turn.text for signal in AGENT_STOP_SIGNALS):
                    trace.stop_reason = "agent_stop"
                    return trace
                if await user_speaks(episode, session, round_index):
                    return trace
                continue
            if _nudge(episode, info, round_index < budget):
                continue
            trace.stop_reason = "answer"
            return trace
    trace.stop_reason = "max_rounds"
    return trace


async def user_speaks(episode: Episode, session: ExecutorSession, after_round: int) -> bool:
    """The conversation's user takes its turn (recorded on the trace); True when the conversation
    ends here: the user sent a stop signal, or its turn budget was already spent."""
    trace, user, spec = episode.trace, episode.user, episode.case.user
    assert user is not None and spec is not None  # only called for conversation cases
    turns = trace.user_turns if trace.user_turns is not None else []
    trace.user_turns = turns
    if len(turns) >= spec.max_turns:
        trace.stop_reason = "max_turns"
        return True
    turn = await user.turn(episode.messages, session, after_round)
    text, size = cap_text(turn.text, episode.size_limits["reply"])
    trace.note_truncated(f"user_turns[{len(turns)}].text", size)
    turns.append(turn.model_copy(update={"text": text}))
    if turn.stop:
        trace.stop_reason = "user_stop"
        return True
    episode.messages.append(Message.user(turn.text))
    return False


CONTEXT_OVERFLOW = "context_overflow"
"""``finish_reason`` of a round the endpoint refused because the conversation exceeds its context."""


def read_text_calls(turn: ModelTurn, episode: Episode, id_prefix: str) -> ModelTurn:
    """Native mode: note (and with ``--recover-text-calls`` take) a call the server left in the text.

    Only a turn without structured calls whose text no callbench parser has read yet is looked at:
    prompt mode and local checkpoints read calls from text themselves (and set ``raw_text``), so
    what they could not read is the model's format failure, never a serving fault. The turn gets
    ``text_call_format``; when recovering, its calls too (``recovered_from`` set), with the text as
    received in ``raw_text`` and the prose left over in ``text``.
    """
    if turn.tool_calls or turn.raw_text is not None or not turn.text:
        return turn
    # The model saw the tools under the names the provider sent (``math.factorial`` goes out as
    # ``math_factorial``): both spellings name an offered tool, and calls get the original name back.
    names = ToolNameMap.build(list(episode.offered_by_name))
    found = detect_text_calls(turn.text, set(names.to_wire) | set(names.from_wire), id_prefix)
    if found is None:
        return turn
    if not episode.recover_text_calls:
        return turn.model_copy(update={"text_call_format": found.format})
    calls = [c.model_copy(update={"name": names.original(c.name)}) for c in found.calls]
    return turn.model_copy(
        update={"text_call_format": found.format, "raw_text": turn.text, "text": found.text}
        | {"tool_calls": calls}
    )


def _record_turn(trace: Trace, info: RoundInfo, turn: ModelTurn, limit: int) -> None:
    """Record the turn on its round, each text within the reply limit (a head and a tail over it);
    the text as received only when it differs from the text left (every text stored once)."""
    recovered = sum(c.recovered_from is not None for c in turn.tool_calls)
    where = f"rounds[{len(trace.rounds) - 1}]"
    text, size = cap_text(turn.text, limit)
    trace.note_truncated(f"{where}.text", size)
    raw_text, reasoning = turn.raw_text, turn.reasoning
    if raw_text is not None:
        raw_text, cut = (None, None) if raw_text == turn.text else cap_text(raw_text, limit)
        trace.note_truncated(f"{where}.raw_text", cut)
    if reasoning is not None:
        reasoning, cut = cap_text(reasoning, limit)
        trace.note_truncated(f"{where}.reasoning", cut)
    set_fields(
        info,
        text=text,
        call_ids=[c.id for c in turn.tool_calls],
        usage=turn.usage,
        latency_ms=turn.latency_ms,
        cached=turn.cached,
        model=turn.model,
        finish_reason=turn.finish_reason,
        raw_text=raw_text,
        reasoning=reasoning,
        text_call_format=turn.text_call_format,
        ttft_ms=turn.ttft_ms,
        recovered_calls=recovered or None,
    )
    if turn.usage:
        trace.usage = trace.usage + turn.usage
    trace.final_text = text  # the same text: stored once (``Trace.final_text``)
    if trace.truncated is not None:  # an earlier round's cut answer is no longer the final text
        trace.truncated.pop("final_text", None)
    trace.note_truncated("final_text", size)


async def _execute(episode: Episode, session: ExecutorSession, call: ToolCall, round_index: int) -> TraceCall:
    record, text = await execute_call(episode, session, call, round_index)
    episode.messages.append(Message.tool(call, text))
    return record


async def execute_call(
    episode: Episode, session: ExecutorSession, call: ToolCall, round_index: int
) -> tuple[TraceCall, str]:
    """Record one call on the episode's trace, check it, execute it if it may run, and return the
    record and the text the caller hears. Shared by the round loop and the MCP endpoint an agent
    under test calls, so both judge and answer a call the same way."""
    trace = episode.trace
    record = TraceCall(
        index=len(trace.calls),
        call_id=call.id,
        round=round_index,
        tool=call.name,
        arguments_raw=call.arguments_raw,
        arguments=call.arguments,
        parse_error=call.parse_error,
        recovered_from=call.recovered_from,
    )
    trace.calls.append(record)
    check_call(record, episode.offered_by_name)
    cap = episode.case.max_calls
    if cap is not None and record.index >= cap:
        outcome = ToolOutcome.failure("Call limit reached; this call was not executed.")
        record.execution = "not_executed"
    elif not record.schema_valid and not _executor_checks_format(session, record):
        # The call is not executed; the model hears why so it can correct itself.
        outcome = ToolOutcome.failure("Invalid call: " + "; ".join(record.schema_errors))
        record.execution = "rejected"
    elif record.tool in episode.call_only_tools:
        outcome = ToolOutcome(ok=True, result={"call_only": True, "executed": False})
        record.execution = "skipped"
    else:
        started = time.perf_counter()
        outcome = await session.call(record.tool, record.arguments or {})
        record.duration_ms = (time.perf_counter() - started) * 1000
        record.execution = "ok" if outcome.ok else "error"
    result_json = _result_json(outcome)
    # The caller hears the whole result; the trace keeps it within the tool-result limit.
    limit = episode.size_limits["tool_result"]
    record.result, size = cap_value(outcome.result, limit, result_json)
    trace.note_truncated(f"calls[{record.index}].result", size)
    record.error, size = (None, None) if outcome.error is None else cap_text(outcome.error, limit)
    trace.note_truncated(f"calls[{record.index}].error", size)
    record.annotations = outcome.annotations
    return record, _content(episode, outcome, result_json)


def _result_json(outcome: ToolOutcome) -> str | None:
    """The JSON text of a result the caller hears as JSON (``None``: it hears the executor's text)."""
    if outcome.content is None and outcome.ok:
        return json.dumps(outcome.result, ensure_ascii=False, default=str)
    return None


def _content(episode: Episode, outcome: ToolOutcome, result_json: str | None) -> str:
    text = outcome.heard(result_json)
    if episode.policy.appends_guidance and episode.case.harness_guidance:
        text = f"{text}\n{CONTINUATION_GUIDANCE}"
    return text


def _apply(episode: Episode, directive: TurnDirective) -> None:
    """Add what a session's :meth:`~ExecutorSession.after_turn` asked for: messages, then tools."""
    episode.messages.extend(directive.messages)
    for contract in directive.offer:
        if contract.name not in episode.offered_by_name:
            episode.offered.append(contract)
        episode.offered_by_name[contract.name] = contract


def _call_cap_reached(episode: Episode) -> bool:
    cap = episode.case.max_calls
    return cap is not None and len(episode.trace.calls) >= cap


def _nudge(episode: Episode, info: RoundInfo, rounds_left: bool) -> bool:
    """Oracle-assisted only: remind the model how many expected steps remain. True if nudged."""
    if not (episode.policy.discloses_step_count and rounds_left):
        return False
    total = len(episode.expected)
    done = covered_count(episode.accepted, [c.tool for c in episode.trace.calls])
    if done >= total:
        return False
    text = ORACLE_NUDGE.format(done=done, total=total, missing=total - done)
    info.nudge = text
    episode.messages.append(Message.user(text))
    return True


def covered_count(expected: list[list[str]], called: list[str]) -> int:
    """Expected call instances covered by distinct calls, by tool name (order ignored); ``expected``
    lists the accepted names per instance (alternatives and declared equivalents)."""
    remaining = list(called)
    done = 0
    for alternatives in expected:
        hit = next((name for name in remaining if name in alternatives), None)
        if hit is not None:
            remaining.remove(hit)
            done += 1
    return done


def _executor_checks_format(session: ExecutorSession, record: TraceCall) -> bool:
    """Executors with their own format checks (``sees_invalid_calls``) get schema-invalid and unknown-tool
    calls whose arguments parsed; they answer with their benchmark's own error text."""
    return session.sees_invalid_calls and record.arguments is not None
