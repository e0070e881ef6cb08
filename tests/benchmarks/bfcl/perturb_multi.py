"""Multi-turn BFCL FC-format results for the agreement test: gold play plus perturbations."""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Iterator
from typing import Any

from callbench.benchmarks.bfcl.backend import World, parse_call
from callbench.benchmarks.bfcl.data import MULTI_TURN, load_answers, load_questions


def _kwargs_turns(entry: dict[str, Any], truth: list[list[str]]) -> list[list[tuple[str, dict]]]:
    world = World(entry["involved_classes"], {}, False)
    turns = []
    for turn in truth:
        calls = []
        for text in turn:
            name, args, kwargs = parse_call(text)
            params = list(inspect.signature(world.methods[name]).parameters)
            calls.append((name, {**dict(zip(params, args, strict=False)), **kwargs}))
        turns.append(calls)
    return turns


def _steps(calls: list[tuple[str, dict]]) -> list[Any]:
    """One step with every call, followed by a text step (how an FC model ends a turn)."""
    if not calls:
        return ["Nothing to do."]
    return [[{name: json.dumps(args)} for name, args in calls], "Done."]


def _result(turns: list[list[tuple[str, dict]]]) -> list[list[Any]]:
    return [_steps(calls) for calls in turns]


def variants(turns: list[list[tuple[str, dict]]]) -> Iterator[tuple[str, Any]]:
    """(variant name, result) pairs."""
    yield "gold", _result(turns)
    yield "one_call_per_step", [[[{n: json.dumps(a)}] for n, a in calls] + ["Done."] for calls in turns]
    busy = [index for index, calls in enumerate(turns) if calls]
    if busy:
        skipped = copy.deepcopy(turns)
        skipped[busy[0]] = []
        yield "skip_turn", _result(skipped)
        dropped = copy.deepcopy(turns)
        dropped[busy[-1]] = dropped[busy[-1]][:-1]
        yield "drop_last_call", _result(dropped)
        changed = copy.deepcopy(turns)
        for _name, args in changed[busy[0]]:
            key = next(
                (k for k, v in args.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)),
                None,
            )
            if key is not None:
                args[key] = args[key] + 1 if isinstance(args[key], (int, float)) else args[key] + "x"
                break
        yield "changed_value", _result(changed)
        extra = copy.deepcopy(turns)
        extra[busy[0]] = extra[busy[0]] + extra[busy[0]][:1]
        yield "repeated_call", _result(extra)
        reordered = copy.deepcopy(turns)
        reordered[busy[0]] = reordered[busy[0]][::-1]
        yield "reordered_calls", _result(reordered)
        unknown = copy.deepcopy(turns)
        unknown[busy[0]] = unknown[busy[0]] + [("no_such_function", {"x": 1})]
        yield "unknown_function", _result(unknown)
    yield "truncated", _result(turns)[:-1]
    yield "not_a_list", "Error during inference: rate limited"


def build_outputs(folder, categories=MULTI_TURN, limit: int | None = None) -> list[dict[str, Any]]:
    """Rows ``{key, id, category, result}`` for the multi-turn categories."""
    rows = []
    for category in categories:
        answers = load_answers(category, folder)
        for entry in load_questions(category, folder)[:limit]:
            turns = _kwargs_turns(entry, answers[entry["id"]])
            for name, result in variants(turns):
                rows.append(
                    {
                        "key": f"{entry['id']}#{name}",
                        "id": entry["id"],
                        "category": category,
                        "result": result,
                    }
                )
    return rows
