"""Helpers shared by the ComplexFuncBench tests: fixture samples, episodes and traces."""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.complexfuncbench.data import CfbSample, read_jsonl
from callbench.benchmarks.complexfuncbench.definitions import CfbSettings, PredCall
from callbench.benchmarks.complexfuncbench.embedders import CharNgramEmbedder
from callbench.benchmarks.complexfuncbench.engine import Episode
from callbench.benchmarks.complexfuncbench.outcome import EpisodeOutcome, finish
from callbench.benchmarks.complexfuncbench.suite import fixture_path
from callbench.types.trace import Trace, trace_from_calls

_SAMPLES: dict[str, CfbSample] | None = None


def sample(sample_id: str) -> CfbSample:
    """A fixture sample by id."""
    global _SAMPLES
    if _SAMPLES is None:
        _SAMPLES = {s.id: s for s in read_jsonl(fixture_path()).samples}
    return _SAMPLES[sample_id]


def gold(sample_id: str, step: int, j: int = 0) -> tuple[str, dict[str, Any]]:
    """(name, arguments copy) of a gold call."""
    call = sample(sample_id).steps[step][j]
    return call.name, dict(call.arguments)


def episode(sample_id: str, mode: str = "improved", **settings: Any) -> Episode:
    return Episode(sample(sample_id), CfbSettings(mode=mode, **settings), CharNgramEmbedder())


def play(
    ep: Episode, turns: list[list[tuple[str, dict[str, Any] | None]]], stop: str = "answer"
) -> EpisodeOutcome:
    """Feed turns of (name, arguments) to an episode and finish it."""
    index = 0
    for turn in turns:
        calls = []
        for name, args in turn:
            calls.append(PredCall(index, name, args, None if args is not None else "Expecting value"))
            index += 1
        ep.play_turn(calls)
    return finish(ep, stop)


def gold_turns(sample_id: str) -> list[list[tuple[str, dict[str, Any]]]]:
    """The gold path as model turns."""
    return [[(c.name, dict(c.arguments)) for c in step] for step in sample(sample_id).steps]


def trace_of(
    turns: list[list[tuple[str, dict[str, Any]]]], final_text: str = "Done.", stop: str = "answer"
) -> Trace:
    """A harness trace with one round per turn (names as given)."""
    calls = [
        {"tool": name, "arguments": args, "round": r}
        for r, turn in enumerate(turns, start=1)
        for name, args in turn
    ]
    trace = trace_from_calls(calls, final_text=final_text)
    trace.stop_reason = stop  # type: ignore[assignment]
    return trace


def wire_turns(
    case: Any, turns: list[list[tuple[str, dict[str, Any]]]]
) -> list[list[tuple[str, dict[str, Any]]]]:
    """Turns with names as a model sees them (provider-safe), using the case's name map."""
    names = case.executor_config["names"]
    return [[(names.get(n, n), a) for n, a in turn] for turn in turns]


class ScriptedProvider:
    """A provider double: replies with queued texts (or a function of the prompt) and counts requests."""

    name = "scripted"
    model = "judge-1"

    def __init__(self, replies: list[str] | None = None, reply_for: Any = None) -> None:
        self.replies = list(replies or [])
        self.reply_for = reply_for
        self.requests: list[list[Any]] = []

    async def generate(self, messages: list[Any], tools: list[Any], settings: Any) -> Any:
        from callbench.types.messages import ModelTurn

        self.requests.append(messages)
        text = self.reply_for(messages) if self.reply_for else self.replies.pop(0)
        return ModelTurn(text=text)
