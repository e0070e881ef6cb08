"""A record's episode as the ordered turns of a conversation, for the formats that hold messages.

A record keeps the request (``instruction``), each model round (its text, reasoning, usage and the
calls it made), each call's outcome, the harness's reminders (``nudge``) and, in conversation cases,
the user's turns. :func:`turns` lays them out in the order the model saw them. What a record does not
keep is not invented: the system prompt and a case's earlier scripted history are not in it (only
the request's text is), and neither are the exact texts the harness wrapped tool results in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from callbench.types.records import CaseRecord
from callbench.types.trace import RoundInfo, TraceCall

Role = Literal["user", "assistant", "tool"]

OBSERVED = ("ok", "error", "rejected")
"""Call outcomes that always answer the call (a result, an error, or why the call was refused)."""


def answered(call: TraceCall) -> bool:
    """The harness answered the call: it ran, failed or was refused, or got a stand-in result (a
    call-only step's, a call past the cap's message)."""
    return call.execution in OBSERVED or call.result is not None or call.error is not None


@dataclass
class Turn:
    """One message of the episode."""

    role: Role
    text: str = ""
    reasoning: str | None = None
    round: RoundInfo | None = None
    """Assistant turns: the model round."""
    calls: list[TraceCall] = field(default_factory=list)
    """Assistant turns: the calls the round made."""
    call: TraceCall | None = None
    """Tool turns: the call this result answers."""
    kind: str = ""
    """User turns: ``request`` (the case's), ``nudge`` (the harness's reminder) or ``user`` (a
    conversation's user); assistant turns: ``round`` or ``answer`` (a final answer outside any round)."""


def round_calls(record: CaseRecord) -> dict[int, list[TraceCall]]:
    """Each round's calls (by round index), in emitted order; a call naming no recorded round goes to
    the round its ``round`` field names, else to the last round."""
    rounds = record.trace.rounds
    by_id = {cid: info.index for info in rounds for cid in info.call_ids}
    known = {info.index for info in rounds}
    last = rounds[-1].index if rounds else 1
    out: dict[int, list[TraceCall]] = {}
    for call in sorted(record.trace.calls, key=lambda c: c.index):
        index = by_id.get(call.call_id, call.round if call.round in known else last)
        out.setdefault(index, []).append(call)
    return out


def turns(record: CaseRecord) -> list[Turn]:
    """The episode's messages in order (see the module's docstring for what is not kept)."""
    trace = record.trace
    out: list[Turn] = []
    user_turns = sorted(trace.user_turns or [], key=lambda t: t.after_round)
    opening = [t for t in user_turns if t.after_round <= 0]
    if record.instruction:
        out.append(Turn("user", record.instruction, kind="request"))
    for turn in opening:
        if turn.text:
            out.append(Turn("user", turn.text, kind="user"))
    calls = round_calls(record)
    placed = {c.call_id for cs in calls.values() for c in cs}
    for info in trace.rounds:
        mine = calls.get(info.index, [])
        out.append(Turn("assistant", info.text, info.reasoning, info, mine, kind="round"))
        for call in mine:
            if answered(call):
                out.append(Turn("tool", tool_text(call), call=call))
        if info.nudge:
            out.append(Turn("user", info.nudge, kind="nudge"))
        for turn in user_turns:
            if turn.after_round == info.index and turn.text:
                out.append(Turn("user", turn.text, kind="user"))
    stray = [c for c in trace.calls if c.call_id not in placed]
    if stray and not trace.rounds:  # an agent's calls without rounds: one assistant turn holds them
        out.append(Turn("assistant", "", calls=stray, kind="round"))
        out.extend(Turn("tool", tool_text(c), call=c) for c in stray if answered(c))
    last_text = trace.rounds[-1].text if trace.rounds else ""
    if trace.final_text and trace.final_text != last_text:
        out.append(Turn("assistant", trace.final_text, kind="answer"))
    return out


def tool_text(call: TraceCall) -> str:
    """What the call's result message said, as far as the record knows: the result, the error, or
    why the call was refused."""
    from callbench.interop.source import json_text

    if call.execution in ("ok", "skipped"):
        return json_text(call.result) if call.result is not None else ""
    if call.error:
        return call.error
    if call.execution == "rejected":
        why = call.parse_error or "; ".join(call.schema_errors)
        if not call.known_tool:
            why = why or f"unknown tool {call.tool!r}"
        return f"call refused: {why}" if why else "call refused"
    return json_text(call.result) if call.result is not None else ""
