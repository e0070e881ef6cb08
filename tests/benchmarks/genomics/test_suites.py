"""The genomics suites.

Size, coverage, DSL features, grounded instructions, retrieval, oracle in every tier.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grounding import ungrounded

from callbench import api
from callbench.benchmarks.genomics.suite import SYSTEM_PROMPT, load_simple
from callbench.errors import SuiteError
from callbench.suites.suite import Suite
from callbench.tools.retrieve import select_tools
from callbench.types.case import Case, iter_dsl

ALL_SCORERS = ["native-function-contract", "real-tool-execution", "task-completion-execution", "state-match"]


def test_sizes_and_step_counts(suite_simple: Suite, suite_complex: Suite) -> None:
    assert len(suite_simple.cases) >= 143 and len(suite_complex.cases) >= 29
    assert all(len(c.expected_tools()) == 1 for c in suite_simple.cases)
    assert all(2 <= len(c.expected_tools()) <= 9 for c in suite_complex.cases)
    assert max(len(c.expected_tools()) for c in suite_complex.cases) == 9


def test_every_category_and_tool_is_exercised(suite_all: Suite) -> None:
    used = {t for c in suite_all.cases for s in c.expected for t in s.tools}
    assert used == set(suite_all.registry.names())
    categories = {suite_all.registry.get(t).category for t in used}
    assert categories == {t.category for t in suite_all.registry}


def _markers(case: Case) -> set[str]:
    return {k for s in case.expected for m in iter_dsl(s.arguments) for k in m if k.startswith("$")}


def test_dsl_features_are_all_used(suite_simple: Suite, suite_complex: Suite) -> None:
    complex_markers = set().union(*(_markers(c) for c in suite_complex.cases))
    assert {"$ref", "$default", "$one_of"} <= complex_markers
    assert "$default" in set().union(*(_markers(c) for c in suite_simple.cases))
    for suite in (suite_simple, suite_complex):
        steps = [s for c in suite.cases for s in c.expected]
        assert any(isinstance(s.tool, list) for s in steps), "alternative tools"
        assert any(s.call_only for s in steps), "call-only long-running tools"
    assert any(c.order_free for c in suite_complex.cases)
    assert any(s.times > 1 for c in suite_complex.cases for s in c.expected)


def test_instructions_are_varied(suite_all: Suite) -> None:
    texts = [c.prompt_text() for c in suite_all.cases]
    assert len(set(texts)) == len(texts)
    openings = {" ".join(t.split()[:2]).lower() for t in texts}
    assert len(openings) > len(texts) // 2  # not one template with values swapped


def test_instructions_determine_expected_arguments(suite_all: Suite) -> None:
    problems = {c.id: p for c in suite_all.cases if (p := ungrounded(c, suite_all.registry))}
    assert problems == {}


def test_grounding_check_catches_invented_values(suite_all: Suite) -> None:
    case = Case(
        id="x",
        instruction="Take me to position 100000 and hide the track.",
        expected=[
            {"tool": "navigate_to_position", "arguments": {"position": 100000, "chromosome": "pSYN1"}},
            {"tool": "zoom_in", "arguments": {"factor": {"$default": 3}}},
            {"tool": "toggle_track", "arguments": {"trackName": "genes", "visible": True}},
        ],
    )
    problems = ungrounded(case, suite_all.registry)
    assert any("'pSYN1' is not stated" in p for p in problems)
    assert any("not the schema default" in p for p in problems)
    assert any("'genes' is not stated" in p for p in problems)
    assert any("boolean True has no cue" in p for p in problems)  # "hide" is the opposite polarity


def test_expected_tools_are_retrieved_in_the_top_24(suite_all: Suite) -> None:
    tools = list(suite_all.registry)
    misses = []
    for case in suite_all.cases:
        offered = {t.name for t in select_tools(case.prompt_text(), tools, 24)}
        for alternatives in case.expected_tools():
            names = set(alternatives).union(*(suite_all.registry.equivalents(a) for a in alternatives))
            if not names & offered:
                misses.append((case.id, alternatives))
    assert misses == []


def test_suite_wiring(suite_simple: Suite) -> None:
    assert suite_simple.scorers == ALL_SCORERS
    assert suite_simple.system_prompt == SYSTEM_PROMPT
    assert "SYN01:35001-36000" in SYSTEM_PROMPT and "data/syn_genome.gbk" in SYSTEM_PROMPT
    with pytest.raises(SuiteError, match="takes no options"):
        load_simple("n=3")


def test_oracle_passes_every_case_in_every_tier(tmp_path: Path) -> None:
    result = api.run("genomics", model="oracle", tier=ALL_SCORERS, out_dir=tmp_path / "run")
    failures = {
        r.case_id: {k: v.rationale for k, v in r.verdicts.items() if not v.passed}
        for r in result.records
        if r.error or not all(v.passed for v in r.verdicts.values())
    }
    assert failures == {}
    assert len(result.records) >= 172
    executed = [c for r in result.records for c in r.trace.calls]
    assert all(c.execution in ("ok", "skipped") for c in executed)
    assert any(c.execution == "skipped" for c in executed)  # call-only steps are not executed
    assert all(r.verdicts["state-match"].details["applicable"] for r in result.records)


def test_oracle_passes_with_the_contract_executor(tmp_path: Path) -> None:
    """The contract tier runs without executing anything: synthetic results from the result schemas."""
    result = api.run(
        "genomics-complex",
        model="oracle",
        tier=ALL_SCORERS[:3],
        executor="contract",
        out_dir=tmp_path / "run",
    )
    assert all(all(v.passed for v in r.verdicts.values()) for r in result.records)
    assert all(r.trace.final_state is None for r in result.records)
