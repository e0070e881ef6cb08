"""Top-k lexical tool retrieval.

Each tool is indexed by the terms of its name, keywords, parameter names, category and
description, weighted by field and by inverse document frequency. Multi-step instructions are
split into clauses; each clause contributes its best candidates before the global ranking fills
the remaining slots, so a late step's tool is not crowded out by an early step's neighbours.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from callbench.types.contract import ToolContract

FIELD_WEIGHTS = {
    "name": 3.2,
    "keywords": 2.4,
    "params": 1.5,
    "category": 0.9,
    "description": 0.7,
    "param_text": 0.4,
}
RETRIEVAL_FIELDS = ("name", "keywords", "params", "category", "description")
"""What the harness's retrieval indexes: the whole contract, including curated keywords and category."""
MODEL_VIEW_FIELDS = ("name", "params", "description", "param_text")
"""What a model is shown of a tool: its name, description and parameter schema (names and descriptions).
Built-in agents that stand in for a model must rank tools from this view only."""
NAME_IN_QUERY_BONUS = 8.0
PER_CLAUSE = 2
CLAUSE_WEIGHT = 0.35
STOP_WORDS = frozenset(
    "the and for with this that from into please can could would should tell show about your then using "
    "make perform current all any are was were will its has have had not but use get".split()
)
# Request verbs and the words tool names use for the same action (applied to queries only).
ACTION_ALIASES = {
    "retrieve": ("get", "fetch"),
    "fetch": ("get",),
    "obtain": ("get",),
    "show": ("display", "get"),
    "find": ("search", "locate"),
    "look": ("search", "get"),
    "lookup": ("search", "get"),
    "load": ("open", "import", "read"),
    "open": ("load",),
    "import": ("load",),
    "navigate": ("jump", "goto", "position"),
    "go": ("navigate", "jump"),
    "move": ("navigate", "pan"),
    "calculate": ("compute", "calc", "analyze"),
    "compute": ("calculate", "calc"),
    "analyse": ("analyze",),
    "remove": ("delete", "clear"),
    "erase": ("delete",),
    "create": ("add", "make", "new"),
    "add": ("create",),
    "save": ("export", "write"),
    "write": ("save", "export"),
    "export": ("save",),
    "list": ("get",),
    "change": ("set", "update"),
    "modify": ("update", "set", "edit"),
    "edit": ("update",),
}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CLAUSE_SPLIT = re.compile(
    r"\b(?:and then|then|after that|afterwards|next|finally|and also)\b|[;\n]|\.\s+|,\s*and\s+", re.IGNORECASE
)


def tokenize(text: str) -> list[str]:
    """Lower-cased terms longer than two characters, crude plural/-ing stemming. camelCase words give
    their parts and the whole word (``UniProt`` gives ``uni``, ``prot`` and ``uniprot``)."""
    out = []
    for whole in _NON_ALNUM.split(text):
        parts = _CAMEL.sub(" ", whole).split()
        for word in [p.lower() for p in parts] + ([whole.lower()] if len(parts) > 1 else []):
            if len(word) > 2 and word not in STOP_WORDS:
                out.append(stem(word))
    return out


def expand(terms: list[str]) -> set[str]:
    """Query terms plus the usual tool-name words for the same action."""
    out = set(terms)
    for term in terms:
        out.update(stem(alias) for alias in ACTION_ALIASES.get(term, ()))
    return out


def stem(word: str) -> str:
    for suffix in ("ing", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


@dataclass
class RetrievalIndex:
    """Inverted index over a fixed list of tools."""

    tools: list[ToolContract]
    postings: dict[str, list[tuple[int, float]]]
    name_forms: list[tuple[str, str]]

    @classmethod
    def build(cls, tools: Sequence[ToolContract], fields: Sequence[str] = RETRIEVAL_FIELDS) -> RetrievalIndex:
        fields_per_tool = [{f: terms for f, terms in _fields(t).items() if f in fields} for t in tools]
        df: dict[str, int] = defaultdict(int)
        for tool_fields in fields_per_tool:
            for term in set().union(*tool_fields.values()) if tool_fields else ():
                df[term] += 1
        n = len(tools)
        postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for index, tool_fields in enumerate(fields_per_tool):
            weights: dict[str, float] = defaultdict(float)
            for field, terms in tool_fields.items():
                for term in terms:
                    weights[term] += FIELD_WEIGHTS[field]
            for term, weight in weights.items():
                postings[term].append((index, weight * math.log(1 + (n + 1) / (df[term] + 1))))
        forms = [(t.name.lower(), t.name.lower().replace("_", " ")) for t in tools]
        return cls(list(tools), dict(postings), forms)

    def scores(self, text: str) -> list[float]:
        out = [0.0] * len(self.tools)
        # Sorted, not set order: float sums must not depend on the process's string-hash seed, or two
        # tools that tie would rank differently from one run to the next.
        for term in sorted(expand(tokenize(text))):
            for index, weight in self.postings.get(term, ()):
                out[index] += weight
        lowered = text.lower()
        for index, (raw, spaced) in enumerate(self.name_forms):
            if raw in lowered or spaced in lowered:
                out[index] += NAME_IN_QUERY_BONUS
        return out


def _fields(tool: ToolContract) -> dict[str, set[str]]:
    props = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    descriptions = [str(p.get("description", "")) for p in props.values() if isinstance(p, dict)]
    return {
        "name": set(tokenize(tool.name)),
        "param_text": {t for d in descriptions for t in tokenize(d)},
        "keywords": {t for k in tool.keywords for t in tokenize(k)},
        "params": {t for p in props for t in tokenize(p)},
        "category": set(tokenize(tool.category)),
        "description": set(tokenize(tool.description)),
    }


_INDEX_CACHE: dict[tuple[tuple[str, ...], tuple[str, ...]], RetrievalIndex] = {}


def index_for(tools: Sequence[ToolContract], fields: Sequence[str] = RETRIEVAL_FIELDS) -> RetrievalIndex:
    """A cached index for this exact tool list over ``fields`` (``MODEL_VIEW_FIELDS`` for agents)."""
    key = (tuple(t.name for t in tools), tuple(fields))
    index = _INDEX_CACHE.get(key)
    if index is None or index.tools != list(tools):
        if len(_INDEX_CACHE) > 256:
            _INDEX_CACHE.clear()
        index = _INDEX_CACHE[key] = RetrievalIndex.build(tools, fields)
    return index


def split_clauses(text: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(text) if p and p.strip()]
    return parts if len(parts) > 1 else []


def select_tools(query: str, tools: Sequence[ToolContract], k: int | None = 24) -> list[ToolContract]:
    """At most ``k`` tools ranked by relevance to ``query`` (``k=None``: every tool, original order)."""
    if k is None or len(tools) <= k:
        return list(tools)
    index = index_for(tools)
    global_scores = index.scores(query)
    clause_scores = [index.scores(clause) for clause in split_clauses(query)]
    ranking = list(global_scores)
    for scores in clause_scores:
        for i, value in enumerate(scores):
            ranking[i] = max(ranking[i], global_scores[i] + CLAUSE_WEIGHT * value) if value else ranking[i]
    chosen: list[int] = []
    for scores in clause_scores:
        best = sorted((i for i, v in enumerate(scores) if v > 0), key=lambda i: (-scores[i], tools[i].name))
        chosen.extend(i for i in best[:PER_CLAUSE] if i not in chosen)
    for i in sorted(range(len(tools)), key=lambda i: (-ranking[i], tools[i].name)):
        if len(chosen) >= k:
            break
        if i not in chosen:
            chosen.append(i)
    return [tools[i] for i in chosen[:k]]


def retrieval_recall(
    expected: list[list[str]], offered: set[str], equivalents: dict[str, set[str]]
) -> float | None:
    """Share of expected call instances whose tool (or an alternative or equivalent) was offered."""
    if not expected:
        return None
    hits = 0
    for alternatives in expected:
        names = set(alternatives)
        for name in alternatives:
            names |= equivalents.get(name, set())
        hits += bool(names & offered)
    return hits / len(expected)
