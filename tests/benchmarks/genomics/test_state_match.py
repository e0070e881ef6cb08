"""The ``state-match`` diagnostic: same final state by another route is visible; extra changes are caught."""

from __future__ import annotations

from pathlib import Path

from callbench import api
from callbench.benchmarks.genomics.suite import load_complex
from callbench.catalog import catalog
from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn
from callbench.scoring.state_match import StateMatchScorer
from callbench.types.trace import Trace

SCORERS = ["native-function-contract", "task-completion-execution", "state-match"]


def _run(tmp_path: Path, case_id: str, *turns) -> dict:
    provider = ScriptedProvider([*turns, text_turn("Done.")])
    catalog().providers.register("genomics-script", lambda spec: provider, replace=True)
    result = api.run(
        "genomics-complex", "genomics-script", tier=SCORERS, case_ids=[case_id], out_dir=tmp_path / "r"
    )
    (record,) = result.records
    return record.verdicts


def test_other_route_to_the_same_state_passes_state_match_only(tmp_path: Path) -> None:
    # Create the annotation with its final description in one call instead of create + update.
    verdicts = _run(
        tmp_path,
        "annotation_create_update",
        tool_call_turn(
            "create_annotation",
            {
                "name": "regulatory_region_A",
                "chromosome": "SYN01",
                "start": 15000,
                "end": 15150,
                "type": "regulatory_region",
                "description": "Highly conserved regulatory region",
            },
        ),
        tool_call_turn("list_annotations", {}),
    )
    assert verdicts["state-match"].passed, verdicts["state-match"].rationale
    assert not verdicts["native-function-contract"].passed
    assert not verdicts["task-completion-execution"].passed


def test_an_extra_state_change_fails_state_match(tmp_path: Path) -> None:
    # The completion tier forgives an extra call of an expected tool; the final state shows its effect.
    verdicts = _run(
        tmp_path,
        "track_visibility_check",
        tool_call_turn("get_track_status", {}),
        tool_call_turn(
            "toggle_track",
            {"trackName": "variants", "visible": True},
            ("toggle_track", {"trackName": "gc_content", "visible": False}),
        ),
        tool_call_turn("toggle_track", {"trackName": "reads", "visible": True}),
        tool_call_turn("get_track_status", {}),
    )
    state = verdicts["state-match"]
    assert not state.passed and list(state.details["differing"]) == ["tracks"]
    assert state.details["differing"]["tracks"]["actual"]["reads"] is True
    assert verdicts["task-completion-execution"].passed
    assert not verdicts["native-function-contract"].passed


def test_missing_step_leaves_a_different_state(tmp_path: Path) -> None:
    verdicts = _run(
        tmp_path,
        "cut_apply_undo",
        tool_call_turn("cut_sequence", {"chromosome": "SYN01", "start": 70000, "end": 70050}),
        tool_call_turn("execute_actions", {}),
    )
    assert set(verdicts["state-match"].details["differing"]) == {"sequences"}


def test_not_applicable_without_a_final_state() -> None:
    suite = load_complex()
    verdict = StateMatchScorer(suite).score(suite.cases[0], Trace())
    assert not verdict.applicable and not verdict.passed and verdict.details == {"applicable": False}
    assert "not applicable" in verdict.rationale


def test_gold_state_is_cached_per_case() -> None:
    suite = load_complex()
    scorer = StateMatchScorer(suite)
    case = next(c for c in suite.cases if c.id == "edit_and_save")
    first = scorer.gold_state(case)
    assert first is scorer.gold_state(case)
    assert first["files"] and "exports/edited.gbk" in first["files"]
    assert first["sequences"]["SYN01"]["length"] == 120000 + 6


def test_aggregate_separates_state_changing_workflows(tmp_path: Path) -> None:
    suite = load_complex()
    scorer = StateMatchScorer(suite)
    edit = next(c for c in suite.cases if c.id == "cut_apply_undo")
    lookup = next(c for c in suite.cases if c.id == "gene_neighbourhood")
    untouched = scorer.gold_states(lookup).initial
    verdicts = [
        scorer.score(edit, Trace(final_state=untouched)),
        scorer.score(lookup, Trace(final_state=untouched)),
    ]
    # cut + apply + undo restores the sequence, but the cut region stays on the clipboard.
    assert verdicts[0].details["gold_changes_state"] and list(verdicts[0].details["differing"]) == [
        "clipboard"
    ]
    assert verdicts[1].details["gold_changes_state"] is False and verdicts[1].passed
    slim = [v.model_copy(update={"details": {}}) for v in verdicts]  # run summaries drop details
    aggregate = scorer.aggregate([{"verdicts": {"state-match": v.model_dump()}} for v in slim])
    assert aggregate.tables is None and aggregate.figures == {
        "applicable": 2,
        "state_changing_cases": 1,
        "state_changing_matched": 0,
        "state_changing_accuracy": 0.0,
        "read_only_cases": 1,
        "read_only_left_unchanged": 1,
    }
