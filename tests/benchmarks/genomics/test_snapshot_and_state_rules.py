"""State snapshots are detached values; state-match counts from the true initial state (verdict validity)."""

from __future__ import annotations

from pathlib import Path

from callbench import api
from callbench.benchmarks.genomics.tools import marks, navigation, tracks
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.scoring.state_match import StateMatchScorer
from callbench.suites.suite import Suite
from callbench.types.trace import Trace


def test_snapshot_is_detached_from_the_live_workspace(ws: Workspace) -> None:
    before = ws.snapshot()
    tracks.toggle_track(ws, trackName="variants", visible=True)
    marks.highlight_region(ws, chromosome="SYN01", start=100, end=200)
    assert before["tracks"]["variants"] is False
    assert before["highlights"] == []
    assert before != ws.snapshot()


def test_snapshot_sees_tab_titles_saved_views_and_windows(ws: Workspace) -> None:
    base = ws.snapshot()
    ws.tabs[0]["title"] = "wrong title"
    assert ws.snapshot()["tabs"] != base["tabs"]
    navigation.save_view_state(ws, name="v1")
    saved = ws.snapshot()
    ws.saved_views["v1"]["view"] = {"chromosome": "SYN01", "start": 1, "end": 10}
    assert ws.snapshot()["saved_views"] != saved["saved_views"]
    ws.windows.append({"id": "window_2", "title": "Other"})
    assert ws.snapshot()["windows"] != saved["windows"]


def test_gold_replay_initial_state_is_the_true_initial_state(suite_all: Suite) -> None:
    scorer = StateMatchScorer(suite_all)
    case = (
        next(c for c in suite_all.cases if c.id == "simple/track_variants_on")
        if any(c.id == "simple/track_variants_on" for c in suite_all.cases)
        else None
    )
    # Any track-toggling case will do: find one whose gold path calls toggle_track.
    case = case or next(c for c in suite_all.cases if [s.tools[0] for s in c.expected] == ["toggle_track"])
    states = scorer.gold_states(case)
    assert states is not None and states.initial != states.final
    assert scorer.score(case, Trace(final_state=states.initial)).details["gold_changes_state"] is True


def test_refuse_leaves_every_state_unchanged(tmp_path: Path) -> None:
    result = api.run("genomics", "refuse", tier=["state-match"], out_dir=tmp_path / "r", progress="quiet")
    figures = result.summary["scorer_aggregates"]["state-match"]
    assert figures["read_only_left_unchanged"] == figures["read_only_cases"]
    assert figures["state_changing_matched"] == 0
    # The state-changing workflows are the ones whose gold path changes something: well over 37.
    assert figures["state_changing_cases"] >= 67


def test_state_match_is_not_applicable_with_a_stateless_executor(tmp_path: Path) -> None:
    result = api.run(
        "genomics",
        "oracle",
        tier=["task-completion-execution", "state-match"],
        executor="contract",
        case_ids=["simple/track_variants_on", "complex/cut_apply_undo"],
        out_dir=tmp_path / "r",
        progress="quiet",
    )
    figures = result.summary["tiers"]["state-match"]
    assert figures["n"] == 0 and figures["accuracy"] is None and figures["n_not_applicable"] == 2
    assert all(s["tier"] != "state-match" for s in result.summary["statistics"]["strata"])
    verdict = result.records[0].verdicts["state-match"]
    assert not verdict.applicable and not verdict.passed and verdict.rationale.startswith("not applicable")


def _completion(suite: Suite, case_id: str, tool: str, arguments: dict) -> bool:
    from callbench.harness.validate import revalidate
    from callbench.scoring.tiers import score_tier
    from callbench.types.trace import trace_from_calls

    case = next(c for c in suite.cases if c.id == case_id)
    registry = suite.registry_for(case)
    trace = revalidate(
        trace_from_calls([{"tool": tool, "arguments": arguments, "result": {"protein": "MA"}}]), registry
    )
    return score_tier("task-completion-execution", case, trace, registry).passed


def test_translate_sequence_stands_for_translate_dna_with_its_own_keys(suite_all: Suite) -> None:
    assert _completion(
        suite_all,
        "simple/seq_translate_frame2",
        "translate_sequence",
        {"sequence": "GATGGCTAAAGGTGAAGCGTAA", "frame": 2},
    )
    assert not _completion(
        suite_all,
        "simple/seq_translate_frame2",
        "translate_sequence",
        {"sequence": "GATGGCTAAAGGTGAAGCGTAA", "frame": 1},
    )
    assert _completion(
        suite_all,
        "simple/seq_translate_table1",
        "translate_dna",
        {"dna": "ATGTGGTGACAATAG", "genetic_code": 1},
    )


def test_literals_equal_to_the_schema_default_are_flagged_at_load(tmp_path: Path, suite_all: Suite) -> None:
    from callbench.harness.runfolder import read_header
    from callbench.scoring.lint import default_literal_notes

    notes = default_literal_notes(suite_all)
    assert any("search_tandem_repeats" in n and "minCopies = 3" in n for n in notes)
    result = api.run(
        "genomics",
        "oracle",
        case_ids=["simple/search_tandem_repeats"],
        out_dir=tmp_path / "r",
        progress="quiet",
    )
    assert read_header(result.run_dir).suites[0].notes == notes
