"""Find tool calls in model text: ``<tool_call>`` blocks, JSON objects/lists, Python-call syntax.

Two readers, for two questions:

* :func:`parse_text_calls` — prompt mode (models without native function calling) and local
  checkpoints: the text *is* the channel for calls. It never raises: it returns the calls it could
  read and, when the text plainly tried to call a tool but could not be read, a format-failure reason.
* :func:`detect_text_calls` — native mode: the answer came back with no structured calls, but its
  text holds a call in a serialisation a serving stack's tool-call parser should have turned into
  one (:data:`TEXT_CALL_FORMATS`). Such an answer is a suspected serving fault, not a plain "answered
  without calling". Deliberately strict: only whole, readable calls count, bare JSON must name an
  offered tool, and prose that merely mentions a tool is never a call.

No parser library is used: the parsers that cover these formats live inside whole serving engines
(vLLM, SGLang), ``openai-harmony`` covers one format and loads its encoding from the network, and the
small stand-alone ones repair broken output, which would hide exactly the faults this is meant to show.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from callbench.providers.wire import parse_arguments
from callbench.types.jsoncodec import parse_json_value
from callbench.types.messages import ToolCall

_TAG_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json|python|tool_call|tool_code)?\s*(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input")

TEXT_CALL_FORMATS = ("hermes", "mistral", "llama", "harmony", "json", "pythonic")
"""Serialisations :func:`detect_text_calls` knows: Hermes/Qwen ``<tool_call>{...}</tool_call>``,
Mistral ``[TOOL_CALLS]`` (a JSON list, or ``name[ARGS]{...}``), Llama ``<|python_tag|>`` and bare
``{"name": ..., "parameters": ...}``, gpt-oss harmony (``to=functions.NAME ... <|message|>{...}``),
any other JSON object or list of calls naming offered tools, and a pythonic list ``[tool(a=1)]``."""

# Every key a call-shaped JSON object may carry; an object with any other key is data, not a call.
_CALL_KEYS = frozenset({*_NAME_KEYS, *_ARG_KEYS, "id", "type", "call_id"})
# End-of-turn tokens a server that fails to parse calls may also leave in the text.
_END_TOKENS = re.compile(
    r"(?:<\|eot_id\|>|<\|eom_id\|>|<\|im_end\|>|<\|end\|>|<\|return\|>|<\|call\|>|</s>|<eos>|<end_of_turn>)\s*$"
)
_CLOSED_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_HARMONY = re.compile(
    r"(?:<\|start\|>\s*assistant\s*)?(?:<\|channel\|>\s*commentary\s*)?"
    r"to=functions\.(?P<name>[\w.\-]+)[^<]*(?:<\|channel\|>[^<]*)?(?:<\|constrain\|>[^<]*)?"
    r"<\|message\|>(?P<args>.*?)(?:<\|call\|>|<\|end\|>|<\|return\|>|(?=<\|start\|>)|$)",
    re.DOTALL,
)
_MISTRAL_TAG = "[TOOL_CALLS]"
_MISTRAL_NAMED = re.compile(r"^\s*(?P<name>[\w.\-]+)\s*(?:\[CALL_ID\]\s*[\w\-]+\s*)?\[ARGS\]", re.DOTALL)
_PYTHON_TAG = "<|python_tag|>"


@dataclass
class TextCallMatch:
    """A call serialisation found in an answer's text (native mode)."""

    format: str
    """One of :data:`TEXT_CALL_FORMATS`."""
    calls: list[ToolCall]
    """The calls read from it, each with ``recovered_from`` set to ``format``."""
    text: str
    """The prose left once the call text is taken out."""


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
            value = parse_json_value(block)
        except ValueError as exc:
            # Keep the broken call on the trace: it is a scored malformed call, not lost text.
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else f"unusable JSON ({exc})"
            calls.append(
                ToolCall(
                    id=f"{id_prefix}_{index}",
                    name=_guess_name(block),
                    arguments_raw=block,
                    parse_error=f"malformed JSON in <tool_call>: {reason}",
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
        value = parse_json_value(text)
    except ValueError:  # not JSON, or JSON too deep or too large to hold as a value
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
    checked, error = parse_arguments(arguments)  # refuses values nested too deep to keep
    return ToolCall(id=call_id, name=name, arguments_raw=raw, arguments=checked, parse_error=error)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _looks_like_attempt(text: str, tool_names: set[str]) -> bool:
    # text[:1] is "" for an empty answer, and "" is in every string: an empty answer is no attempt.
    if (text[:1] and text[:1] in "[{") or "```" in text:
        return True
    return any(re.search(rf"(?<![\w.]){re.escape(n)}\s*\(", text) for n in tool_names)


# --- native mode: calls a server left in the text ---------------------------------------------


def detect_text_calls(text: str, tool_names: set[str], id_prefix: str = "call") -> TextCallMatch | None:
    """The tool call(s) an answer without structured calls holds in its text, or ``None``.

    Args:
        text: The answer's text as received.
        tool_names: The offered tools. Bare JSON and pythonic calls must name one of them; the
            tagged serialisations (whose markers no prose uses) need only a name.
        id_prefix: Prefix of the synthesised call ids (unique per round).

    Only readable calls count: a serialisation whose JSON is broken is the model's fault (a working
    server parser would not have read it either), so it is not reported.
    """
    stripped = text.strip()
    if not stripped or not tool_names:
        return None
    for reader in (_harmony, _mistral, _python_tag, _hermes, _bare):
        found = reader(stripped, tool_names)
        if found is not None:
            fmt, items, prose = found
            calls = [_readable(name, args, f"{id_prefix}_{i}", fmt) for i, (name, args) in enumerate(items)]
            if not calls or any(c is None for c in calls):
                return None
            return TextCallMatch(format=fmt, calls=[c for c in calls if c is not None], text=prose)
    return None


_Found = tuple[str, list[tuple[str, Any]], str]
"""(format, [(tool name, raw arguments)], prose left)."""


def _readable(name: Any, raw: Any, call_id: str, fmt: str) -> ToolCall | None:
    """A call whose name is a string and whose arguments are a JSON object; else ``None``."""
    if not isinstance(name, str) or not name.strip():
        return None
    arguments, error = parse_arguments(raw)
    if error is not None or arguments is None:
        return None
    raw_text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return ToolCall(
        id=call_id, name=name.strip(), arguments_raw=raw_text, arguments=arguments, recovered_from=fmt
    )


def _strip_end(text: str) -> str:
    while True:
        cut = _END_TOKENS.sub("", text).rstrip()
        if cut == text:
            return text
        text = cut


def _harmony(text: str, _names: set[str]) -> _Found | None:
    matches = list(_HARMONY.finditer(text))
    if not matches:
        return None
    items = [(m.group("name"), _strip_end(m.group("args").strip())) for m in matches]
    prose = _HARMONY.sub("", text)
    # Whatever harmony framing is left around the calls (an analysis channel...) is not prose.
    prose = re.sub(r"<\|channel\|>\s*\w+|<\|[a-z_]+\|>|^\s*(?:commentary|analysis|final)\b", " ", prose)
    return "harmony", items, " ".join(prose.split())


def _mistral(text: str, _names: set[str]) -> _Found | None:
    if _MISTRAL_TAG not in text:
        return None
    head, _, rest = text.partition(_MISTRAL_TAG)
    items: list[tuple[str, Any]] = []
    for part in (_strip_end(p.strip()) for p in rest.split(_MISTRAL_TAG)):
        named = _MISTRAL_NAMED.match(part)
        if named:  # v11+ tokenizers: name[ARGS]{...}
            items.append((named.group("name"), part[named.end() :].strip()))
            continue
        objects = _json_calls(part)
        if objects is None:
            return None
        items += objects
    return ("mistral", items, head.strip()) if items else None


def _python_tag(text: str, _names: set[str]) -> _Found | None:
    if _PYTHON_TAG not in text:
        return None
    head, _, rest = text.partition(_PYTHON_TAG)
    items: list[tuple[str, Any]] = []
    # Llama 3.1 separates several JSON calls with ";" (code for its built-in interpreter is no call).
    for part in filter(None, (p.strip() for p in _split_top_level(_strip_end(rest.strip()), ";"))):
        objects = _json_calls(part)
        if objects is None:
            return None
        items += objects
    return ("llama", items, head.strip()) if items else None


def _hermes(text: str, _names: set[str]) -> _Found | None:
    if "<tool_call>" not in text:
        return None
    blocks = _CLOSED_BLOCK.findall(text)
    rest = _CLOSED_BLOCK.sub("", text)
    if "<tool_call>" in rest:  # an unclosed block: the answer was cut or broken, not a parser miss
        return None
    items: list[tuple[str, Any]] = []
    for block in blocks:
        objects = _json_calls(block)
        if objects is None:
            return None
        items += objects
    return ("hermes", items, _strip_end(rest.strip())) if items else None


def _bare(text: str, names: set[str]) -> _Found | None:
    """The whole answer (or one fenced block that is the whole answer) is JSON or a pythonic list."""
    body = _strip_end(text)
    fenced = re.fullmatch(r"```[\w-]*\s*(.*?)\s*```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1)
    if body[:1] in "[{":
        value = _loads(body)
        if value is not None:
            objects = _json_calls(body)
            if objects is None or any(name not in names for name, _ in objects):
                return None
            llama = isinstance(value, dict) and "parameters" in value and "arguments" not in value
            return ("llama" if llama else "json"), objects, ""
    if body.startswith("[") and body.endswith("]"):
        calls = _from_python(body, names, "call")
        if calls and all(c.name in names and c.arguments is not None for c in calls):
            return "pythonic", [(c.name, c.arguments) for c in calls], ""
    return None


def _loads(text: str) -> Any:
    try:
        return parse_json_value(text)
    except ValueError:
        return None


def _json_calls(text: str) -> list[tuple[str, Any]] | None:
    """(name, raw arguments) of each call in a JSON object or list of call-shaped objects."""
    value = _loads(text.strip())
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list) and len(value) == 1:
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    out: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, dict) or not item or set(item) - _CALL_KEYS:
            return None
        if isinstance(item.get("function"), dict):  # OpenAI-shaped {"type": "function", "function": {...}}
            item = item["function"]
            if set(item) - _CALL_KEYS:
                return None
        name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
        if name is None:
            return None
        out.append((name, next((item[k] for k in _ARG_KEYS if k in item), {})))
    return out or None


def _split_top_level(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside JSON strings and brackets."""
    parts, depth, start, quoted, escaped = [], 0, 0, False, False
    for i, ch in enumerate(text):
        if quoted:
            escaped, quoted = (not escaped and ch == "\\"), quoted and (escaped or ch != '"')
            continue
        if ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts
