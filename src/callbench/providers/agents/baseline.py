"""The ``baseline`` agent: an honest non-LLM function caller.

It sees only what a model sees — the conversation, the offered tool schemas and the tool results —
never the expected steps. It splits the request into clauses, calls the tool that matches each
clause best (lexical relevance), and fills arguments with values extracted from the request
(quoted text, numbers, dates, e-mail addresses, file names, enum words, proper names) or from
earlier results with the same key. Its scores are real, and a floor any model should beat.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from callbench.errors import ConfigError
from callbench.providers.base import Provider
from callbench.tools.retrieve import MODEL_VIEW_FIELDS, index_for, split_clauses
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.dsl import parse_tool_content
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|(?<![A-Za-z])\'([^\']+)\'(?![A-Za-z])')
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
GENERIC_FILE_TYPES = ("txt", "csv", "tsv", "json", "md", "png", "svg", "pdf")
"""File extensions the baseline knows in any domain; a suite adds its own (``vocabulary.file_types``)."""
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")
PROPER = re.compile(r"\b([A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*)\b")
TRUE_WORDS = ("show", "enable", "turn on", "display", "visible", " on ")
FALSE_WORDS = ("hide", "disable", "turn off", "hidden", " off ")


class BaselineAgent(Provider):
    """The baseline; :meth:`for_case` adds the suite's declared vocabulary (its domain's file types)."""

    name = "baseline"
    model = "baseline"
    needs_network = False

    def __init__(self, file_types: tuple[str, ...] = GENERIC_FILE_TYPES) -> None:
        self.file_types = file_types

    def for_case(self, case: Case) -> Provider:
        vocabulary = case.metadata.get("vocabulary") or {}
        extra = tuple(t for t in vocabulary.get("file_types", ()) if t not in GENERIC_FILE_TYPES)
        return BaselineAgent(GENERIC_FILE_TYPES + extra) if extra else self

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        request = next((m.content for m in messages if m.role == "user"), "")
        clauses = split_clauses(request) or [request]
        made = sum(len(m.tool_calls) for m in messages if m.role == "assistant")
        results = [parse_tool_content(m.content) for m in messages if m.role == "tool"]
        if made >= len(clauses) or not tools:
            return ModelTurn(text=_answer(results), model="baseline", finish_reason="stop")
        tool = _best_tool(clauses[made], request, tools)
        if tool is None:
            return ModelTurn(text="I could not find a suitable tool for this request.", model="baseline")
        args = fill_arguments(tool, clauses[made], request, results, file_pattern(self.file_types))
        call = ToolCall(id=f"call_{made + 1}", name=tool.name, arguments_raw=json.dumps(args), arguments=args)
        return ModelTurn(tool_calls=[call], model="baseline", finish_reason="tool_calls")


def _best_tool(clause: str, request: str, tools: list[ToolContract]) -> ToolContract | None:
    # Only what a model is shown: name, description, parameter names and descriptions; never the
    # registry's curated keywords or categories.
    index = index_for(tools, MODEL_VIEW_FIELDS)
    local, overall = index.scores(clause), index.scores(request)
    ranked = sorted(range(len(tools)), key=lambda i: (-(local[i] + 0.2 * overall[i]), tools[i].name))
    best = ranked[0]
    return tools[best] if local[best] + overall[best] > 0 else None


def _answer(results: list[Any]) -> str:
    if not results:
        return "I could not complete this request."
    text = json.dumps(results[-1], ensure_ascii=False, default=str)
    return "Done. Result: " + (text if len(text) <= 400 else text[:397] + "...")


@lru_cache(maxsize=32)
def file_pattern(file_types: tuple[str, ...] = GENERIC_FILE_TYPES) -> re.Pattern[str]:
    """File names with one of ``file_types`` as extension."""
    alternatives = "|".join(re.escape(t) for t in sorted(file_types, key=len, reverse=True))
    return re.compile(rf"\b[\w.-]+\.(?:{alternatives})\b", re.I)


def fill_arguments(
    tool: ToolContract, clause: str, request: str, results: list[Any], files: re.Pattern[str] | None = None
) -> dict[str, Any]:
    """Argument values found in the clause (then the whole request, then earlier results)."""
    props: dict[str, Any] = tool.parameters.get("properties", {})
    required = list(tool.parameters.get("required", []))
    order = required + [k for k in props if k not in required]
    files = files or file_pattern()
    pools = _Evidence(clause, files), _Evidence(request, files)
    out: dict[str, Any] = {}
    for key in order:
        value = None
        for pool in pools:
            value = pool.take(key, props.get(key) or {})
            if value is not None:
                break
        if value is None:
            value = _from_results(key, results)
        if value is None and key in required:
            value = _fallback(props.get(key) or {})
        if value is not None:
            out[key] = value
    return out


class _Evidence:
    """Values mentioned in a piece of text, consumed as they are used."""

    def __init__(self, text: str, files: re.Pattern[str]) -> None:
        self.text = text
        self.lower = f" {text.lower()} "
        self.quoted = [next(g for g in m if g) for m in QUOTED.findall(text)]
        self.dates = DATE.findall(text)
        self.times = TIME.findall(text)
        self.emails = EMAIL.findall(text)
        self.files = files.findall(text)
        stripped = DATE.sub(" ", TIME.sub(" ", EMAIL.sub(" ", QUOTED.sub(" ", text))))
        self.numbers = [float(n.replace(",", "")) for n in NUMBER.findall(stripped)]
        self.proper = [p for p in PROPER.findall(QUOTED.sub(" ", text)) if not self._sentence_start(p)]

    def _sentence_start(self, phrase: str) -> bool:
        position = self.text.find(phrase)
        before = self.text[:position].rstrip()
        return position == 0 or before.endswith((".", "?", "!", ":"))

    def take(self, key: str, schema: dict[str, Any]) -> Any:
        kind = schema.get("type", "string")
        name = key.lower()
        if schema.get("enum"):
            return next((v for v in schema["enum"] if isinstance(v, str) and _mentions(self.lower, v)), None)
        if kind == "boolean":
            if any(w in self.lower for w in TRUE_WORDS):
                return True
            return False if any(w in self.lower for w in FALSE_WORDS) else None
        if kind in ("integer", "number"):
            if not self.numbers:
                return None
            value = self.numbers.pop(0)
            return int(value) if kind == "integer" else value
        if kind != "string":
            return None
        return self._string(name, schema)

    def _string(self, name: str, schema: dict[str, Any]) -> str | None:
        pattern = str(schema.get("pattern", ""))
        if "date" in name or r"\d{4}-" in pattern:
            return _pop(self.dates)
        if "time" in name or pattern.startswith(r"^\d{2}:"):
            return _pop(self.times)
        if "email" in name or name in ("to", "recipient"):
            return _pop(self.emails)
        if "file" in name or "path" in name:
            return _pop(self.files) or _pop(self.quoted)
        return _pop(self.quoted) or _pop(self.proper)


def _mentions(lower_text: str, word: str) -> bool:
    w = word.lower()
    return (
        f" {w} " in lower_text
        or f" {w.replace('_', ' ')} " in lower_text
        or re.search(rf"\b{re.escape(w)}\b", lower_text) is not None
    )


def _pop(items: list[str]) -> str | None:
    return items.pop(0) if items else None


def _from_results(key: str, results: list[Any]) -> Any:
    for result in reversed(results):
        if isinstance(result, dict):
            if key in result and result[key] not in (None, "", [], {}):
                return result[key]
            for alias in ("email",) if key in ("to", "recipient") else ():
                if alias in result:
                    return result[alias]
    return None


def _fallback(schema: dict[str, Any]) -> Any:
    if "default" in schema:
        return schema["default"]
    return None


def make_provider(spec: str) -> Provider:
    if spec:
        raise ConfigError(f"the baseline agent takes no options (got {spec!r})")
    return BaselineAgent()
