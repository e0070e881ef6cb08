"""Build BFCL FC-format outputs for the agreement test: oracle answers plus perturbations.

Every output is a dict ``{key, id, category, result}``; ``key`` is unique per output.
Perturbations: wrong type, numeric string, int-valued float, changed value, missing param,
extra param, swapped list order, alternative acceptable values, reordered parallel calls,
extra call, no call (empty list and free text), malformed JSON, kept dotted name.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

from callbench.benchmarks.bfcl.data import SINGLE_TURN, load_answers, load_questions
from callbench.benchmarks.bfcl.oracle import fc_result, gold_calls

Calls = list[tuple[str, dict]]


def _retype(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return json.dumps(value)
    return [value]


def _change(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + " changed"
    if isinstance(value, list):
        return value + value[:1] if value else ["x"]
    if isinstance(value, dict):
        return {**value, "zz": 1}
    return value


def _on_first_param(calls: Calls, edit: Callable[[str, Any], Any]) -> Calls | None:
    """Apply ``edit`` to the first parameter it accepts (returns a value, or None to skip)."""
    out = copy.deepcopy(calls)
    for _, args in out:
        for param, value in list(args.items()):
            new = edit(param, value)
            if new is not None:
                args[param] = new
                return out
    return None


def variants(calls: Calls, category: str) -> Iterator[tuple[str, Calls | str | list]]:
    """(variant name, calls or raw result) for one entry's gold calls."""
    yield "oracle", calls
    yield "wrong_type", _on_first_param(calls, lambda p, v: _retype(v))
    yield "numeric_string", _on_first_param(calls, lambda p, v: str(v) if type(v) in (int, float) else None)
    yield "int_float", _on_first_param(calls, lambda p, v: float(v) if type(v) is int else None)
    yield (
        "float_int",
        _on_first_param(calls, lambda p, v: int(v) if type(v) is float and v.is_integer() else None),
    )
    yield "changed_value", _on_first_param(calls, lambda p, v: _change(v))
    yield (
        "swapped_list",
        _on_first_param(
            calls, lambda p, v: v[::-1] if isinstance(v, list) and len(v) > 1 and v != v[::-1] else None
        ),
    )
    yield (
        "case_punct",
        _on_first_param(
            calls, lambda p, v: v.upper().replace(" ", "-") if isinstance(v, str) and v.strip() else None
        ),
    )
    if calls and calls[0][1]:
        missing = copy.deepcopy(calls)
        missing[0][1].pop(next(iter(missing[0][1])))
        yield "missing_param", missing
    extra = copy.deepcopy(calls)
    if extra:
        extra[0][1]["zz_extra_param"] = 1
        yield "extra_param", extra
        yield "extra_call", copy.deepcopy(calls) + copy.deepcopy(calls[:1])
    if len(calls) > 1:
        yield "reordered_calls", calls[::-1]
        yield "rotated_calls", calls[1:] + calls[:1]
    yield "no_call", []
    yield "text", "I am sorry, I cannot help with that."


def build_outputs(
    folder, categories=SINGLE_TURN, underscore_to_dot: bool = True, stride: int = 1
) -> list[dict[str, Any]]:
    """Outputs for every ``stride``-th entry of the categories (oracle + perturbations + oddities)."""
    rows: list[dict[str, Any]] = []
    for category in categories:
        answers = load_answers(category, folder)
        for entry in load_questions(category, folder)[::stride]:
            truth = answers.get(entry["id"])
            calls = gold_calls(entry, truth, category) if truth else _relevance_calls(entry)
            for name, variant in variants(calls, category):
                if variant is None:
                    continue
                result = variant if isinstance(variant, str) else fc_result(variant, underscore_to_dot)
                rows.append(_row(entry["id"], category, name, result))
            rows.extend(_raw_oddities(entry["id"], category, calls, underscore_to_dot))
    return rows


def _relevance_calls(entry: dict[str, Any]) -> Calls:
    doc = entry["function"][0] if entry["function"] else {"name": "f"}
    return [(doc["name"], {"query": "anything"})]


def _raw_oddities(entry_id: str, category: str, calls: Calls, underscore_to_dot: bool) -> list[dict]:
    if not calls:
        return []
    name = calls[0][0].replace(".", "_") if underscore_to_dot else calls[0][0]
    rows = [
        _row(entry_id, category, "malformed_json", [{name: '{"a": 1,'}]),
        _row(entry_id, category, "args_not_object", [{name: "[1, 2]"}]),
        _row(entry_id, category, "empty_call", [{}]),
    ]
    if "." in calls[0][0]:
        rows.append(_row(entry_id, category, "dotted_name", fc_result(calls, underscore_to_dot=False)))
    return rows


def _row(entry_id: str, category: str, variant: str, result: Any) -> dict[str, Any]:
    return {"key": f"{entry_id}#{variant}", "id": entry_id, "category": category, "result": result}
