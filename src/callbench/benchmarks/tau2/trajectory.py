"""A conversation's trace as τ²'s message list (``tau2.data_model.message``'s JSON shapes).

The reward replays it, the simulator audit reads it, and the results export writes it: one order for
all three. The agent's round ``r`` (its text and calls, then each call's tool message) is followed by
the user's turn after round ``r`` (its calls on its own tools with their tool messages, then its text).
Calls the loop refused without executing them (unreadable arguments) are left out: τ² never executes
such a call either.
"""

from __future__ import annotations

import json
from typing import Any

from callbench.plugin import Case, Trace, TraceCall, UserTurn

EXECUTED = ("ok", "error")
TERMINATIONS = {"user_stop": "user_stop", "agent_stop": "agent_stop"}
"""callbench stop reasons τ² counts as a finished simulation; every other one is premature."""


def termination_reason(trace: Trace) -> str:
    """τ²'s ``termination_reason`` for the trace's stop reason."""
    if trace.stop_reason in TERMINATIONS:
        return TERMINATIONS[trace.stop_reason]
    if trace.stop_reason in ("max_rounds", "max_turns", "timeout"):
        return "max_steps"
    return "agent_error"


def tool_message_text(call: TraceCall) -> str:
    """What the caller heard: the tool's text, or τ²'s ``Error: ...`` text."""
    return heard_text(call.execution == "ok", call.result, call.error)


def heard_text(ok: bool, result: Any, error: str | None) -> str:
    """A τ² tool message's text: the result (its JSON when it is not text), or ``Error: ...``."""
    if not ok:
        return f"Error: {error or ''}"
    return result if isinstance(result, str) else json.dumps(result, default=str)


def messages(case: Case, trace: Trace) -> list[dict[str, Any]]:
    """The trajectory as τ² message dicts (``role``, ``content``, ``tool_calls``, ``requestor``...)."""
    out = [_history_message(m) for m in case.start_messages()]
    by_round: dict[int, list[UserTurn]] = {}
    for turn in trace.user_turns or []:
        by_round.setdefault(turn.after_round, []).append(turn)
    for turn in by_round.get(0, []):
        out.extend(_user_messages(turn))
    for info in trace.rounds:
        calls = [c for c in trace.calls if c.round == info.index and c.execution in EXECUTED]
        out.append(
            {
                "role": "assistant",
                "content": info.text or None,
                "tool_calls": [_call(c.call_id, c.tool, c.arguments or {}, "assistant") for c in calls]
                or None,
            }
        )
        for call in calls:
            out.append(_tool(call.call_id, tool_message_text(call), "assistant", call.execution != "ok"))
        for turn in by_round.get(info.index, []):
            out.extend(_user_messages(turn))
    return out


def action_matches(action: Any, call: dict[str, Any]) -> bool:
    """τ²'s match of a gold action and a call: the name, then the compared argument values."""
    if action.name != call["name"]:
        return False
    arguments = call.get("arguments") or {}
    keys = list(arguments) if action.compare_args is None else list(action.compare_args)
    if not keys:
        return True
    return {k: v for k, v in arguments.items() if k in keys} == {
        k: v for k, v in action.arguments.items() if k in keys
    }


def tool_calls_in_order(trajectory: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every call of the trajectory (the agent's and the user's), in the order they ran."""
    return [
        call for m in trajectory if m["role"] in ("assistant", "user") for call in m.get("tool_calls") or []
    ]


def assistant_texts(trajectory: list[dict[str, Any]]) -> list[str]:
    """The agent's messages that have text."""
    return [m["content"] for m in trajectory if m["role"] == "assistant" and (m.get("content") or "").strip()]


def user_texts(trajectory: list[dict[str, Any]]) -> list[str]:
    """The user's messages that have text."""
    return [m["content"] for m in trajectory if m["role"] == "user" and (m.get("content") or "").strip()]


def _user_messages(turn: UserTurn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if turn.calls:
        calls = [_call(c.call_id, c.tool, c.arguments, "user") for c in turn.calls]
        out.append({"role": "user", "content": None, "tool_calls": calls})
        for call in turn.calls:
            out.append(_tool(call.call_id, heard_text(call.ok, call.result, call.error), "user", not call.ok))
    out.append({"role": "user", "content": turn.text, "tool_calls": None})
    return out


def _history_message(message: Any) -> dict[str, Any]:
    if message.role == "tool":
        return _tool(
            message.tool_call_id or "", message.content, "assistant", message.content.startswith("Error:")
        )
    calls = [_call(c.id, c.name, c.arguments or {}, "assistant") for c in message.tool_calls] or None
    return {"role": message.role, "content": message.content or None, "tool_calls": calls}


def _call(call_id: str, name: str, arguments: dict[str, Any], requestor: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}


def _tool(call_id: str, content: str, requestor: str, error: bool) -> dict[str, Any]:
    return {"role": "tool", "id": call_id, "content": content, "requestor": requestor, "error": error}
