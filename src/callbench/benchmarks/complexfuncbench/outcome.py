"""End of a ComplexEval episode: success, stop_early, the first error, and the per-sample counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from callbench.benchmarks.complexfuncbench.definitions import END_PRUNED_FUNCTIONS, GoldCall
from callbench.benchmarks.complexfuncbench.engine import Episode
from callbench.benchmarks.complexfuncbench.match import CallError, ErrorKind

STOP_ERRORS: dict[str, ErrorKind] = {
    "max_rounds": "max_turns",
    "max_calls": "max_turns",
    "timeout": "infra_error",
    "error": "infra_error",
}
"""How a harness stop reason other than a final answer ends the sample."""


@dataclass
class EpisodeOutcome:
    """Everything a ComplexEval record needs about one sample."""

    success: bool
    terminal: list[CallError]
    """What ended or failed the sample (empty on success)."""
    first_error: ErrorKind | None
    """Failed samples only: what the failure is filed under (see :func:`_first_error`)."""
    correct_calls: int
    gold_calls: int
    predicted_calls: int
    gold_steps: int
    model_turns: int
    completed_steps: int
    """Leading gold steps whose required calls were all matched (upstream ``success_turn_num``)."""
    infra: bool = False

    def counts(self) -> dict[str, Any]:
        return {
            "correct_calls": self.correct_calls,
            "gold_calls": self.gold_calls,
            "predicted_calls": self.predicted_calls,
            "gold_steps": self.gold_steps,
            "model_turns": self.model_turns,
            "completed_steps": self.completed_steps,
        }


def _prune_faithful(remaining: list[GoldCall]) -> list[GoldCall]:
    # Reproduces upstream exactly: removing from the list being iterated skips the element after
    # each removal, so two adjacent optional calls leave one behind (and the sample fails); and
    # only five of the six look-ups are pruned (an unmatched Location_to_Lat_Long stays open).
    for gold in remaining:
        if gold.hotel_search or gold.name in END_PRUNED_FUNCTIONS:
            remaining.remove(gold)
    return remaining


def _remaining(episode: Episode) -> list[GoldCall]:
    if episode.faithful:
        return _prune_faithful(list(episode.current))  # upstream's golden list as it stands
    return [g for g in episode.current if g.uid not in episode.consumed and not g.skippable]


def _terminal(episode: Episode, stop_reason: str) -> list[CallError]:
    if episode.ended is not None:
        return episode.ended
    if stop_reason in STOP_ERRORS:
        return [CallError(STOP_ERRORS[stop_reason], None, f"episode stopped: {stop_reason}")]
    if episode.faithful and episode.last_turn_errors:
        # GPT-style upstream runners fail the sample with the last tool turn's errors.
        return list(episode.last_turn_errors)
    if episode.faithful:
        # Upstream: stop_early unless the step counter passed the last step and the pruned list is empty.
        steps_left: object = episode.turn_id < len(episode.steps)
    else:
        steps_left = [s for s in episode.steps[episode.pointer :] if any(not g.skippable for g in s)]
    if _remaining(episode) or steps_left:
        return [CallError("stop_early", None, "answered before the gold path was complete")]
    return []


def _completed_steps(episode: Episode) -> int:
    done = 0
    for step in episode.steps:
        if any(g.uid not in episode.consumed and not g.skippable for g in step):
            break
        done += 1
    return done


def _first_error(episode: Episode, terminal: list[CallError]) -> ErrorKind:
    """The error a failed sample is filed under.

    Faithful: the first error of the message upstream writes (the terminal error list). Improved:
    the earliest error on a required gold call the model never repaired (never matched
    afterwards). Errors on optional look-ups are not blamed, since the same trace without that
    look-up fails the same way; errors tied to no gold call (a stray malformed call) only count
    when nothing else explains the failure.
    """
    if episode.faithful:
        return terminal[0].kind
    skippable = {g.uid for step in episode.steps for g in step if g.skippable}
    for _, error, gold in episode.errors:
        if gold is not None and gold not in episode.consumed and gold not in skippable:
            return error.kind
    return terminal[0].kind


def finish(episode: Episode, stop_reason: str) -> EpisodeOutcome:
    """Close the episode after the model's last turn and compute its outcome."""
    terminal = _terminal(episode, stop_reason)
    success = not terminal
    first: ErrorKind | None = None
    infra = bool(terminal) and terminal[0].kind == "infra_error"
    if infra:
        first = "infra_error"  # an infrastructure failure is never blamed on the model
    elif not success:
        first = _first_error(episode, terminal)
    counted_calls = [r for r in episode.results if r.status != "after_end"]
    return EpisodeOutcome(
        success=success,
        terminal=terminal,
        first_error=first,
        correct_calls=episode.correct,
        gold_calls=sum(len(s) for s in episode.steps),
        predicted_calls=len(counted_calls),
        gold_steps=len(episode.steps),
        model_turns=episode.turns,
        completed_steps=_completed_steps(episode),
        infra=infra,
    )
