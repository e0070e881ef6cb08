"""Small ``py:`` agents that talk to their model over raw HTTP (aiohttp), for the model proxy's tests.

Each gets its tools from the case's MCP endpoint and loops model -> calls -> results like the example
agents, but speaks either API, streamed or not, so the proxy sees every shape it must pass through
and record: Chat Completions (JSON or server-sent events) and Anthropic Messages (JSON or events).
``PROXY_AGENT_KEY`` is sent as its key (none when unset); ``PROXY_AGENT_RETRIES`` retries a request
answered 5xx (or not at all) that many times; ``PROXY_AGENT_MODEL`` names the model (``scripted``).
"""

from __future__ import annotations

import json
import os
from typing import Any

import aiohttp
from mcp import Client


class ModelFailed(Exception):
    """The model endpoint failed (the agent gives up: a crash callbench sees)."""


async def openai(instruction: str, mcp_url: str, model_url: str | None = None) -> str:
    return await _loop("openai", False, instruction, mcp_url, model_url)


async def openai_stream(instruction: str, mcp_url: str, model_url: str | None = None) -> str:
    return await _loop("openai", True, instruction, mcp_url, model_url)


async def anthropic(instruction: str, mcp_url: str, anthropic_url: str | None = None) -> str:
    return await _loop("anthropic", False, instruction, mcp_url, anthropic_url)


async def anthropic_stream(instruction: str, mcp_url: str, anthropic_url: str | None = None) -> str:
    return await _loop("anthropic", True, instruction, mcp_url, anthropic_url)


async def _loop(api: str, stream: bool, instruction: str, mcp_url: str, base: str | None) -> str:
    base = base or os.environ.get("OPENAI_BASE_URL" if api == "openai" else "ANTHROPIC_BASE_URL", "")
    model = os.environ.get("PROXY_AGENT_MODEL", "scripted")
    messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
    async with Client(mcp_url) as mcp, aiohttp.ClientSession() as http:
        listed = (await mcp.list_tools()).tools
        if api == "openai":
            tools: list[dict[str, Any]] = [
                {"type": "function", "function": {"name": t.name, "parameters": t.input_schema}}
                for t in listed
            ]
        else:
            tools = [{"name": t.name, "input_schema": t.input_schema} for t in listed]
        for _ in range(8):
            body: dict[str, Any] = {"model": model, "messages": messages, "tools": tools}
            if api == "anthropic":
                body["max_tokens"] = 256
            if stream:
                body["stream"] = True
                if api == "openai":
                    body["stream_options"] = {"include_usage": True}
            text, calls = await _ask(http, api, base, body)
            if not calls:
                return text
            if api == "openai":
                messages.append(
                    {
                        "role": "assistant",
                        "content": text or None,
                        "tool_calls": [
                            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                            for i, n, a in calls
                        ],
                    }
                )
            else:
                blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
                blocks += [
                    {"type": "tool_use", "id": i, "name": n, "input": json.loads(a)} for i, n, a in calls
                ]
                messages.append({"role": "assistant", "content": blocks})
            results = []
            for call_id, name, raw in calls:
                reply = await mcp.call_tool(name, json.loads(raw or "{}"))
                content = "\n".join(getattr(b, "text", "") for b in reply.content)
                results.append((call_id, content))
            if api == "openai":
                messages += [{"role": "tool", "tool_call_id": i, "content": c} for i, c in results]
            else:
                blocks = [{"type": "tool_result", "tool_use_id": i, "content": c} for i, c in results]
                messages.append({"role": "user", "content": blocks})
    raise ModelFailed("no final answer after 8 turns")


async def _ask(
    http: aiohttp.ClientSession, api: str, base: str, body: dict[str, Any]
) -> tuple[str, list[tuple[str, str, str]]]:
    url = f"{base}/chat/completions" if api == "openai" else f"{base}/v1/messages"
    headers = {"content-type": "application/json"}
    if key := os.environ.get("PROXY_AGENT_KEY"):
        headers["authorization" if api == "openai" else "x-api-key"] = (
            f"Bearer {key}" if api == "openai" else key
        )
    if api == "anthropic":
        headers["anthropic-version"] = "2023-06-01"
    attempts = 1 + int(os.environ.get("PROXY_AGENT_RETRIES", "0"))
    for attempt in range(attempts):
        try:
            async with http.post(url, json=body, headers=headers) as reply:
                if reply.status >= 500 and attempt + 1 < attempts:
                    continue
                if reply.status >= 400:
                    raise ModelFailed(f"HTTP {reply.status}: {await reply.text()}")
                if body.get("stream"):
                    events = (await reply.read()).decode().split("\n\n")
                    return _assemble(api, [e for e in events if e.strip()])
                data = await reply.json()
        except aiohttp.ClientConnectionError as exc:
            if attempt + 1 < attempts:
                continue
            raise ModelFailed(f"cannot reach the model: {exc}") from exc
        return _read(api, data)
    raise ModelFailed("no answer")


def _read(api: str, data: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    if api == "openai":
        message = data["choices"][0]["message"]
        calls = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or []
        ]
        return message.get("content") or "", calls
    text = "".join(b.get("text", "") for b in data["content"] if b["type"] == "text")
    calls = [(b["id"], b["name"], json.dumps(b["input"])) for b in data["content"] if b["type"] == "tool_use"]
    return text, calls


def _assemble(api: str, events: list[str]) -> tuple[str, list[tuple[str, str, str]]]:
    text = ""
    calls: dict[int, list[str]] = {}
    for event in events:
        data_lines = [ln[5:].strip() for ln in event.splitlines() if ln.startswith("data:")]
        if not data_lines or data_lines[0] == "[DONE]":
            continue
        data = json.loads("\n".join(data_lines))
        if api == "openai":
            for choice in data.get("choices") or []:
                delta = choice.get("delta") or {}
                text += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    entry = calls.setdefault(call["index"], ["", "", ""])
                    entry[0] = call.get("id") or entry[0]
                    entry[1] = (call.get("function") or {}).get("name") or entry[1]
                    entry[2] += (call.get("function") or {}).get("arguments") or ""
        elif data.get("type") == "content_block_start" and data["content_block"]["type"] == "tool_use":
            calls[data["index"]] = [data["content_block"]["id"], data["content_block"]["name"], ""]
        elif data.get("type") == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                text += delta["text"]
            elif delta["type"] == "input_json_delta":
                calls[data["index"]][2] += delta["partial_json"]
    return text, [(i, n, a or "{}") for i, n, a in (calls[k] for k in sorted(calls))]
