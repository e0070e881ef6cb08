"""ComplexEval's episode: call mapping per model turn and golden-path updating.

The same state machine drives the replay executor during a run (it decides what each call gets
back) and the scorer afterwards (it re-plays the trace), so both always agree. It is pure and
deterministic given the settings, the embedder and the judge verdicts it is handed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from callbench.benchmarks.complexfuncbench.data import CfbSample
from callbench.benchmarks.complexfuncbench.definitions import (
    GENERIC_ERROR,
    CfbSettings,
    DecodedCall,
    GoldCall,
    PredCall,
    call_text,
    canonical,
    gold_calls_of,
)
from callbench.benchmarks.complexfuncbench.embedders import Embedder
from callbench.benchmarks.complexfuncbench.match import (
    CallError,
    MatchMethod,
    classify_mismatch,
    critical_gate,
    format_error,
    response_equivalent,
    rule_match,
)

CallStatus = Literal["matched", "format_error", "decode_error", "mismatch", "unpaired", "after_end"]
JudgeLookup = Callable[[PredCall, GoldCall], "bool | None"]
"""Returns a cached judge verdict, or ``None`` when there is none (judge skipped or pending)."""


@dataclass
class CallResult:
    """What happened to one predicted call."""

    index: int
    status: CallStatus
    content: Any
    """What the model gets back: the gold response, a format-error text or the generic error."""
    gold: str | None = None
    method: MatchMethod | None = None
    error: CallError | None = None
    counted: bool = False
    """Counted as a correct call (numerator of call accuracy)."""
    judge: bool | None = None
    """The LLM judge's verdict on this pair, when the cascade reached the judge and it answered."""


@dataclass
class Episode:
    """Golden-path state for one sample; feed it one model turn at a time."""

    sample: CfbSample
    settings: CfbSettings
    embedder: Embedder
    judge: JudgeLookup | None = None
    steps: list[list[GoldCall]] = field(init=False)
    current: list[GoldCall] = field(init=False, default_factory=list)
    """The open gold list. Faithful: upstream's ``golden_fcs`` exactly (calls leave it only where
    upstream removes them); improved: never holds a consumed call."""
    pointer: int = field(init=False, default=0)
    """Gold steps appended to the list so far."""
    turn_id: int = field(init=False, default=0)
    """Upstream's step counter: every golden-list update adds one, even past the last step. Faithful
    mode's final check needs it to have passed the last step."""
    consumed: set[str] = field(init=False, default_factory=set)
    free_called: set[str] = field(init=False, default_factory=set)
    """Keys of optional look-ups answered through an identical call (upstream's ``called`` flags)."""
    correct: int = field(init=False, default=0)
    turns: int = field(init=False, default=0)
    ended: list[CallError] | None = field(init=False, default=None)
    """Set when the faithful cascade ended the episode early (the error list it ended with)."""
    errors: list[tuple[int, CallError, str | None]] = field(init=False, default_factory=list)
    """(turn, error, gold call uid or ``None``) in the order they happened."""
    last_turn_errors: list[CallError] = field(init=False, default_factory=list)
    """Errors of the last turn's mismatched pairs (upstream's error message: format errors are not in it)."""
    results: list[CallResult] = field(init=False, default_factory=list)
    judge_pending: list[tuple[PredCall, GoldCall]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        prepared = _prepare(self.sample)
        self.steps = prepared.steps
        # Faithful mode checks the format against the functions as the data set writes them (an
        # unknown type such as "float" is not type-checked, as upstream); improved mode against
        # the repaired schemas the model was offered.
        self.functions = prepared.functions if self.faithful else prepared.offered
        self.free = prepared.free
        self.current = list(self.steps[0]) if self.steps else []
        self.pointer = min(1, len(self.steps))
        if self.faithful:
            if _only_free(self.current):
                self._advance()
        else:
            self._skip_optional_steps()

    @property
    def faithful(self) -> bool:
        return self.settings.mode == "faithful"

    # ------------------------------------------------------------ golden-path updating

    def _advance(self) -> None:
        """One golden-list update: the next gold step joins the open list."""
        self.turn_id += 1
        if self.pointer < len(self.steps):
            step = self.steps[self.pointer]
            # Faithful: upstream appends the whole step; calls already answered leave at its next
            # removal point. Improved: they never join.
            self.current.extend(step if self.faithful else [g for g in step if g.uid not in self.consumed])
            self.pointer += 1

    def _skip_optional_steps(self) -> None:
        # Improved mode: a list made only of skippable look-ups (or an empty one) lets the next
        # step join at once, repeatedly, so a chain of look-up steps may all be skipped.
        self.current = [g for g in self.current if g.uid not in self.consumed]
        while self.pointer < len(self.steps) and all(g.skippable for g in self.current):
            self._advance()
            self.current = [g for g in self.current if g.uid not in self.consumed]

    def _drop_called_free(self) -> None:
        # Upstream's removal of optional look-ups already answered through an identical call.
        self.current = [g for g in self.current if not (g.optional and g.key in self.free_called)]

    # ------------------------------------------------------------ one model turn

    def play_turn(self, calls: list[PredCall], *, may_end: bool = True) -> list[CallResult]:
        """Evaluate the calls of one model turn and update the gold list; returns one result per call.

        ``may_end=False`` keeps the faithful early end from firing: used when the calls may be only
        part of a model turn, where ending early would be stricter than the scorer.
        """
        if self.ended is not None:
            return self._record([CallResult(c.index, "after_end", GENERIC_ERROR) for c in calls])
        self.turns += 1
        results: dict[int, CallResult] = {}
        if self.faithful and not self.current and calls:
            # Upstream: any call once the gold list is empty fails the sample (checked first).
            self._end([CallError("func_hallucination", None, "call after the gold path was complete")])
            return self._record([CallResult(c.index, "after_end", GENERIC_ERROR) for c in calls])
        valid = self._decode(calls, results)
        if self.ended is not None:
            return self._record(
                [results.get(c.index) or CallResult(c.index, "after_end", GENERIC_ERROR) for c in calls]
            )
        if self.faithful:
            self._drop_called_free()
        before = {g.uid for g in self.current}
        pairs, unpaired = self._map(valid, results)
        for pred, gold in pairs:
            results[pred.index] = self._judge_pair(pred, gold)
        for pred in unpaired:
            results[pred.index] = self._unpaired(pred)
        ordered = [results[c.index] for c in calls]
        self._update(ordered, before, may_end)
        return self._record(ordered)

    def judge_candidates(
        self, calls: list[PredCall], *, may_end: bool = True
    ) -> list[tuple[PredCall, GoldCall]]:
        """The (call, gold call) pairs this turn would send to the judge that it has no verdict for.

        Plays the turn on a throw-away copy: which pairs reach the judge depends only on the state
        before the turn, so asking the judge about these first and then playing the turn gives the
        verdicts a judge deciding during the episode would give.
        """
        if self.judge is None or self.ended is not None or not calls:
            return []
        probe = self._fork()
        probe.play_turn(calls, may_end=may_end)
        return probe.judge_pending

    def _fork(self) -> Episode:
        probe = copy.copy(self)
        probe.current, probe.consumed, probe.free_called = (
            list(self.current),
            set(self.consumed),
            set(self.free_called),
        )
        probe.errors, probe.results, probe.judge_pending = list(self.errors), [], []
        probe.last_turn_errors = list(self.last_turn_errors)
        return probe

    def _record(self, results: list[CallResult]) -> list[CallResult]:
        self.results.extend(results)
        return results

    def _decode(self, calls: list[PredCall], results: dict[int, CallResult]) -> list[DecodedCall]:
        valid = []
        for call in calls:
            if call.arguments is not None:
                valid.append(DecodedCall(call.index, call.name, call.arguments, call.parse_error))
                continue
            error = CallError("decode_error", None, call.parse_error or "arguments are not a JSON object")
            self.errors.append((self.turns, error, None))
            if self.faithful:
                self._end([error])
                return []
            text = f"The arguments of {call.name} are not a valid JSON object: {error.detail}"
            results[call.index] = CallResult(call.index, "decode_error", text, error=error)
        return valid

    def _map(
        self, preds: list[DecodedCall], results: dict[int, CallResult]
    ) -> tuple[list[tuple[DecodedCall, GoldCall]], list[DecodedCall]]:
        open_gold = list(self.current)
        by_key: dict[str, list[GoldCall]] = {}
        for g in open_gold:
            by_key.setdefault(g.key, []).append(g)
        rest: list[DecodedCall] = []
        for pred in preds:
            key = canonical(pred.name, pred.arguments)
            same = by_key.get(key)
            if same:
                gold = same.pop(0)
                open_gold.remove(gold)
                results[pred.index] = self._matched(pred, gold, "identical")
            elif key in self.free:
                results[pred.index] = self._free_hit(pred, self.free[key])
            else:
                rest.append(pred)
        if not rest or not open_gold:
            return [], rest
        return self._hungarian(rest, open_gold)

    def _hungarian(
        self, preds: list[DecodedCall], golds: list[GoldCall]
    ) -> tuple[list[tuple[DecodedCall, GoldCall]], list[DecodedCall]]:
        sims = self.embedder.similarity(
            [call_text(p.name, p.arguments) for p in preds], [g.text for g in golds]
        )
        rows, cols = linear_sum_assignment(-np.asarray(sims))
        threshold = None if self.faithful else self.settings.min_similarity
        pairs = [
            (preds[r], golds[c])
            for r, c in zip(rows, cols, strict=True)
            if threshold is None or sims[r, c] >= threshold
        ]
        paired = {p.index for p, _ in pairs}
        return pairs, [p for p in preds if p.index not in paired]

    # ------------------------------------------------------------ per-pair verdicts

    def _matched(self, pred: PredCall, gold: GoldCall, method: MatchMethod) -> CallResult:
        self.consumed.add(gold.uid)
        self.correct += 1
        return CallResult(pred.index, "matched", gold.response, gold=gold.uid, method=method, counted=True)

    def _free_hit(self, pred: PredCall, gold: GoldCall) -> CallResult:
        # An identical optional look-up is answered at any time; improved mode counts it once.
        counted = self.faithful or gold.uid not in self.consumed
        self.consumed.add(gold.uid)
        self.free_called.add(gold.key)
        self.correct += int(counted)
        return CallResult(pred.index, "matched", gold.response, gold=gold.uid, method="free", counted=counted)

    def _format_failure(self, pred: PredCall, gold: str | None = None) -> CallResult | None:
        text = format_error(pred.name, pred.arguments or {}, self.functions)
        if text is None:
            return None
        error = CallError("format_error", None, text)
        self.errors.append((self.turns, error, gold))
        return CallResult(pred.index, "format_error", {"error": text}, gold=gold, error=error)

    def _judge_pair(self, pred: DecodedCall, gold: GoldCall) -> CallResult:
        failed = self._format_failure(pred, gold.uid)
        if failed is not None:
            return failed
        method, verdict = self._cascade(pred, gold)
        if isinstance(method, str):
            result = self._matched(pred, gold, method)
        else:
            self.errors.append((self.turns, method, gold.uid))
            result = CallResult(pred.index, "mismatch", GENERIC_ERROR, gold=gold.uid, error=method)
        result.judge = verdict
        return result

    def _cascade(self, pred: DecodedCall, gold: GoldCall) -> tuple[MatchMethod | CallError, bool | None]:
        improved = not self.faithful
        if rule_match(pred, gold):
            return "rule", None
        gate = critical_gate(pred, gold, improved=improved)
        if gate is not None:
            return gate, None
        if response_equivalent(pred, gold, self.functions.get(gold.name)):
            return "response", None
        verdict = None
        if self.judge is not None:
            verdict = self.judge(pred, gold)
            if verdict is None:
                self.judge_pending.append((pred, gold))
            elif verdict:
                return "judge", True
        return classify_mismatch(pred, gold, improved=improved), verdict

    def _unpaired(self, pred: PredCall) -> CallResult:
        if not self.faithful:
            failed = self._format_failure(pred)
            if failed is not None:
                return failed
        return CallResult(pred.index, "unpaired", GENERIC_ERROR)

    def _update(self, results: list[CallResult], before: set[str], may_end: bool) -> None:
        # Upstream's error message lists the errors of mismatched pairs only; format errors are
        # answered to the model but are not in it.
        self.last_turn_errors = [r.error for r in results if r.status == "mismatch" and r.error is not None]
        matched = [r for r in results if r.status == "matched"]
        had_format = any(r.status == "format_error" for r in results)
        if self.faithful and may_end and not matched and not had_format and results:
            self._end(self.last_turn_errors or [CallError("value_error", None, "no call matched")])
            return
        if self.faithful:
            self._update_faithful(matched)
            return
        self.current = [g for g in self.current if g.uid not in self.consumed]
        if any(r.gold in before for r in matched):
            self._advance()
        self._skip_optional_steps()

    def _update_faithful(self, matched: list[CallResult]) -> None:
        # Upstream's process_matches: drop matched gold calls; one update if anything matched;
        # drop answered look-ups; one more update if the list is then only look-ups (or holds a
        # hotel-name Search_Hotels). Never more than these two per turn.
        matched_uids = {r.gold for r in matched if r.method != "free"}
        self.current = [g for g in self.current if g.uid not in matched_uids]
        for r in matched:
            if r.method == "free":
                key = self._gold_key(r.gold)
                hit = next((g for g in self.current if g.key == key), None)
                if hit is not None:
                    self.current.remove(hit)
        if matched:
            self._advance()
        self._drop_called_free()
        if _only_free(self.current):
            self._advance()

    def _gold_key(self, uid: str | None) -> str | None:
        return next((g.key for step in self.steps for g in step if g.uid == uid), None)

    def _end(self, errors: list[CallError]) -> None:
        self.ended = errors


def _only_free(current: list[GoldCall]) -> bool:
    """Upstream's test for letting the next step join at once: a hotel-name ``Search_Hotels``
    anywhere in the list, or nothing but optional look-ups (an empty list included)."""
    return any(g.hotel_search for g in current) or all(g.optional for g in current)


@dataclass(frozen=True)
class _Prepared:
    """Per-sample data every episode of that sample shares (read-only)."""

    sample: CfbSample
    steps: list[list[GoldCall]]
    functions: dict[str, dict[str, Any]]
    """The functions as the data set writes them."""
    offered: dict[str, dict[str, Any]]
    """The functions as offered to the model (schemas repaired at load time)."""
    free: dict[str, GoldCall]


_PREPARED: dict[int, _Prepared] = {}
_PREPARED_MAX = 512


def _prepare(sample: CfbSample) -> _Prepared:
    # Scoring many traces of one sample re-uses its gold calls, keys and texts; entries hold the
    # sample itself, so an id is never reused while its entry lives.
    hit = _PREPARED.get(id(sample))
    if hit is not None and hit.sample is sample:
        return hit
    steps = gold_calls_of(sample)
    prepared = _Prepared(
        sample,
        steps,
        {f["name"]: f for f in sample.functions},
        {f["name"]: f for f in sample.offered_functions()},
        {g.key: g for step in steps for g in step if g.optional},
    )
    if len(_PREPARED) >= _PREPARED_MAX:
        _PREPARED.pop(next(iter(_PREPARED)))
    _PREPARED[id(sample)] = prepared
    return prepared
