"""Replay executor: answers ComplexFuncBench calls from the annotated gold path.

Matched calls get the gold call's annotated response, identical optional look-ups are answered at
any time, other calls get the generic error response, and format-check failures get their
specific error text so the model can correct itself. The gold list advances as in ComplexEval.

The matching is done per model turn (parallel calls are mapped together). The harness announces
a turn through the optional session hook ``begin_round(round_index, calls)``; without it each
call is treated as a turn of its own that never ends the episode early.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.scoring.cfb_engine import CallResult, Episode
from callbench.scoring.cfb_types import PredCall, canonical
from callbench.scoring.embedders import Embedder, make_embedder
from callbench.scoring.judge import Judge, VerdictCache, judge_lookup
from callbench.suites.cfb_names import NameMap
from callbench.suites.complexfuncbench import case_sample, case_settings

if TYPE_CHECKING:
    from callbench.messages import ToolCall
    from callbench.suites.base import Suite
    from callbench.suites.case import Case


def outcome_of(result: CallResult) -> ToolOutcome:
    """The tool outcome for one evaluated call (content = exactly what the model reads)."""
    content = result.content if isinstance(result.content, str) else json.dumps(result.content, ensure_ascii=False)
    annotations: dict[str, Any] = {"cfb_status": result.status}
    if result.gold is not None:
        annotations["cfb_gold"] = result.gold
    if result.method is not None:
        annotations["cfb_method"] = result.method
    if result.error is not None:
        annotations["cfb_error"] = result.error.kind
    if result.status == "matched":
        return ToolOutcome(ok=True, result=result.content, content=content, annotations=annotations)
    return ToolOutcome(ok=False, error=content, content=content, annotations=annotations)


class ReplaySession(ExecutorSession):
    """One sample's replay: an :class:`Episode` fed one model turn at a time."""

    sees_invalid_calls = True
    """The harness passes schema-invalid calls here: ComplexEval answers them with its own format errors."""

    @property
    def finished(self) -> bool:
        """True once the faithful cascade ended the episode early (the harness then stops, as upstream)."""
        return self.episode.ended is not None

    def __init__(self, episode: Episode, names: NameMap) -> None:
        self.episode = episode
        self.names = names
        self._queued: deque[tuple[str, CallResult]] = deque()
        self._next_index = 0

    def begin_round(self, round_index: int, calls: list[ToolCall]) -> None:
        """Evaluate all calls of one model turn together (called by the harness before executing them)."""
        preds = [self._pred(c.name, c.arguments, c.parse_error) for c in calls]
        results = self.episode.play_turn(preds)
        # Calls the harness rejects never reach ``call``; keep results keyed by the call itself.
        self._queued = deque((canonical(p.name, p.arguments or {}), r) for p, r in zip(preds, results, strict=True))

    def _pred(self, wire_name: str, arguments: dict[str, Any] | None, parse_error: str | None) -> PredCall:
        pred = PredCall(self._next_index, self.names.original(wire_name), arguments, parse_error)
        self._next_index += 1
        return pred

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        key = canonical(self.names.original(name), arguments)
        while self._queued:
            queued_key, result = self._queued.popleft()
            if queued_key == key:
                return outcome_of(result)
        # No announced turn: this call is played as a turn of its own, but it may be one of several
        # parallel calls, so it never triggers the faithful early end (the scorer, which groups calls
        # by round, decides that; answering more helpfully after it cannot change a score).
        result = self.episode.play_turn([self._pred(name, arguments, None)], may_end=False)[0]
        return outcome_of(result)

    def snapshot(self) -> dict[str, Any] | None:
        ep = self.episode
        return {
            "consumed": sorted(ep.consumed), "pointer": ep.pointer, "turns": ep.turns,
            "ended_early": ep.ended is not None,
        }


class ReplayExecutor(Executor):
    """Executor ``replay``: ComplexFuncBench's golden-path replay."""

    name = "replay"
    sees_invalid_calls = True
    """Matching needs every call of a turn, including ones the harness rejects (see ``begin_round``)."""

    def __init__(self) -> None:
        self._embedders: dict[str, Embedder] = {}
        self._judges: dict[tuple[str, str], Judge] = {}

    def _cached_judge(self, suite: Suite | None) -> Judge | None:
        # The LLM judge itself runs when scoring (it is async); during a run the replay can still
        # use verdicts an earlier scoring stored in the judge cache folder.
        config = (getattr(suite, "metadata", None) or {}).get("complexeval", {})
        spec, folder = config.get("judge"), config.get("judge_cache")
        if not spec or not folder:
            return None
        key = (str(spec), str(folder))
        if key not in self._judges:
            self._judges[key] = Judge(None, label=str(spec), cache=VerdictCache(Path(folder)))
        return self._judges[key]

    def _embedder(self, spec: str) -> Embedder:
        # One embedder per spec for the whole run (a dense model is loaded once).
        if spec not in self._embedders:
            self._embedders[spec] = make_embedder(spec)
        return self._embedders[spec]

    def start(self, case: Case, workdir: Path, suite: Suite | None = None) -> ReplaySession:
        sample, names = case_sample(case)
        settings = case_settings(case)
        judge = self._cached_judge(suite)
        lookup = judge_lookup(judge, sample) if judge is not None else None
        return ReplaySession(Episode(sample, settings, self._embedder(settings.embedder), judge=lookup), names)
