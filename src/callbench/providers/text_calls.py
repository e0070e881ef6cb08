"""Find tool calls in model text: ``<tool_call>`` blocks, JSON objects/lists, Python-call syntax.

Used by prompt mode (models without native function calling) and by local checkpoints. The
parser never raises: it returns the calls it could read and, when the text plainly tried to
call a tool but could not be read, a format-failure reason.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from callbench.providers.wire import parse_arguments
from callbench.types.messages import ToolCall

_TAG_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json|python|tool_call|tool_code)?\s*(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input")


@dataclass
class TextCalls:
    """Calls read from a text, the remaining prose, and why reading failed (if it did)."""

    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""
    format_error: str | None = None


def parse_text_calls(text: str, tool_names: set[str], id_prefix: str = "call") -> TextCalls:
    """Read tool calls from model text.

    Args:
        text: The model's full text output.
        tool_names: Names of the offered tools (used to spot Python-call syntax and call attempts).
        id_prefix: Prefix of the synthesised call ids.
    """
    stripped = text.strip()
    if "<tool_call>" in stripped:
        return _from_blocks(stripped, id_prefix)
    for candidate in [m.group(1).strip() for m in _FENCE.finditer(stripped)] + [stripped]:
        found = _from_json(candidate, id_prefix) or _from_python(candidate, tool_names, id_prefix)
        if found is not None:
            return TextCalls(
                calls=found, text=_FENCE.sub("", stripped).strip() if candidate != stripped else ""
            )
    if _looks_like_attempt(stripped, tool_names):
        return TextCalls(text=text, format_error="output looks like a tool call but could not be parsed")
    return TextCalls(text=text)


def _from_blocks(text: str, id_prefix: str) -> TextCalls:
    calls: list[ToolCall] = []
    errors: list[str] = []
    for index, block in enumerate(_TAG_BLOCK.findall(text)):
        try:
            value = json.loads(block)
        except json.JSONDecodeError as exc:
            # Keep the broken call on the trace: it is a scored malformed call, not lost text.
            calls.append(
                ToolCall(
                    id=f"{id_prefix}_{index}",
                    name=_guess_name(block),
                    arguments_raw=block,
                    parse_error=f"malformed JSON in <tool_call>: {exc.msg}",
                )
            )
            continue
        call = _call_from_obj(value, f"{id_prefix}_{index}")
        if call is None:
            errors.append(f"<tool_call> block {index + 1} has no function name")
        else:
            calls.append(call)
    prose = _TAG_BLOCK.sub("", text).strip()
    return TextCalls(calls=calls, text=prose, format_error="; ".join(errors) or None if not calls else None)


def _guess_name(block: str) -> str:
    match = re.search(r'"(?:name|function)"\s*:\s*"([^"]+)"', block)
    return match.group(1) if match else ""


def _from_json(text: str, id_prefix: str) -> list[ToolCall] | None:
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_obj(item, f"{id_prefix}_{i}") for i, item in enumerate(items)]
    if not items or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _call_from_obj(value: Any, call_id: str) -> ToolCall | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # OpenAI-shaped {"function": {"name", "arguments"}}
        value = value["function"]
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if not name:
        return None
    raw: Any = next((value[k] for k in _ARG_KEYS if k in value), {})
    arguments, error = parse_arguments(raw)
    raw_text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return ToolCall(id=call_id, name=name, arguments_raw=raw_text, arguments=arguments, parse_error=error)


def _from_python(text: str, tool_names: set[str], id_prefix: str) -> list[ToolCall] | None:
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    if not nodes or not all(isinstance(n, ast.Call) for n in nodes):
        return None
    calls = [_python_call(n, f"{id_prefix}_{i}") for i, n in enumerate(nodes)]  # type: ignore[arg-type]
    if any(c is None for c in calls):
        return None
    result = [c for c in calls if c is not None]
    # A bare call to something that is not a tool (``print(x)``) is prose, not a tool call.
    if len(result) == 1 and not isinstance(tree, ast.List) and result[0].name not in tool_names:
        return None
    return result


def _python_call(node: ast.Call, call_id: str) -> ToolCall | None:
    name = _dotted(node.func)
    if name is None:
        return None
    raw = ast.unparse(node)
    if node.args:
        return ToolCall(
            id=call_id,
            name=name,
            arguments_raw=raw,
            parse_error="positional arguments in a Python-style call; keywords are required",
        )
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        try:
            arguments[str(keyword.arg)] = ast.literal_eval(keyword.value)
        except ValueError:
            return ToolCall(
                id=call_id,
                name=name,
                arguments_raw=raw,
                parse_error=f"argument {keyword.arg!r} is not a literal value",
            )
    return ToolCall(id=call_id, name=name, arguments_raw=raw, arguments=arguments)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _looks_like_attempt(text: str, tool_names: set[str]) -> bool:
    if text[:1] in "[{" or "```" in text:
        return True
    return any(re.search(rf"(?<![\w.]){re.escape(n)}\s*\(", text) for n in tool_names)
