"""Cases accept the natural route a careful model takes, and still reject careless ones.

Each trace is played by a scripted provider through the real harness (python executor, every tier),
so the verdicts are exactly what a run would record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callbench import api
from callbench.benchmarks.genomics.bindings import BINDINGS as T
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.catalog import catalog
from callbench.providers.agents.scripted import ScriptedProvider, text_turn, tool_call_turn
from callbench.types.messages import ModelTurn

TIERS = ["native-function-contract", "real-tool-execution", "task-completion-execution", "state-match"]


def _verdicts(tmp_path: Path, suite: str, case_id: str, *turns: ModelTurn) -> dict[str, Any]:
    provider = ScriptedProvider([*turns, text_turn("Done.")])
    catalog().providers.register("genomics-natural-route", lambda spec: provider, replace=True)
    result = api.run(
        suite, "genomics-natural-route", tier=TIERS, case_ids=[case_id], out_dir=tmp_path / "run"
    )
    (record,) = result.records
    assert record.error is None
    return record.verdicts


def _failed(verdicts: dict[str, Any]) -> dict[str, str]:
    return {tier: v.rationale for tier, v in verdicts.items() if not v.passed}


# -- complex/cds_translate_mw: the weight of translate_dna's own output --------------------------------
def _lacz(tmp_path: Path) -> tuple[str, str]:
    ws = Workspace(tmp_path / "lacz")
    cds = T["get_coding_sequence"](ws, gene_name="lacZ")["codingSequence"]
    return cds, T["translate_dna"](ws, dna=cds)["protein"]


def test_weight_of_the_translate_dna_output_passes(tmp_path: Path) -> None:
    cds, protein = _lacz(tmp_path)
    assert protein.endswith("*")  # translate_dna keeps the stop; calculate_molecular_weight strips it
    verdicts = _verdicts(
        tmp_path,
        "genomics-complex",
        "cds_translate_mw",
        tool_call_turn("get_coding_sequence", {"gene_name": "lacZ"}),
        tool_call_turn("translate_dna", {"dna": cds}),
        tool_call_turn("calculate_molecular_weight", {"sequence": protein, "type": "protein"}),
    )
    assert _failed(verdicts) == {}


def test_weight_through_the_equivalent_translate_sequence_passes_completion(tmp_path: Path) -> None:
    # translate_sequence is a declared equivalent of translate_dna whose keys are mapped (dna -> sequence).
    cds, _ = _lacz(tmp_path)
    protein = T["translate_sequence"](Workspace(tmp_path / "ts"), sequence=cds)["protein"]
    verdicts = _verdicts(
        tmp_path,
        "genomics-complex",
        "cds_translate_mw",
        tool_call_turn("get_coding_sequence", {"gene_name": "lacZ"}),
        tool_call_turn("translate_sequence", {"sequence": cds}),
        tool_call_turn("calculate_molecular_weight", {"sequence": protein, "type": "protein"}),
    )
    assert set(_failed(verdicts)) == {"native-function-contract", "real-tool-execution"}


def test_weight_of_a_wrong_frame_fails(tmp_path: Path) -> None:
    cds, _ = _lacz(tmp_path)
    ws = Workspace(tmp_path / "frame2")
    wrong = T["translate_dna"](ws, dna=cds, reading_frame=2)["protein"].replace("*", "")
    verdicts = _verdicts(
        tmp_path,
        "genomics-complex",
        "cds_translate_mw",
        tool_call_turn("get_coding_sequence", {"gene_name": "lacZ"}),
        tool_call_turn("translate_dna", {"dna": cds, "reading_frame": 2}),
        tool_call_turn("calculate_molecular_weight", {"sequence": wrong, "type": "protein"}),
    )
    for tier in TIERS[:3]:
        assert not verdicts[tier].passed, tier


# -- get_action_list / show_action_list --------------------------------------------------------------
def test_show_action_list_answers_which_edits_wait(tmp_path: Path) -> None:
    verdicts = _verdicts(
        tmp_path, "genomics-simple", "edit_action_list", tool_call_turn("show_action_list", {})
    )
    assert _failed(verdicts) == {}


def test_copy_paste_checked_with_show_action_list_passes(tmp_path: Path) -> None:
    verdicts = _verdicts(
        tmp_path,
        "genomics-complex",
        "copy_paste_apply",
        tool_call_turn("copy_sequence", {"start": 1241, "end": 1269}),
        tool_call_turn("paste_sequence", {"position": 50000}),
        tool_call_turn("show_action_list", {}),
        tool_call_turn("execute_actions", {}),
    )
    assert _failed(verdicts) == {}


def test_copy_paste_without_checking_the_queue_fails(tmp_path: Path) -> None:
    verdicts = _verdicts(
        tmp_path,
        "genomics-complex",
        "copy_paste_apply",
        tool_call_turn("copy_sequence", {"start": 1241, "end": 1269}),
        tool_call_turn("paste_sequence", {"position": 50000}),
        tool_call_turn("execute_actions", {}),
    )
    for tier in TIERS[:3]:
        assert not verdicts[tier].passed, tier


def test_show_action_list_shows_the_queued_edits(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "queue")
    T["delete_sequence"](ws, start=100, end=109)
    shown = T["show_action_list"](ws)
    assert shown["shown"] and shown["actions"] == T["get_action_list"](ws)["actions"]


# -- complex/highlight_session_tour: remove_highlight by the label its schema accepts -------------------
def _tour(remove_with: str) -> list[ModelTurn]:
    return [
        tool_call_turn("navigate_to_position", {"chromosome": "SYN01", "start": 43000, "end": 46000}),
        tool_call_turn("highlight_region", {"start": 44000, "end": 45200, "label": "gyrA_zone"}),
        tool_call_turn("list_highlights", {}),
        tool_call_turn("remove_highlight", {"highlightId": remove_with}),
        tool_call_turn("clear_highlights", {}),
        tool_call_turn("save_view_state", {"name": "gyr_view"}),
        tool_call_turn("navigate_to_position", {"position": 80000}),
        tool_call_turn("restore_view_state", {"name": "gyr_view"}),
        tool_call_turn("bookmark_position", {"name": "gyrA neighbourhood"}),
    ]


def test_highlight_removed_by_its_label_passes(tmp_path: Path) -> None:
    assert (
        _failed(_verdicts(tmp_path, "genomics-complex", "highlight_session_tour", *_tour("gyrA_zone"))) == {}
    )


def test_highlight_removed_by_its_id_still_passes(tmp_path: Path) -> None:
    assert (
        _failed(_verdicts(tmp_path, "genomics-complex", "highlight_session_tour", *_tour("highlight_1")))
        == {}
    )


def test_highlight_removed_by_another_label_fails(tmp_path: Path) -> None:
    verdicts = _verdicts(tmp_path, "genomics-complex", "highlight_session_tour", *_tour("gyrA"))
    for tier in TIERS[:3]:
        assert not verdicts[tier].passed, tier


# -- export_genbank_format as a follow-up of execute_actions(auto_save) --------------------------------
def test_re_exporting_the_auto_saved_file_is_tolerated(tmp_path: Path) -> None:
    verdicts = _verdicts(
        tmp_path,
        "genomics-simple",
        "edit_execute_save",
        tool_call_turn("execute_actions", {"auto_save": True, "filename": "edited_genome.gbk"}),
        tool_call_turn("export_genbank_format", {"filename": "edited_genome.gbk"}),
    )
    assert verdicts["task-completion-execution"].passed, verdicts["task-completion-execution"].rationale


def test_exporting_another_file_after_execute_actions_is_a_state_change(tmp_path: Path) -> None:
    verdicts = _verdicts(
        tmp_path,
        "genomics-simple",
        "edit_execute_save",
        tool_call_turn("execute_actions", {"auto_save": True, "filename": "edited_genome.gbk"}),
        tool_call_turn("export_genbank_format", {"filename": "other.gbk"}),
    )
    assert "unexpected_state_change" in verdicts["task-completion-execution"].codes


def test_exporting_before_execute_actions_is_not_a_follow_up(tmp_path: Path) -> None:
    verdicts = _verdicts(
        tmp_path,
        "genomics-simple",
        "edit_execute_save",
        tool_call_turn("export_genbank_format", {"filename": "edited_genome.gbk"}),
        tool_call_turn("execute_actions", {"auto_save": True, "filename": "edited_genome.gbk"}),
    )
    assert "unexpected_state_change" in verdicts["task-completion-execution"].codes
