"""Conformance against the original app's real suites and contracts (../shared/data/codexomics).

Skipped with a reason when the data is absent locally; CI has it beside the clone.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from callbench.benchmarks.codexomics.markers import count_markers
from callbench.executors.contract import ContractExecutor
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy
from callbench.providers.agents.oracle import OracleAgent
from callbench.scoring.tiers import score_tier
from callbench.types.messages import GenerationSettings
from callbench.types.verdict import TIERS

NOT_STRICT_YAML = {
    "sequence/find_restriction_sites.yaml",
    "sequence/list_restriction_enzymes.yaml",
    "sequence/virtual_digest.yaml",
}


def test_every_case_and_contract_imports_without_errors(imported, cx_data):
    assert imported.count("error") == 0, [p.line() for p in imported.problems if p.severity == "error"]
    counts = Counter(c["metadata"]["suite_id"] for c in imported.cases)
    assert counts == {"automatic_simple": 143, "automatic_complex": 29}
    assert len(imported.contracts) == 195
    assert imported.suites["automatic_simple"]["imported"] == 143


def test_the_three_non_strict_yaml_files_are_repaired_and_reported(imported):
    repaired = {p.where for p in imported.problems if "repaired" in p.message}
    assert repaired == NOT_STRICT_YAML
    assert "5' overhang" in imported.contracts["virtual_digest"]["description"]


def test_all_contracts_with_missing_suite_keys_are_handled_and_reported(imported, cx_data):
    provenance = json.loads((cx_data / "tools_registry_provenance.json").read_text())
    listed = set(provenance["counts"]["contracts_with_suite_keys_not_in_schema"])
    assert len(listed) == 16
    added = {n for n, c in imported.contracts.items() if c["metadata"].get("added_keys")}
    renamed = {
        p.message.split(" renamed")[0] for p in imported.problems if "renamed to the contract" in p.message
    }
    reported = {p.where for p in imported.problems if "missing from the contract" in p.message}
    assert added <= listed and len(reported) == len(added)
    # The other listed contracts name the key under an upstream alias (sequence -> dna/primerSequence).
    for tool in listed - added:
        assert any(tool in json.dumps(c["expected"]) for c in imported.cases), tool
    assert renamed  # alias renames are reported as info


def test_ids_shared_by_both_suites_stay_distinct(imported):
    ids = [c["id"] for c in imported.cases]
    assert len(ids) == len(set(ids)) == 172
    for shared in ("nav_auto_01", "primer_auto_01", "restrict_auto_01"):
        assert f"automatic_simple:{shared}" in ids and f"automatic_complex:{shared}" in ids


def test_markers_survive_conversion(imported):
    complex_cases = [c for c in imported.cases if c["metadata"]["suite_id"] == "automatic_complex"]
    defaults = sum(_count_defaults(s["arguments"]) for c in complex_cases for s in c["expected"])
    assert defaults == 11  # benchmarkDefaultValue markers in the complex suite
    markers = Counter()
    for case in imported.cases:
        for step in case["expected"]:
            markers.update(count_markers(step["arguments"]))
    assert markers["$pattern"] == 4  # 3x <created_annotation_id> + 1x <created_protein_database>
    call_only = [c["id"] for c in imported.cases if any(s.get("call_only") for s in c["expected"])]
    assert sorted(call_only) == ["automatic_simple:blast_auto_03", "automatic_simple:blast_auto_05"]
    by_id = {c["id"]: c for c in imported.cases}
    assert by_id["automatic_complex:ui_auto_01"]["expected"][0]["times"] == 5
    assert by_id["automatic_complex:analysis_auto_02"]["order_free"] == [
        ["get_genome_info", "genome_codon_usage_analysis", "calc_region_gc"]
    ]
    assert by_id["automatic_complex:primer_auto_complex_02"]["expected"][2]["tool"] == [
        "jump_to_gene",
        "zoom_to_gene",
        "navigate_to_position",
    ]


def _count_defaults(value) -> int:
    if isinstance(value, dict):
        own = 1 if "$default" in value and value["$default"] is not None else 0
        return own + sum(_count_defaults(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_defaults(v) for v in value)
    return 0


def test_annotations_reach_the_loaded_registry(suite):
    registry = suite.registry
    assert registry.get("get_genome_info").read_only and not registry.get("toggle_track").read_only
    assert registry.equivalents("translate_dna") == {"translate_sequence"}
    assert "paste_sequence" in registry.get("execute_actions").follow_up_of
    assert ["tabIndex"] in registry.get("switch_to_tab").alternative_keys["tab_id"]


async def _oracle_verdicts(suite, tiers):
    out = {}
    executor = ContractExecutor()
    for case in suite.cases:
        episode = Episode(
            case, list(suite.registry_for(case)), ModePolicy("production-parity"), suite.system_prompt
        )
        session = executor.start(case, None, suite)  # the contract executor needs no folder
        trace = await run_episode(episode, OracleAgent().for_case(case), session, GenerationSettings())
        out[case.id] = {tier: score_tier(tier, case, trace, suite.registry_for(case)) for tier in tiers}
    return out


def test_oracle_passes_every_imported_case_in_every_tier_with_the_contract_executor(suite):
    verdicts = asyncio.run(_oracle_verdicts(suite, TIERS))
    assert len(verdicts) == 172
    failures = {
        (cid, tier): v.rationale for cid, by in verdicts.items() for tier, v in by.items() if not v.passed
    }
    assert failures == {}


@pytest.fixture(scope="module")
def golden(suite, cx_data):
    from callbench.benchmarks.codexomics.golden import replay_golden

    return replay_golden(suite, cx_data / "complex_golden_paths.json")


def test_golden_runs_pass_except_the_stale_one_and_the_legacy_only_one(golden):
    assert len(golden.golden) == 29
    # analysis_auto_01: stale (predates export_range/feature_types in the suite; upstream replay agrees).
    # protein_auto_complex_02: sends organism 'E. coli' for 'Escherichia coli'; only the legacy
    # evaluator's fuzzy similarity accepts that, an exact matcher (upstream strict-v2 too) cannot.
    assert golden.failing("golden") == {"analysis_auto_01": "stale", "protein_auto_complex_02": "mismatch"}
    stale = next(r for r in golden.golden if r.case_id == "analysis_auto_01")
    messages = " ".join(r.message for r in stale.verdict.reasons)
    assert "export_range" in messages and "feature_types" in messages
    legacy = next(r for r in golden.golden if r.case_id == "protein_auto_complex_02")
    assert {r.code for r in legacy.verdict.reasons} == {
        "argument_mismatch"
    } and "E. coli" in legacy.verdict.rationale


def test_padded_golden_runs_tolerate_read_only_extras(golden):
    assert golden.failing("padded") == golden.failing("golden")


def test_every_deliberately_wrong_run_fails(golden):
    assert len(golden.wrong) == 11
    assert [r.label for r in golden.wrong if r.verdict.passed] == []


def test_golden_runs_schema_validity_is_reported(golden):
    # The runs target the legacy evaluator; many are not schema-valid against the contracts.
    assert 0 < golden.schema_valid_runs < 29


def test_catalog_factory_imports_on_the_fly(cx_data):
    from callbench.benchmarks.codexomics.suite import load_suite
    from callbench.suites.suite import SuiteOptions

    complex_suite = load_suite("complex", SuiteOptions(data=cx_data))
    assert complex_suite.name == "codexomics-complex" and len(complex_suite.cases) == 29
    assert len(complex_suite.registry) == 195 and complex_suite.executor == "contract"
    assert any("repaired" in line for line in complex_suite.metadata["import_problems"])


def test_catalog_factory_errors_are_one_line_user_errors(tmp_path, monkeypatch):
    from callbench.benchmarks.codexomics.suite import load_suite
    from callbench.errors import UserError
    from callbench.suites.suite import SuiteOptions

    monkeypatch.delenv("CALLBENCH_CODEXOMICS_DATA", raising=False)
    with pytest.raises(UserError, match="needs --data"):
        load_suite("", SuiteOptions())
    with pytest.raises(UserError, match="choose one of"):
        load_suite("medium", SuiteOptions(data=tmp_path))
    with pytest.raises(UserError, match="missing"):
        load_suite("simple", SuiteOptions(data=tmp_path))


def test_imported_folder_runs_end_to_end_through_the_cli(suite_dir, tmp_path):
    from callbench.cli.main import main

    out = tmp_path / "run"
    code = main(
        [
            "run",
            "--suite",
            str(suite_dir),
            "--model",
            "oracle",
            "--tier",
            "all",
            "--k",
            "all",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert {tier: (v["n"], v["passed"]) for tier, v in summary["tiers"].items()} == {
        tier: (172, 172) for tier in TIERS
    }


def test_tracker_scenarios_hold_with_request_scoped_traces(suite, cx_data):
    """The app needed test ids and timestamps to keep an earlier test's calls out of a verdict;
    callbench's trace is request-scoped, so the earlier test's calls never enter this case's trace."""
    from callbench.benchmarks.codexomics.golden import golden_trace

    data = json.loads((cx_data / "complex_golden_paths.json").read_text())["tracker_scenarios"]
    current = [
        {"tool_name": c["toolName"], "parameters": c["parameters"]} for c in data["current_test_calls"]
    ]
    sessions = [current, current, current[:4], current[:1]]  # in the file's scenario order
    case = next(c for c in suite.cases if c.id == f"automatic_complex:{data['test_id']}")
    outcomes = [
        score_tier("task-completion-execution", case, golden_trace(calls), suite.registry).passed
        for calls in sessions
    ]
    assert outcomes == [s["expect_success"] for s in data["scenarios"]]
