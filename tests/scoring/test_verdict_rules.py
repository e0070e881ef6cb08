"""Verdict-validity rules of the strict tiers: each test is the trace a careless or adversarial model
would produce, with the verdict the rule demands (docs/scoring.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from core_helpers import case, obj, trace, verdicts

from callbench.executors.python import PythonExecutor
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import CONTINUATION_GUIDANCE, ModePolicy
from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn
from callbench.tools.registry import ToolRegistry
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings

CONTRACT, EXECUTION, COMPLETION = (
    "native-function-contract",
    "real-tool-execution",
    "task-completion-execution",
)


def reg() -> ToolRegistry:
    string, integer = {"type": "string"}, {"type": "integer"}
    return ToolRegistry(
        [
            ToolContract(name="search", read_only=True, parameters=obj({"query": string}, ["query"])),
            ToolContract(name="open_entry", parameters=obj({"id": string}, ["id"])),
            ToolContract(name="add_task", parameters=obj({"title": string}, ["title"])),
            ToolContract(name="mark_done", parameters=obj({"task_id": string}, ["task_id"])),
            ToolContract(name="copy", parameters=obj({"start": integer, "end": integer}, ["start", "end"])),
            ToolContract(name="paste", parameters=obj({"at": integer}, ["at"])),
            ToolContract(
                name="translate_dna",
                read_only=True,
                parameters=obj({"dna": string, "reading_frame": {"type": "integer", "default": 1}}, ["dna"]),
            ),
            ToolContract(
                name="translate_sequence",
                read_only=True,
                parameters=obj(
                    {"sequence": string, "frame": {"type": "integer", "default": 1}}, ["sequence"]
                ),
                equivalent_to=[
                    {"tool": "translate_dna", "keys": {"sequence": "dna", "frame": "reading_frame"}}
                ],
            ),
            ToolContract(
                name="apply", parameters=obj({"auto_save": {"type": "boolean"}, "filename": string})
            ),
            ToolContract(
                name="export",
                parameters=obj({"filename": string}, ["filename"]),
                follow_up_of=[{"tool": "apply", "same_values": {"filename": "result.savedTo"}}],
            ),
            ToolContract(
                name="repeats",
                read_only=True,
                parameters=obj(
                    {"region": string, "min_copies": {"type": "integer", "default": 3}}, ["region"]
                ),
            ),
            ToolContract(
                name="navigate",
                parameters=obj({"position": integer, "start": integer}),
                alternative_keys={"position": [["start"]]},
            ),
        ]
    )


def run(expected: list[dict[str, Any]], *calls: Any, **extra: Any) -> dict[str, Any]:
    registry = reg()
    return verdicts(case(expected, **extra), trace(*calls, reg=registry), registry)


def outcome(v: dict[str, Any]) -> tuple[bool, bool, bool]:
    return v[CONTRACT].passed, v[EXECUTION].passed, v[COMPLETION].passed


# -- item 2: equivalents whose argument names differ ------------------------------------------------
def test_equivalent_tool_with_mapped_keys_passes_completion() -> None:
    v = run(
        [{"tool": "translate_dna", "arguments": {"dna": "ATGAAA", "reading_frame": 2}}],
        ("translate_sequence", {"sequence": "ATGAAA", "frame": 2}, {"result": {"protein": "MK"}}),
    )
    assert outcome(v) == (False, False, True), v[COMPLETION].rationale


def test_equivalent_tool_with_a_wrong_mapped_value_fails() -> None:
    v = run(
        [{"tool": "translate_dna", "arguments": {"dna": "ATGAAA", "reading_frame": 2}}],
        ("translate_sequence", {"sequence": "ATGAAA", "frame": 3}, {"result": {"protein": "x"}}),
    )
    assert not v[COMPLETION].passed and "argument_mismatch" in v[COMPLETION].codes


def test_mapping_is_used_in_both_directions() -> None:
    v = run(
        [{"tool": "translate_sequence", "arguments": {"sequence": "ATG"}}],
        ("translate_dna", {"dna": "ATG"}, {"result": {"protein": "M"}}),
    )
    assert v[COMPLETION].passed, v[COMPLETION].rationale


def test_nudge_counts_an_equivalent_call_as_progress() -> None:
    registry = reg()
    expected = [
        {"tool": "translate_dna", "arguments": {"dna": "ATG"}},
        {"tool": "open_entry", "arguments": {"id": "x"}},
    ]
    provider = ScriptedProvider(
        [tool_call_turn("translate_sequence", {"sequence": "ATG"}), text_turn("done")]
    )
    episode = Episode(case(expected), list(registry), ModePolicy("oracle-assisted"), "", registry=registry)
    session = PythonExecutor({"translate_sequence": lambda sequence: {"protein": "M"}}).start(
        case(expected), Path("."), None
    )
    asyncio.run(run_episode(episode, provider, session, GenerationSettings()))
    nudges = [r.nudge for r in episode.trace.rounds if r.nudge]
    assert nudges and nudges[0].startswith("You have completed 1 of 2 requested steps")


def test_guidance_text_does_not_promise_rejection_of_repeated_calls() -> None:
    # Repeated identical calls are executed (cases may ask for them), so the text must not say otherwise.
    assert "rejected" not in CONTINUATION_GUIDANCE


# -- item 3: a failed call, then a successful identical retry ---------------------------------------
def test_failed_call_then_successful_retry_passes_completion() -> None:
    failed = {"execution": "error", "error": "clipboard is empty", "result": None}
    v = run(
        [{"tool": "copy", "arguments": {"start": 1, "end": 5}}, {"tool": "paste", "arguments": {"at": 9}}],
        ("paste", {"at": 9}, failed),
        ("copy", {"start": 1, "end": 5}),
        ("paste", {"at": 9}),
    )
    assert outcome(v) == (False, False, True), v[COMPLETION].rationale


def test_retry_that_also_fails_still_fails_completion() -> None:
    failed = {"execution": "error", "error": "boom", "result": None}
    v = run(
        [{"tool": "paste", "arguments": {"at": 9}}],
        ("paste", {"at": 9}, failed),
        ("paste", {"at": 9}, failed),
    )
    assert not v[COMPLETION].passed and "execution_failed" in v[COMPLETION].codes


# -- item 4: a $ref is bound to the call paired with the referenced step ----------------------------
def test_reference_to_the_wrong_entity_fails_completion() -> None:
    expected = [
        {"tool": "search", "arguments": {"query": "lacZ"}},
        {"tool": "open_entry", "arguments": {"id": {"$ref": "search.id"}}},
    ]
    v = run(
        expected,
        ("search", {"query": "lacZ"}, {"result": {"id": "P1"}}),
        ("search", {"query": "recA"}, {"result": {"id": "P2"}}),
        ("open_entry", {"id": "P2"}),
    )
    assert not v[COMPLETION].passed and "argument_mismatch" in v[COMPLETION].codes


def test_reference_to_the_right_entity_after_a_tolerated_search_passes() -> None:
    expected = [
        {"tool": "search", "arguments": {"query": "lacZ"}},
        {"tool": "open_entry", "arguments": {"id": {"$ref": "search.id"}}},
    ]
    v = run(
        expected,
        ("search", {"query": "recA"}, {"result": {"id": "P2"}}),
        ("search", {"query": "lacZ"}, {"result": {"id": "P1"}}),
        ("open_entry", {"id": "P1"}),
    )
    assert outcome(v) == (False, False, True), v[COMPLETION].rationale


def test_marking_the_other_task_done_fails() -> None:
    expected = [
        {"tool": "add_task", "arguments": {"title": "A"}},
        {"tool": "mark_done", "arguments": {"task_id": {"$ref": "add_task.id"}}},
    ]
    v = run(
        expected,
        ("add_task", {"title": "A"}, {"result": {"id": "t1"}}),
        ("add_task", {"title": "B"}, {"result": {"id": "t2"}}),
        ("mark_done", {"task_id": "t2"}),
    )
    assert outcome(v) == (False, False, False)
    assert "argument_mismatch" in v[COMPLETION].codes


# -- item 5: follow-ups only after the call they follow, only where the condition holds -------------
APPLY_THEN_EXPORT = [{"tool": "apply", "arguments": {"auto_save": True, "filename": "out.gbk"}}]


def test_re_export_of_the_auto_saved_file_is_tolerated() -> None:
    v = run(
        APPLY_THEN_EXPORT,
        ("apply", {"auto_save": True, "filename": "out.gbk"}, {"result": {"savedTo": "out.gbk"}}),
        ("export", {"filename": "./out.gbk"}),
    )
    assert v[COMPLETION].passed, v[COMPLETION].rationale


def test_export_of_a_different_file_is_an_unexpected_state_change() -> None:
    v = run(
        APPLY_THEN_EXPORT,
        ("apply", {"auto_save": True, "filename": "out.gbk"}, {"result": {"savedTo": "out.gbk"}}),
        ("export", {"filename": "other.gbk"}),
    )
    assert "unexpected_state_change" in v[COMPLETION].codes


def test_follow_up_before_the_call_it_follows_is_not_tolerated() -> None:
    v = run(
        APPLY_THEN_EXPORT,
        ("export", {"filename": "out.gbk"}),
        ("apply", {"auto_save": True, "filename": "out.gbk"}, {"result": {"savedTo": "out.gbk"}}),
    )
    assert "unexpected_state_change" in v[COMPLETION].codes


# -- item 6: a literal equal to the schema default may be omitted in the completion tier ------------
def test_omitted_literal_equal_to_the_schema_default_passes_completion_only() -> None:
    v = run(
        [{"tool": "repeats", "arguments": {"region": "r1", "min_copies": 3}}], ("repeats", {"region": "r1"})
    )
    assert outcome(v) == (False, False, True), v[COMPLETION].rationale


def test_a_different_value_than_the_default_literal_still_fails() -> None:
    v = run(
        [{"tool": "repeats", "arguments": {"region": "r1", "min_copies": 3}}],
        ("repeats", {"region": "r1", "min_copies": 4}),
    )
    assert not v[COMPLETION].passed


def test_omitting_a_literal_that_differs_from_the_default_fails() -> None:
    v = run(
        [{"tool": "repeats", "arguments": {"region": "r1", "min_copies": 5}}], ("repeats", {"region": "r1"})
    )
    assert not v[COMPLETION].passed and "argument_missing" in v[COMPLETION].codes


# -- item 7: smaller rule defects --------------------------------------------------------------------
def test_case_without_expected_steps_fails_every_tier_on_a_read_only_call() -> None:
    v = run([], ("search", {"query": "x"}))
    assert outcome(v) == (False, False, False)


def test_case_without_expected_steps_passes_without_calls() -> None:
    assert outcome(run([])) == (True, True, True)


def test_wrong_value_under_an_alternative_key_is_a_mismatch() -> None:
    v = run([{"tool": "navigate", "arguments": {"position": 100}}], ("navigate", {"start": 200}))
    assert "argument_mismatch" in v[COMPLETION].codes and "argument_missing" not in v[COMPLETION].codes
