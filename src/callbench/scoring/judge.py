"""LLM judges for ComplexEval: call equivalence (five rules) and response completeness/correctness.

Any callbench provider can judge. Every verdict is cached under a hash of the judge model, the
prompt hash and the exact inputs, so re-scoring a run never asks twice; the cache can live in a
folder (one JSON-lines file) so ``callbench score`` reuses verdicts offline.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from callbench._hashing import sha256_of
from callbench.errors import ProviderError
from callbench.messages import GenerationSettings, Message
from callbench.scoring.cfb_engine import JudgeLookup
from callbench.scoring.cfb_types import GoldCall, PredCall
from callbench.suites.cfb_data import CfbSample

CALL_SYSTEM = """You decide whether two function calls made for the same user request are equivalent:
would the function, given either call, return the same information for this request?
Treat the calls as equivalent when they differ only in one of these ways:
1. A value is written in another language but means the same thing.
2. A value uses another surface form of the same entity (an abbreviation, a full name, an official
   name with or without a qualifier, e.g. "NYC" and "New York City").
3. A place is given with or without its country or region suffix.
4. Arguments appear in another order, or a list holds the same items in another order.
5. One call omits a parameter that the other sets to that parameter's documented default value.
Any other difference in meaning (another date, number, id, filter, sort or place) is NOT equivalent.
Reply with one JSON object only: {"is_equal": true or false, "reason": "<one sentence>"}"""

COMPLETENESS_SYSTEM = """You grade how completely an assistant's final answer addresses a user's request.
Score 2 if every part of the request is addressed, 1 if only some parts are, 0 if none is (or the
answer only says it cannot help). Judge coverage only, not factual accuracy.
Reply with one JSON object only: {"score": 0, 1 or 2, "reason": "<one sentence>"}"""

CORRECTNESS_SYSTEM = """You grade whether an assistant's final answer is correct, given the reference
function calls and API responses that answer the user's request. Score 2 if everything the answer
states agrees with the API responses, 1 if it is partly consistent (some statements are wrong or
unsupported), 0 if it contradicts them or is unrelated. Judge accuracy only, not completeness.
Reply with one JSON object only: {"score": 0, 1 or 2, "reason": "<one sentence>"}"""

PROMPT_HASH = sha256_of({"call": CALL_SYSTEM, "completeness": COMPLETENESS_SYSTEM, "correctness": CORRECTNESS_SYSTEM})
"""Recorded with every judged verdict; changing any prompt changes it (and invalidates the cache)."""

JUDGE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=512, tool_choice="none")
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a judge reply (code fences and chatter around it are ignored)."""
    match = _JSON_OBJECT.search(text or "")
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class VerdictCache:
    """Judge verdicts by hash, in memory and optionally appended to ``<folder>/complexeval-judge.jsonl``."""

    def __init__(self, folder: Path | None = None) -> None:
        self.path = Path(folder) / "complexeval-judge.jsonl" if folder else None
        self.entries: dict[str, Any] = {}
        if self.path and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    self.entries[row["key"]] = row["value"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a torn line from an interrupted run: that verdict is asked again

    def get(self, key: str) -> Any:
        return self.entries.get(key)

    def put(self, key: str, value: Any) -> None:
        self.entries[key] = value
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n")


class Judge:
    """An LLM judge over any provider (anything with ``async generate(messages, tools, settings)``)."""

    def __init__(self, provider: Any, *, label: str | None = None, cache: VerdictCache | None = None) -> None:
        self.provider = provider
        self.label = label or f"{getattr(provider, 'name', 'provider')}:{getattr(provider, 'model', '')}"
        self.cache = cache or VerdictCache()
        self.requests = 0

    def describe(self) -> dict[str, Any]:
        return {"judge_model": self.label, "prompt_hash": PROMPT_HASH}

    async def _ask(self, system: str, user: str, *, tolerate_outage: bool) -> dict[str, Any] | None:
        self.requests += 1
        try:
            turn = await self.provider.generate([Message.system(system), Message.user(user)], [], JUDGE_SETTINGS)
        except ProviderError:
            # A judge outage is never a model failure: a missing response score lowers coverage; a
            # missing call verdict makes the scoring fail (an error record) rather than a mismatch.
            if tolerate_outage:
                return None
            raise
        return parse_json_object(turn.text)

    # ------------------------------------------------------------ call equivalence

    def call_key(self, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None) -> str:
        return sha256_of({"kind": "call", "judge": self.label, "prompt": PROMPT_HASH, "function": function,
                          "pred": [pred.name, pred.arguments], "gold": [gold.name, gold.arguments]})

    def lookup_call(self, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None) -> bool | None:
        """The cached verdict for a pair, or ``None`` when the judge has not seen it."""
        value = self.cache.get(self.call_key(pred, gold, function))
        return None if value is None else bool(value["is_equal"])

    async def judge_call(self, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None, query: str) -> bool:
        """Ask (or recall) whether ``pred`` is equivalent to ``gold``; unparsable replies mean no."""
        key = self.call_key(pred, gold, function)
        cached = self.cache.get(key)
        if cached is not None:
            return bool(cached["is_equal"])
        user = (
            f"User request:\n{query}\n\nFunction definition:\n{json.dumps(function, ensure_ascii=False)}\n\n"
            f"Call 1:\n{json.dumps({'name': pred.name, 'arguments': pred.arguments}, ensure_ascii=False)}\n\n"
            f"Call 2:\n{json.dumps({'name': gold.name, 'arguments': gold.arguments}, ensure_ascii=False)}"
        )
        reply = await self._ask(CALL_SYSTEM, user, tolerate_outage=False)
        if reply is None or not isinstance(reply.get("is_equal"), bool):
            return False  # as upstream: no parsable verdict counts as not equal (and is not cached)
        self.cache.put(key, {"is_equal": reply["is_equal"], "reason": str(reply.get("reason", ""))})
        return reply["is_equal"]

    # ------------------------------------------------------------ response quality

    async def score_response(self, kind: str, context: str, answer: str) -> int | None:
        """0-2 completeness or correctness score; ``None`` when the judge gave no valid score."""
        system = COMPLETENESS_SYSTEM if kind == "completeness" else CORRECTNESS_SYSTEM
        key = sha256_of({"kind": kind, "judge": self.label, "prompt": PROMPT_HASH, "context": context,
                         "answer": answer})
        cached = self.cache.get(key)
        if cached is not None:
            return int(cached["score"])
        reply = await self._ask(system, f"{context}\n\nAssistant's final answer:\n{answer}", tolerate_outage=True)
        score = _as_score(reply.get("score") if reply else None)
        if score is None:
            return None
        self.cache.put(key, {"score": score, "reason": str(reply.get("reason", "")) if reply else ""})
        return score


def _as_score(value: Any) -> int | None:
    """A 0-2 score from a judge reply (``2``, ``2.0`` or ``"2"``), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value in (0, 1, 2) else None


def judge_lookup(judge: Judge, sample: CfbSample, asked: dict[str, bool] | None = None) -> JudgeLookup:
    """A synchronous verdict lookup for an episode: the judge's cache, then ``asked`` (verdicts of
    the current scoring, including uncacheable ones); ``None`` when the pair was never judged."""
    functions = {f["name"]: f for f in sample.functions}
    extra = asked if asked is not None else {}

    def lookup(pred: PredCall, gold: GoldCall) -> bool | None:
        function = functions.get(gold.name)
        cached = judge.lookup_call(pred, gold, function)
        return cached if cached is not None else extra.get(judge.call_key(pred, gold, function))

    return lookup
