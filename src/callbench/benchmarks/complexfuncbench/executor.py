"""Replay executor: answers ComplexFuncBench calls from the annotated gold path.

Matched calls get the gold call's annotated response, identical optional look-ups are answered at
any time, other calls get the generic error response, and format-check failures get their
specific error text so the model can correct itself. The gold list advances as in ComplexEval.

The matching is done per model turn (parallel calls are mapped together). The harness announces
a turn through the session hook ``begin_round(round_index, calls)``; a call that arrives without
one (a direct caller) is treated as a turn of its own that never ends the episode early.

With a judge configured (suite option ``judge``), the LLM judge decides during the episode, as in
upstream's pipeline: a turn that needs verdicts is played once the judge has answered, inside the
first ``call`` of that turn (the harness awaits it).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.complexfuncbench.definitions import PredCall, canonical
from callbench.benchmarks.complexfuncbench.embedders import Embedder, make_embedder
from callbench.benchmarks.complexfuncbench.engine import CallResult, Episode
from callbench.benchmarks.complexfuncbench.judge import PROMPT_HASH, Judge, LiveJudge, shared_judge
from callbench.benchmarks.complexfuncbench.names import NameMap
from callbench.benchmarks.complexfuncbench.suite import case_sample, case_settings
from callbench.plugin import Executor, ExecutorSession, ToolOutcome

if TYPE_CHECKING:
    from callbench.plugin import Case, Suite, ToolCall


def outcome_of(result: CallResult, judge: Judge | None = None) -> ToolOutcome:
    """The tool outcome for one evaluated call (content = exactly what the model reads)."""
    content = (
        result.content if isinstance(result.content, str) else json.dumps(result.content, ensure_ascii=False)
    )
    annotations: dict[str, Any] = {"cfb_status": result.status}
    if result.gold is not None:
        annotations["cfb_gold"] = result.gold
    if result.method is not None:
        annotations["cfb_method"] = result.method
    if result.error is not None:
        annotations["cfb_error"] = result.error.kind
    if result.judge is not None and judge is not None:
        annotations["cfb_judge"] = {
            "model": judge.label,
            "prompt_hash": PROMPT_HASH,
            "is_equal": result.judge,
        }
    if result.status == "matched":
        return ToolOutcome(ok=True, result=result.content, content=content, annotations=annotations)
    return ToolOutcome(ok=False, error=content, content=content, annotations=annotations)


class ReplaySession(ExecutorSession):
    """One sample's replay: an :class:`Episode` fed one model turn at a time."""

    sees_invalid_calls = True
    """The harness passes schema-invalid calls here: ComplexEval answers them with its own format errors."""

    def __init__(self, episode: Episode, names: NameMap, live: LiveJudge | None = None) -> None:
        self.episode = episode
        self.names = names
        self.live = live
        self._queued: deque[tuple[str, CallResult]] = deque()
        self._deferred: list[PredCall] | None = None
        """A turn waiting for judge verdicts; played by the first ``call`` of that turn."""
        self._next_index = 0

    def episode_over(self) -> bool:
        """True once the faithful cascade ended the episode early (the harness then stops, as upstream)."""
        if self._deferred is not None:
            # No call of the waiting turn reached the session (the harness rejected them all):
            # play it with the verdicts known so far rather than never.
            self._play(self._deferred)
        return self.episode.ended is not None

    async def begin_round(self, round_index: int, calls: Sequence[ToolCall]) -> None:
        """Evaluate all calls of one model turn together (called by the harness before executing them)."""
        self._deferred = None
        self._queued = deque()
        if not calls:
            return  # a final answer: no turn to play
        preds = [self._pred(c.name, c.arguments, c.parse_error) for c in calls]
        if self.live is not None and self.episode.judge_candidates(preds):
            self._deferred = preds  # the judge must answer first: see ``call``
            return
        self._play(preds)

    def _play(self, preds: list[PredCall]) -> None:
        self._deferred = None
        results = self.episode.play_turn(preds)
        # Calls the harness rejects never reach ``call``; keep results keyed by the call itself.
        self._queued = deque(
            (canonical(p.name, p.arguments or {}), r) for p, r in zip(preds, results, strict=True)
        )

    def _pred(self, wire_name: str, arguments: dict[str, Any] | None, parse_error: str | None) -> PredCall:
        pred = PredCall(self._next_index, self.names.original(wire_name), arguments, parse_error)
        self._next_index += 1
        return pred

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """The answer to one call (after the live judge decided the turn's pairs, when one is configured)."""
        if self._deferred is not None:
            preds = self._deferred
            assert self.live is not None
            await self.live.resolve(self.episode.judge_candidates(preds))
            if self._deferred is preds:  # not played meanwhile
                self._play(preds)
        key = canonical(self.names.original(name), arguments)
        while self._queued:
            queued_key, result = self._queued.popleft()
            if queued_key == key:
                return self._outcome(result)
        # No announced turn: this call is played as a turn of its own, but it may be one of several
        # parallel calls, so it never triggers the faithful early end (the scorer, which groups calls
        # by round, decides that; answering more helpfully after it cannot change a score).
        pred = self._pred(name, arguments, None)
        if self.live is not None and self.episode.judge_candidates([pred], may_end=False):
            return self._outcome((await self.live.play_turn(self.episode, [pred], may_end=False))[0])
        return self._outcome(self.episode.play_turn([pred], may_end=False)[0])

    def _outcome(self, result: CallResult) -> ToolOutcome:
        return outcome_of(result, self.live.judge if self.live is not None else None)

    def snapshot(self) -> dict[str, Any] | None:
        ep = self.episode
        state: dict[str, Any] = {
            "consumed": sorted(ep.consumed),
            "pointer": ep.pointer,
            "turns": ep.turns,
            "ended_early": ep.ended is not None,
        }
        if self.live is not None:
            state["judge"] = self.live.judge.describe()
        return state


class ReplayExecutor(Executor):
    """Executor ``replay``: ComplexFuncBench's golden-path replay."""

    name = "replay"
    sees_invalid_calls = True
    """Matching needs every call of a turn, including ones the harness rejects (see ``begin_round``)."""

    def __init__(self) -> None:
        self._embedders: dict[str, Embedder] = {}

    @staticmethod
    def _judge(suite: Suite | None) -> Judge | None:
        # The same judge instance as the scorer's (one per judge model and cache folder), so a
        # verdict given during the run is the verdict the scoring uses.
        config = (getattr(suite, "metadata", None) or {}).get("complexeval", {})
        spec = config.get("judge")
        return shared_judge(str(spec), config.get("judge_cache")) if spec else None

    def _embedder(self, spec: str) -> Embedder:
        # One embedder per spec for the whole run (a dense model is loaded once).
        if spec not in self._embedders:
            self._embedders[spec] = make_embedder(spec)
        return self._embedders[spec]

    def start(self, case: Case, workdir: Path, suite: Suite | None = None) -> ReplaySession:
        sample, names = case_sample(case)
        settings = case_settings(case)
        judge = self._judge(suite)
        live = LiveJudge(judge, sample) if judge is not None else None
        episode = Episode(
            sample,
            settings,
            self._embedder(settings.embedder),
            judge=live.lookup if live is not None else None,
        )
        return ReplaySession(episode, names, live)
