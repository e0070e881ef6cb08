"""A protocol-server responder that plays any suite's cases with a built-in agent (``oracle``,
``noisy:SEED[:MUTATION]``) over the OpenAI Chat Completions protocol.

It generalises ``tests/providers/gold_responder.py`` (starter + oracle only) to any suite and any
built-in player, so that callbench's own loop (``openai:scripted@URL``) and an agent application
pointed at the same kind of server get the same scripted calls. The case is found from the user
prompt; each answer is computed from the conversation (tool results feed the player's ``$ref``
lookups) and memoised per (case, round), so a retried request gets the same answer. The player sees
the suite's own contracts for the tools the request offers (looked up by name, in the request's
order): its mistakes are drawn from schemas and read-only flags, which must not depend on how a
client re-encodes a schema on the wire.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Coroutine
from typing import Any

from protocol_server import Api, Turn

from callbench.providers.agents import noisy, oracle
from callbench.providers.base import Provider
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ToolCall

PLAYERS = {"oracle": oracle.make_provider, "noisy": noisy.make_provider}


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (built-in players compute, they do not wait)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("coroutine suspended")


class ScriptedResponder:
    """Callable responder for :class:`ProtocolServer` (OpenAI API only).

    ``player`` is a built-in agent spec such as ``"noisy:2"`` or ``"oracle"``. Besides the script
    (:attr:`memo`), it records per case key what the player did (:attr:`labels`, e.g.
    ``noisy:wrong_value``), the tools the client offered (:attr:`offered`, name -> parameters, as
    sent) and what the client told the model each call returned (:attr:`told`, call id -> text).
    """

    def __init__(self, suite: Suite, player: str = "oracle") -> None:
        kind, _, arg = player.partition(":")
        if kind not in PLAYERS:
            raise ValueError(f"scripted responder: unknown player {player!r} (one of {', '.join(PLAYERS)})")
        self.suite = suite
        self.agent: Provider = PLAYERS[kind](arg)
        self.by_prompt = {c.prompt_text(): c for c in suite.cases}
        self.players: dict[str, Provider] = {}
        self.memo: dict[tuple[str, int], Turn] = {}
        self.labels: dict[str, str] = {}
        self.offered: dict[str, dict[str, Any]] = {}
        self.told: dict[str, dict[str, str]] = {}
        self.lock = threading.Lock()

    def __call__(self, api: Api, body: dict[str, Any]) -> Turn:
        if api != "openai":
            raise ValueError("scripted responder: OpenAI Chat Completions only")
        messages = [_message(m) for m in body["messages"]]
        case = self.case_of(messages)
        key = (case.key, sum(m.role == "assistant" for m in messages))
        with self.lock:
            tools = body.get("tools") or []
            self.offered.setdefault(
                case.key, {t["function"]["name"]: t["function"].get("parameters") for t in tools}
            )
            told = self.told.setdefault(case.key, {})
            told.update({m.tool_call_id: m.content for m in messages if m.role == "tool" and m.tool_call_id})
            if key not in self.memo:
                self.memo[key] = self._answer(case, messages, tools)
            return self.memo[key]

    def case_of(self, messages: list[Message]) -> Case:
        """The case whose user prompt opens this conversation."""
        users = []
        for message in messages:
            if message.role == "assistant":
                break
            if message.role == "user":
                users.append(message.content)
        return self.by_prompt["\n".join(users)]

    def _answer(self, case: Case, messages: list[Message], wire_tools: list[dict[str, Any]]) -> Turn:
        player = self.players.setdefault(case.key, self.agent.for_case(case))
        tools = [self._contract(t["function"]) for t in wire_tools]
        turn = run_sync(player.generate(messages, tools, GenerationSettings()))
        self.labels[case.key] = getattr(player, "label", "")
        return Turn(
            text=turn.text,
            calls=[(c.name, json.dumps(c.arguments)) for c in turn.tool_calls],
            ids=[c.id for c in turn.tool_calls] or None,
        )

    def _contract(self, function: dict[str, Any]) -> ToolContract:
        found = self.suite.registry.find(function["name"])
        if found is not None:
            return found
        return ToolContract(name=function["name"], parameters=function.get("parameters") or {}, strict=False)


def text_of(content: Any) -> str:
    """A message's text: the Agents SDK sends tool results as a list of text parts (valid in the
    Chat Completions API), the plain SDK and callbench as a string."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return "" if content is None else str(content)


def _message(raw: dict[str, Any]) -> Message:
    calls = []
    for call in raw.get("tool_calls") or []:
        arguments = json.loads(call["function"]["arguments"] or "{}")
        calls.append(ToolCall(id=call["id"], name=call["function"]["name"], arguments=arguments))
    return Message(
        role=raw["role"],
        content=text_of(raw.get("content")),
        tool_calls=calls,
        tool_call_id=raw.get("tool_call_id"),
    )
