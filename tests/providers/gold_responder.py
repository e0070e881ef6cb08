"""A protocol-server responder that plays each starter case's gold path (the oracle) over HTTP.

Driving the oracle through a real provider and the wire protocol must still score 100%: tool
names, argument values and call ids survive the round trip. Answers are memoised per (case,
round) so a retried request gets the same answer, as a deterministic model would give.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from protocol_server import Api, Turn
from scripted_responder import run_sync

from callbench.benchmarks.starter.suite import load_suite
from callbench.providers.agents.oracle import OracleAgent
from callbench.providers.text_calls import parse_text_calls
from callbench.providers.wire import ToolNameMap, parse_arguments
from callbench.suites.suite import Suite, SuiteOptions
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ToolCall


class GoldResponder:
    """Callable responder for :class:`ProtocolServer`."""

    def __init__(self, suite: Suite | None = None) -> None:
        self.suite = suite or load_suite("", SuiteOptions())
        self.by_prompt = {c.prompt_text(): c for c in self.suite.cases}
        self.names = ToolNameMap.build(self.suite.registry.names())
        self.players: dict[str, Any] = {}
        self.memo: dict[tuple[str, int], Turn] = {}
        self.lock = threading.Lock()

    def case_of(self, api: Api, body: dict[str, Any]) -> Any:
        return self.by_prompt[prompt_of(to_messages(api, body, self.names))]

    def __call__(self, api: Api, body: dict[str, Any]) -> Turn:
        messages = to_messages(api, body, self.names)
        case = self.by_prompt[prompt_of(messages)]
        key = (case.key, sum(m.role == "assistant" for m in messages))
        with self.lock:
            if key not in self.memo:
                player = self.players.setdefault(case.key, OracleAgent().for_case(case))
                tools = [_contract(api, t, self.names) for t in body.get("tools") or []]
                turn = run_sync(player.generate(messages, tools, GenerationSettings()))
                self.memo[key] = Turn(
                    text=turn.text,
                    calls=[(self.names.wire(c.name), json.dumps(c.arguments)) for c in turn.tool_calls],
                    ids=[c.id for c in turn.tool_calls] or None,
                )
            return self.memo[key]


def prompt_of(messages: list[Message]) -> str:
    users = []
    for message in messages:
        if message.role == "assistant":
            break
        if message.role == "user":
            users.append(message.content)
    return "\n".join(users)


def _contract(api: Api, tool: dict[str, Any], names: ToolNameMap) -> ToolContract:
    if api == "openai":
        fn = tool["function"]
        return ToolContract(name=names.original(fn["name"]), parameters=fn["parameters"], strict=False)
    return ToolContract(name=names.original(tool["name"]), parameters=tool["input_schema"], strict=False)


def to_messages(api: Api, body: dict[str, Any], names: ToolNameMap) -> list[Message]:
    """Read a request body back into provider-neutral messages."""
    if api == "openai":
        return [_openai_message(m, names) for m in body["messages"]]
    out = [Message.system(body["system"])] if body.get("system") else []
    for message in body["messages"]:
        out += _anthropic_messages(message, names)
    return out


def _openai_message(raw: dict[str, Any], names: ToolNameMap) -> Message:
    calls = [
        ToolCall(
            id=c["id"],
            name=names.original(c["function"]["name"]),
            arguments=parse_arguments(c["function"]["arguments"])[0],
        )
        for c in raw.get("tool_calls") or []
    ]
    return Message(
        role=raw["role"],
        content=raw.get("content") or "",
        tool_calls=calls,
        tool_call_id=raw.get("tool_call_id"),
    )


def _anthropic_messages(raw: dict[str, Any], names: ToolNameMap) -> list[Message]:
    blocks = (
        raw["content"] if isinstance(raw["content"], list) else [{"type": "text", "text": raw["content"]}]
    )
    if raw["role"] == "assistant":
        text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        calls = [
            ToolCall(id=b["id"], name=names.original(b["name"]), arguments=b["input"])
            for b in blocks
            if b["type"] == "tool_use"
        ]
        return [Message(role="assistant", content=text, tool_calls=calls)]
    results = [
        Message(role="tool", content=b["content"], tool_call_id=b["tool_use_id"])
        for b in blocks
        if b["type"] == "tool_result"
    ]
    text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
    return results or [Message.user(text)]


_RESPONSE = re.compile(
    r"<tool_response name=(?P<name>'[^']*'|\"[^\"]*\"|None) id=(?P<id>'[^']*'|\"[^\"]*\"|None)>\n"
    r"(?P<content>.*?)\n</tool_response>",
    re.DOTALL,
)


class PromptGoldResponder(GoldResponder):
    """The gold path for ``prompt:`` models: reads text turns, answers with ``<tool_call>`` text.

    Prompt mode makes up call ids (``call_r<round>_<i>``); they are mapped back to the oracle's
    own ids by position so that its ``$ref`` lookups find the right results.
    """

    def __call__(self, api: Api, body: dict[str, Any]) -> Turn:
        raw = to_messages(api, body, self.names)
        case = self.by_prompt[prompt_of(raw)]
        messages = self._native(case.key, raw)
        turn = super().__call__(api, {**body, "messages": [_as_openai(m) for m in messages], "tools": []})
        blocks = [
            f'<tool_call>{{"name": {json.dumps(self.names.original(n))}, "arguments": {a}}}</tool_call>'
            for n, a in turn.calls
        ]
        return Turn(text="\n".join(blocks) or turn.text)

    def _native(self, case_key: str, messages: list[Message]) -> list[Message]:
        out: list[Message] = []
        rounds = 0
        for message in messages:
            if message.role == "assistant":
                rounds += 1
                ids = self.memo[(case_key, rounds - 1)].ids or []
                calls = parse_text_calls(message.content, set(self.names.to_wire)).calls
                out.append(
                    Message(
                        role="assistant",
                        content="",
                        tool_calls=[c.model_copy(update={"id": ids[i]}) for i, c in enumerate(calls)],
                    )
                )
            elif message.role == "user" and message.content.startswith("<tool_response"):
                ids = self.memo[(case_key, rounds - 1)].ids or []
                for i, match in enumerate(_RESPONSE.finditer(message.content)):
                    out.append(Message(role="tool", content=match["content"], tool_call_id=ids[i]))
            else:
                out.append(message)
        return out


def _as_openai(message: Message) -> dict[str, Any]:
    item: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        item["tool_calls"] = [
            {"id": c.id, "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message.tool_calls
        ]
    if message.tool_call_id:
        item["tool_call_id"] = message.tool_call_id
    return item
