"""Manual cases (``scoring: manual``): the case format, the harness run, the summary, genomics-manual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from callbench.api import run
from callbench.errors import SuiteError
from callbench.harness.engine import MANUAL_RATIONALE
from callbench.stats import statistics_summary
from callbench.suites.loader import read_cases
from callbench.suites.resolve import load_suite
from callbench.types.case import Case
from callbench.types.review import Rubric, Scale

RUBRIC = {
    "criteria": [
        {"id": "facts", "description": "facts right", "scale": {"levels": ["wrong", "partly", "right"]}},
        {"id": "clarity", "description": "clear", "scale": {"min": 1, "max": 5}},
    ]
}
PICKED = ["lac_variant_impact", "origin_hunt"]


def test_manual_needs_rubric_and_auto_refuses_one(tmp_path: Path) -> None:
    bad = tmp_path / "cases.yaml"
    bad.write_text("cases:\n- {id: open_q, instruction: hi, scoring: manual}\n", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        read_cases(bad)
    assert str(err.value) == f"{bad}:2: case 'open_q': 'scoring: manual' needs a 'rubric'"
    text = f"cases:\n- {{id: auto_q, instruction: hi, rubric: {json.dumps(RUBRIC)}}}\n"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError, match=r"case 'auto_q': a 'rubric' needs 'scoring: manual'"):
        read_cases(bad)
    case = Case(id="ok", instruction="hi", scoring="manual", rubric=Rubric.model_validate(RUBRIC))
    assert case.manual and case.rubric is not None
    assert [c.id for c in case.rubric.criteria] == ["facts", "clarity"]


def test_auto_case_hash_payload_unchanged_by_new_fields() -> None:
    case = Case(id="a", instruction="hi")
    assert "scoring" not in case.hash_payload() and "rubric" not in case.hash_payload()
    manual = Case(id="a", instruction="hi", scoring="manual", rubric=Rubric.model_validate(RUBRIC))
    assert manual.hash_payload()["scoring"] == "manual"


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        ({"levels": ["only"]}, "at least two distinct"),
        ({"levels": ["a", "a"]}, "at least two distinct"),
        ({"min": 3, "max": 3}, "need min < max"),
        ({"min": 1}, "needs 'levels' or both"),
        ({"levels": ["a", "b"], "min": 0, "max": 1}, "not both"),
    ],
)
def test_bad_scales(scale: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Scale.model_validate(scale)


def test_rubric_rules() -> None:
    rubric = Rubric.model_validate(RUBRIC)
    # default rule: every criterion at least its middle level (partly; 3 of 1..5)
    assert rubric.passes({"facts": "partly", "clarity": 3}) is True
    assert rubric.passes({"facts": "partly", "clarity": 2}) is False
    assert rubric.passes({"facts": "wrong", "clarity": 5}) is False
    with pytest.raises(ValueError, match="'clarity' is not scored"):
        rubric.check_scores({"facts": "right"})
    with pytest.raises(ValueError, match=r"'clarity': 6 is not a level of the scale \(1..5\)"):
        rubric.check_scores({"facts": "right", "clarity": 6})
    with pytest.raises(ValueError, match="'clarity': True is not a level"):
        rubric.check_scores({"facts": "right", "clarity": True})
    with pytest.raises(ValueError, match=r"unknown rubric criterion id\(s\) \['style'\]"):
        rubric.check_scores({"facts": "right", "clarity": 3, "style": 1})
    strict = Rubric.model_validate({**RUBRIC, "pass_rule": {"facts": "right"}})
    assert strict.passes({"facts": "right", "clarity": 1}) is True
    assert strict.passes({"facts": "partly", "clarity": 5}) is False
    with pytest.raises(ValidationError, match="pass_rule names unknown criterion 'style'"):
        Rubric.model_validate({**RUBRIC, "pass_rule": {"style": 1}})
    with pytest.raises(ValidationError, match="pass_rule for 'facts'"):
        Rubric.model_validate({**RUBRIC, "pass_rule": {"facts": "perfect"}})


def test_genomics_manual_suite_loads_with_rubrics() -> None:
    suite = load_suite("genomics-manual")
    assert len(suite.cases) >= 10
    for case in suite.cases:
        assert case.manual and case.rubric is not None, case.id
        assert 2 <= len(case.rubric.criteria) <= 4, case.id
        assert case.expected, case.id  # the tools a good answer uses
        names = set(case.tool_names())
        assert {t for s in case.expected for t in s.tools} <= names, case.id
    # the embedded default suite and the other genomics suites stay automatic
    for name in ("genomics", "genomics-simple", "genomics-complex", "starter"):
        assert not any(c.manual for c in load_suite(name).cases), name


def _run(tmp_path: Path, model: str, suites: list[str], cases: list[str]) -> tuple[dict, list[dict]]:
    result = run(suites, model, out_dir=tmp_path / model, case_ids=cases, cache=False, progress="quiet")
    lines = (result.run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return result.summary, [json.loads(line) for line in lines]


@pytest.mark.parametrize("model", ["oracle", "refuse"])
def test_manual_cases_run_out_of_every_rate(tmp_path: Path, model: str) -> None:
    summary, records = _run(tmp_path, model, ["genomics-manual"], PICKED)
    assert sorted(r["case_id"] for r in records) == sorted(PICKED)
    for record in records:
        assert record["status"] == "completed" and record["scoring"] == "manual"
        first = {"lac_variant_impact": "facts", "origin_hunt": "method"}[record["case_id"]]
        assert record["rubric"]["criteria"][0]["id"] == first
        assert set(record["verdicts"]) == {
            "native-function-contract",
            "real-tool-execution",
            "task-completion-execution",
            "state-match",
        }
        for verdict in record["verdicts"].values():
            assert verdict["applicable"] is False and verdict["passed"] is False
            assert verdict["rationale"] == MANUAL_RATIONALE
        automatic = record["verdicts"]["real-tool-execution"]["details"]["automatic"]["passed"]
        calls = [c["tool"] for c in record["trace"]["calls"]]
        if model == "oracle":  # the oracle plays the expected steps; the tier would have passed them
            assert calls == [s["tool"] for s in record["expected"]] and automatic is True
        else:
            assert calls == [] and automatic is False
    assert summary["n_manual"] == 2
    for figures in summary["tiers"].values():
        assert figures["n"] == 0 and figures["n_not_applicable"] == 2 and figures["accuracy"] is None
    assert summary["statistics"]["strata"] == []
    assert summary.get("qc_flags", []) == []
    assert statistics_summary(records)["strata"] == []


def test_manual_and_auto_cases_in_one_run(tmp_path: Path) -> None:
    suites = ["genomics-simple", "genomics-manual"]
    summary, records = _run(tmp_path, "oracle", suites, ["seq_gc_view", *PICKED])
    assert len(records) == 3
    auto = next(r for r in records if r["case_id"] == "seq_gc_view")
    assert "scoring" not in auto and "rubric" not in auto  # automatic records are written as before
    tier = summary["tiers"]["native-function-contract"]
    assert (tier["n"], tier["passed"], tier["n_not_applicable"]) == (1, 1, 2)
    assert summary["n_manual"] == 2
    strata = {s["tier"]: s for s in summary["statistics"]["strata"]}
    assert strata["native-function-contract"]["n"] == 1 and strata["native-function-contract"]["passed"] == 1
