"""Multi-turn BFCL entries as cases for the ``bfcl-multi-turn`` executor.

A case starts with the first user turn; the executor session supplies the later user turns
(and, for ``miss_func``, the withheld function docs) through the harness's scripted-turn hook.
Function docs come from ``multi_turn_func_doc/`` for the entry's involved classes.
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.backend import backend_class, parse_call
from callbench.benchmarks.bfcl.data import category_of
from callbench.benchmarks.bfcl.schema import contract_from_doc
from callbench.plugin import Case, ExpectedStep, Message

STEP_LIMIT = 20
"""BFCL's MAXIMUM_STEP_LIMIT: more tool-calling steps than this in one turn force-quit the entry."""
DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
MULTI_TURN_TIMEOUT_S = 900.0
"""Whole-episode timeout: several user turns of several model requests each."""
ADDED_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?"


def class_docs(folder: Path, class_name: str) -> list[dict[str, Any]]:
    """Function docs of one backend class."""
    path = folder / "multi_turn_func_doc" / DOC_FILES[class_name]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_docs(entry: dict[str, Any], folder: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    """(docs offered from the start, withheld docs by turn index) as BFCL arranges them."""
    docs: list[dict[str, Any]] = []
    for class_name in entry["involved_classes"]:
        docs.extend(class_docs(folder, class_name))
    withheld: dict[str, list[dict[str, Any]]] = {}
    for turn, names in (entry.get("missed_function") or {}).items():
        withheld[turn] = []
        for name in names:
            position = next((i for i, doc in enumerate(docs) if doc["name"] == name), None)
            if position is not None:
                withheld[turn].append(docs.pop(position))
    return docs, withheld


@functools.cache
def method_params(class_name: str) -> dict[str, list[str]]:
    """Public method name -> parameter names of a backend class."""
    out = {}
    for name, function in inspect.getmembers(backend_class(class_name), predicate=inspect.isfunction):
        if not name.startswith("_"):
            out[name] = [param for param in inspect.signature(function).parameters if param != "self"]
    return out


def gold_steps(involved: list[str], truth: list[list[str]]) -> list[ExpectedStep]:
    """Ground-truth calls as expected steps with keyword arguments; ``turn`` = BFCL turn index.

    An agent that plays them must end each turn with a text-only round (see docs/bfcl.md).
    """
    signatures: dict[str, list[str]] = {}
    for class_name in involved:
        signatures.update(method_params(class_name))
    steps = []
    for turn, calls in enumerate(truth):
        for text in calls:
            name, args, kwargs = parse_call(text)
            arguments = {**dict(zip(signatures.get(name, []), args, strict=False)), **kwargs}
            steps.append(ExpectedStep(tool=name, arguments=arguments, turn=turn))
    return steps


def multi_turn_case(entry: dict[str, Any], truth: list[list[str]], category: str, folder: Path) -> Case:
    """One multi-turn entry as a case run by the ``bfcl-multi-turn`` executor."""
    docs, withheld = split_docs(entry, folder)
    turns = entry["question"]
    first = [Message(role=m["role"], content=m.get("content") or "") for m in turns[0]]
    return Case(
        id=entry["id"],
        category=category,
        messages=first,
        tools=[contract_from_doc(doc, category) for doc in docs],
        expected=gold_steps(entry["involved_classes"], truth),
        executor="bfcl-multi-turn",
        harness_guidance=False,
        max_rounds=(STEP_LIMIT + 2) * len(turns),
        timeout_s=MULTI_TURN_TIMEOUT_S,
        executor_config={
            "involved_classes": entry["involved_classes"],
            "initial_config": entry.get("initial_config", {}),
            "long_context": "long_context" in category,
            "later_turns": turns[1:],
            "withheld_docs": withheld,
        },
        # oracle_turns: user turns in the conversation; a turn-aware gold player emits the steps of
        # turn t, then a text-only round, for t in range(oracle_turns) (see docs/bfcl.md).
        metadata={
            "bfcl": {"category": category_of(entry["id"]), "ground_truth": truth},
            "oracle_turns": len(turns),
        },
    )
