"""BFCL's multi-turn checker: per-turn state and execution-result checks, re-executed.

Like bfcl-eval 2026.3.23, the model's calls are re-executed turn by turn against fresh backend
instances, beside a replay of the ground truth.  After every turn whose ground truth is not
empty: (1) every public attribute of every ground-truth instance must equal the model's, and
(2) every ground-truth execution result must appear among all results the model produced so
far (unordered, with multiplicity).  Turns with an empty ground truth are not checked
directly.  Fewer turns than the ground truth means the model was force-terminated.
Beside this all-or-nothing verdict, ``partial`` is the share of checked turns that pass on
their own (a diagnostic; it never decides the pass).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.backend import World, parse_call
from callbench.benchmarks.bfcl.options import BfclOptions, Check
from callbench.benchmarks.bfcl.verdicts import to_verdict

if TYPE_CHECKING:
    from callbench.plugin import Case, Trace, Verdict

Call = tuple[str, tuple, dict[str, Any]]
_MISSING = object()


@dataclass
class MultiTurnOutcome:
    """The verdict plus per-turn diagnostics (None for turns with empty ground truth)."""

    check: Check
    turns: list[bool | None] = field(default_factory=list)

    @property
    def partial(self) -> float | None:
        judged = [flag for flag in self.turns if flag is not None]
        return sum(judged) / len(judged) if judged else None


def check_multi_turn(
    involved: list[str],
    initial_config: dict[str, Any],
    long_context: bool,
    model_turns: list[list[list[Call]]],
    truth: list[list[str]],
) -> MultiTurnOutcome:
    """Judge decoded model calls (turn -> non-empty steps -> calls) against the ground truth."""
    if len(model_turns) != len(truth):
        return MultiTurnOutcome(
            Check.fail(
                "multi_turn:force_terminated",
                f"Model was force-terminated: {len(model_turns)} of {len(truth)} turns.",
            )
        )
    model_world = World(involved, initial_config, long_context)
    gold_world = World(involved, initial_config, long_context)
    produced: list[str] = []
    first: Check | None = None
    flags: list[bool | None] = []
    for index, (steps, gold_calls) in enumerate(zip(model_turns, truth, strict=False)):
        for step in steps:
            produced.extend(model_world.call(*call) for call in step)
        expected = [gold_world.call(*parse_call(text)) for text in gold_calls]
        if not gold_calls:
            flags.append(None)
            continue
        verdict = _turn_check(index, steps, model_world, gold_world, produced, expected)
        flags.append(verdict.valid)
        if first is None and not verdict.valid:
            first = verdict
    return MultiTurnOutcome(first or Check.ok(), flags)


def _turn_check(
    index: int, steps: list, model_world: World, gold_world: World, produced: list[str], expected: list[str]
) -> Check:
    if not steps:
        return Check.fail(
            "multi_turn:empty_turn_model_response", f"Model response list is empty for turn {index}"
        )
    for class_name, gold in gold_world.instances.items():
        model = model_world.instances[class_name]
        differing = [
            key
            for key in vars(gold)
            if not key.startswith("_") and getattr(model, key, _MISSING) != getattr(gold, key)
        ]
        if differing:
            return Check.fail(
                "multi_turn:instance_state_mismatch",
                f"Model instance for {class_name} does not match the ground truth state "
                f"after turn {index} (attributes {differing}).",
            )
    remaining = list(produced)
    missing = []
    for item in expected:
        if item in remaining:
            remaining.remove(item)
        else:
            missing.append(item)
    if missing:
        return Check.fail(
            "multi_turn:execution_response_mismatch",
            f"Execution results so far miss ground-truth results of turn {index}: {missing[:3]}",
        )
    return Check.ok()


def turns_from_trace(trace: Trace) -> list[list[list[Call]]]:
    """Model calls grouped as turn -> steps (rounds with decodable calls) -> calls."""
    info = (trace.final_state or {}).get("bfcl", {})
    round_turns: list[int] = info.get("round_turns", [])
    count = (max(round_turns) + 1) if round_turns else 0
    turns: list[list[list[Call]]] = [[] for _ in range(count)]
    by_round: dict[int, list] = {}
    for call in trace.calls:
        by_round.setdefault(call.round, []).append(call)
    for round_index, calls in sorted(by_round.items()):
        if round_index - 1 >= len(round_turns):
            continue
        if any(call.arguments is None for call in calls):
            continue  # BFCL skips a step whose calls do not all decode
        # Schema-rejected calls are re-executed too: BFCL's checker executes every decoded call.
        if calls:
            turns[round_turns[round_index - 1]].append([(c.tool, (), dict(c.arguments or {})) for c in calls])
    return turns


def decode_result_turns(result: Any) -> list[list[list[Call]]] | None:
    """Turns from a BFCL FC multi-turn result (turn -> step -> ``[{name: json}]``); None if malformed."""
    if type(result) is not list:
        return None
    turns = []
    for turn in result:
        steps = []
        for step in turn:
            try:
                items = [step] if type(step) is dict else step
                calls = [
                    (name, (), json.loads(value) if type(value) is str else value)
                    for item in items
                    for name, value in item.items()
                ]
            except Exception:  # noqa: BLE001, S112 - BFCL skips an undecodable step
                continue
            if calls:
                steps.append(calls)
        turns.append(steps)
    return turns


def score_multi_turn(case: Case, trace: Trace, options: BfclOptions) -> Verdict:
    """The ``bfcl`` verdict of a multi-turn case."""

    config, meta = case.executor_config, case.metadata["bfcl"]
    outcome = check_multi_turn(
        config["involved_classes"],
        config["initial_config"],
        config["long_context"],
        turns_from_trace(trace),
        meta["ground_truth"],
    )
    details = {
        "category": meta["category"],
        "passed": outcome.check.valid,
        "error_type": outcome.check.error_type,
        "turns": outcome.turns,
        **options.describe(),
    }
    return to_verdict("bfcl", outcome.check, details, partial=outcome.partial)


def judge_multi_result(entry: dict[str, Any], result: Any, truth: list[list[str]]) -> MultiTurnOutcome:
    """Judge a stored BFCL multi-turn FC result for one question entry."""
    turns = decode_result_turns(result)
    if turns is None:
        return MultiTurnOutcome(
            Check.fail(
                "multi_turn:inference_error",
                "Error during inference phase: the result is not a list of turns.",
            )
        )
    return check_multi_turn(
        entry["involved_classes"],
        entry.get("initial_config", {}),
        "long_context" in entry["id"],
        turns,
        truth,
    )
