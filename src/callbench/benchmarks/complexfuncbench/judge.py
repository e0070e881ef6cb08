"""LLM judges for ComplexEval: call equivalence (five rules) and response completeness/correctness.

Any callbench provider can judge. Every verdict is cached under a hash of the judge model, the
prompt hash and the exact inputs, so re-scoring a run never asks twice; the cache can live in a
folder (one JSON-lines file) so ``callbench score`` reuses verdicts offline.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from callbench.benchmarks.complexfuncbench.data import CfbSample
from callbench.benchmarks.complexfuncbench.definitions import GoldCall, PredCall
from callbench.benchmarks.complexfuncbench.engine import CallResult, Episode, JudgeLookup
from callbench.plugin import (
    GenerationSettings,
    JudgeCache,
    Message,
    ProviderError,
    parse_json_object,
    sha256_of,
)

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

PROMPT_HASH = sha256_of(
    {"call": CALL_SYSTEM, "completeness": COMPLETENESS_SYSTEM, "correctness": CORRECTNESS_SYSTEM}
)
"""Recorded with every judged verdict; changing any prompt changes it (and invalidates the cache)."""

JUDGE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=512, tool_choice="none")


class VerdictCache(JudgeCache):
    """ComplexEval's judge verdicts, in memory and optionally in ``<folder>/complexeval-judge.jsonl``."""

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__(folder, "complexeval-judge.jsonl")


class Judge:
    """An LLM judge over any provider (anything with ``async generate(messages, tools, settings)``)."""

    def __init__(self, provider: Any, *, label: str | None = None, cache: VerdictCache | None = None) -> None:
        self.provider = provider
        self.label = label or f"{getattr(provider, 'name', 'provider')}:{getattr(provider, 'model', '')}"
        self.cache = cache or VerdictCache()
        self.requests = 0
        self._transient: dict[str, bool] = {}
        """Verdicts not written to the cache (unparsable replies = "not equal"), kept for this
        process so the run's answer and its scoring agree."""
        self._inflight: dict[str, asyncio.Task[bool]] = {}
        """Questions being asked now: concurrent cases asking about the same pair wait for one request."""

    def describe(self) -> dict[str, Any]:
        return {"judge_model": self.label, "prompt_hash": PROMPT_HASH}

    async def _ask(self, system: str, user: str, *, tolerate_outage: bool) -> dict[str, Any] | None:
        self.requests += 1
        try:
            turn = await self.provider.generate(
                [Message.system(system), Message.user(user)], [], JUDGE_SETTINGS
            )
        except ProviderError:
            # A judge outage is never a model failure: a missing response score lowers coverage; a
            # missing call verdict makes the scoring fail (an error record) rather than a mismatch.
            if tolerate_outage:
                return None
            raise
        return parse_json_object(turn.text)

    # ------------------------------------------------------------ call equivalence

    def call_key(self, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None) -> str:
        return sha256_of(
            {
                "kind": "call",
                "judge": self.label,
                "prompt": PROMPT_HASH,
                "function": function,
                "pred": [pred.name, pred.arguments],
                "gold": [gold.name, gold.arguments],
            }
        )

    def lookup_call(self, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None) -> bool | None:
        """The known verdict for a pair, or ``None`` when the judge has not seen it."""
        key = self.call_key(pred, gold, function)
        value = self.cache.get(key)
        return bool(value["is_equal"]) if value is not None else self._transient.get(key)

    async def judge_call(
        self, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None, query: str
    ) -> bool:
        """Ask (or recall) whether ``pred`` is equivalent to ``gold``; unparsable replies mean no.

        Safe under concurrency: while one request about a pair is under way, other callers asking
        about the same pair wait for it instead of sending their own.
        """
        key = self.call_key(pred, gold, function)
        known = self.lookup_call(pred, gold, function)
        if known is not None:
            return known
        task = self._inflight.get(key)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = asyncio.ensure_future(self._ask_call(key, pred, gold, function, query))
            self._inflight[key] = task
            task.add_done_callback(functools.partial(self._settled, key))
        from callbench.providers.model import endpoint_time  # lazy: the catalog imports scorers

        # A cancelled waiter (a case that timed out) must not cancel the others' request; the wait
        # is endpoint time on the waiting case's clock (the request runs in a task of its own).
        return await endpoint_time(asyncio.shield(task))

    def _settled(self, key: str, task: asyncio.Task[bool]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]
        if not task.cancelled():
            task.exception()  # retrieved here so an outage nobody waits for any more is not logged twice

    async def _ask_call(
        self, key: str, pred: PredCall, gold: GoldCall, function: dict[str, Any] | None, query: str
    ) -> bool:
        user = (
            f"User request:\n{query}\n\nFunction definition:\n{json.dumps(function, ensure_ascii=False)}\n\n"
            f"Call 1:\n{json.dumps({'name': pred.name, 'arguments': pred.arguments}, ensure_ascii=False)}\n\n"
            f"Call 2:\n{json.dumps({'name': gold.name, 'arguments': gold.arguments}, ensure_ascii=False)}"
        )
        reply = await self._ask(CALL_SYSTEM, user, tolerate_outage=False)
        if reply is None or not isinstance(reply.get("is_equal"), bool):
            # As upstream: no parsable verdict counts as not equal. Not cached, so a later scoring
            # asks again; remembered for this process so the run and its scoring agree.
            self._transient[key] = False
            return False
        self.cache.put(
            key,
            {
                "is_equal": reply["is_equal"],
                "reason": str(reply.get("reason", "")),
                "judge": self.label,
                "prompt_hash": PROMPT_HASH,
            },
        )
        return reply["is_equal"]

    # ------------------------------------------------------------ response quality

    async def score_response(self, kind: str, context: str, answer: str) -> int | None:
        """0-2 completeness or correctness score; ``None`` when the judge gave no valid score."""
        system = COMPLETENESS_SYSTEM if kind == "completeness" else CORRECTNESS_SYSTEM
        key = sha256_of(
            {"kind": kind, "judge": self.label, "prompt": PROMPT_HASH, "context": context, "answer": answer}
        )
        cached = self.cache.get(key)
        if cached is not None:
            return int(cached["score"])
        reply = await self._ask(
            system, f"{context}\n\nAssistant's final answer:\n{answer}", tolerate_outage=True
        )
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
    """A synchronous verdict lookup for an episode: the judge's known verdicts, then ``asked``
    (verdicts of the current scoring); ``None`` when the pair was never judged."""
    functions = {f["name"]: f for f in sample.functions}
    extra = asked if asked is not None else {}

    def lookup(pred: PredCall, gold: GoldCall) -> bool | None:
        function = functions.get(gold.name)
        known = judge.lookup_call(pred, gold, function)
        return known if known is not None else extra.get(judge.call_key(pred, gold, function))

    return lookup


class LiveJudge:
    """A judge bound to one sample, deciding while an episode is played (executor and scorer alike).

    Before each model turn, :meth:`play_turn` asks the judge about the pairs the turn will reach
    it with, concurrently, and then plays the turn; so the model is answered with the verdicts a
    judge deciding during the episode gives, as in upstream's pipeline.
    """

    def __init__(self, judge: Judge, sample: CfbSample) -> None:
        self.judge = judge
        self.sample = sample
        self.functions = {f["name"]: f for f in sample.functions}
        self.lookup = judge_lookup(judge, sample)

    async def resolve(self, pairs: Iterable[tuple[PredCall, GoldCall]]) -> None:
        """Ask the judge about every pair it has no verdict for (verdicts land in its cache)."""
        unique = {self.judge.call_key(p, g, self.functions.get(g.name)): (p, g) for p, g in pairs}
        await asyncio.gather(
            *(
                self.judge.judge_call(p, g, self.functions.get(g.name), self.sample.query)
                for p, g in unique.values()
            )
        )

    async def play_turn(
        self, episode: Episode, calls: list[PredCall], *, may_end: bool = True
    ) -> list[CallResult]:
        """Judge what the turn needs, then play it."""
        pending = episode.judge_candidates(calls, may_end=may_end)
        if pending:
            await self.resolve(pending)
        return episode.play_turn(calls, may_end=may_end)


_SHARED: dict[tuple[str, str], Judge] = {}


def shared_judge(spec: str, folder: str | Path | None = None) -> Judge:
    """The judge for a ``provider:model`` string and cache folder, one per process.

    The replay executor (which asks during the run) and the scorer (which re-plays the trace
    afterwards) get the same instance, so they share verdicts, in-flight requests and the cache.
    """
    key = (str(spec), str(Path(folder).resolve()) if folder else "")
    judge = _SHARED.get(key)
    if judge is None:
        from callbench.providers.model import Model, make_provider  # lazy: the catalog imports scorers

        # The Model wrapper adds retries and rate limits; verdicts are cached by the judge itself.
        judge = Judge(
            Model(make_provider(str(spec))),
            label=str(spec),
            cache=VerdictCache(Path(folder) if folder else None),
        )
        _SHARED[key] = judge
    return judge
