"""BFCL's format-sensitivity category: cases generated as BFCL generates them, the faithful checker's
verdicts equal to BFCL's own (perturbed answers in every variant, run in the reference venv), the
prompts equal to BFCL's to the character, the oracle, improved mode and the spread figures."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from perturb_format import build_outputs

from callbench.benchmarks.bfcl.format_calls import TextDecodeError, decode_text, render_calls
from callbench.benchmarks.bfcl.format_prompts import VARIANTS, Variant, parse_variant, system_prompt
from callbench.benchmarks.bfcl.format_sensitivity import (
    format_figures,
    judge_text,
    source_entries,
    split_id,
)
from callbench.benchmarks.bfcl.options import IMPROVED_SWITCHES, BfclOptions
from callbench.benchmarks.bfcl.scorer import BfclScorer
from callbench.benchmarks.bfcl.suite import load_suite
from callbench.suites.suite import SuiteOptions
from callbench.types.records import CaseRecord
from callbench.types.trace import RoundInfo, Trace, TraceCall

PROMPT_MODEL = "gpt-4o-2024-11-20"  # registered prompt-mode model; its handler uses BFCL's default decoder
PYTHON = parse_variant(
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
)
JSON_TAG = Variant("json", True, "xml")
VERBOSE, CONCISE = Variant("verbose_xml", False, "python"), Variant("concise_xml", True, "json")
JSON_DEFECT = "simple_python_96"  # a list of objects inside the arguments: BFCL's JSON reader cuts it


@pytest.fixture(scope="module")
def suites(bfcl_folder):
    faithful = load_suite("bfcl:format_sensitivity", SuiteOptions(data=bfcl_folder))
    improved = load_suite("bfcl:format_sensitivity:improved", SuiteOptions(data=bfcl_folder))
    return faithful, improved


def _text_trace(text: str) -> Trace:
    return Trace(rounds=[RoundInfo(index=1, started_at=0.0, text=text)], final_text=text)


def test_variants_and_cases_follow_bfcl(suites, bfcl_folder):
    faithful, _ = suites
    assert len(VARIANTS) == len({v.name for v in VARIANTS}) == 26
    assert (
        VARIANTS[0].name
        == "ret_fmt=python&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&style=classic"
    )
    assert (
        [v.prompt_format for v in VARIANTS].count("markdown")
        == [v.style for v in VARIANTS].count("experimental")
        == 1
    )
    cases = faithful.cases
    assert len(cases) == 5200 and len({c.template for c in cases}) == 200
    assert [split_id(c.id)[0] for c in cases[:26]] == list(VARIANTS)
    assert all(c.id.startswith(f"format_sensitivity_{n}:") for n, c in enumerate(cases))
    assert all(not c.tools and not c.expected and c.max_rounds == 1 for c in cases)
    sources = source_entries(bfcl_folder)
    assert Counter(category for category, _, _ in sources)["live_multiple"] == 86
    # an entry's own system message follows the variant's prompt, as BFCL merges them
    merged = [c for c in cases if c.messages and c.messages[0].role == "user" and "\n\n" in (c.system or "")]
    with_system = {entry["id"] for _, entry, _ in sources if entry["question"][0][0]["role"] == "system"}
    assert len(with_system) == 7
    for case in (c for c in merged if c.template in with_system):
        entry = next(e for _, e, _ in sources if e["id"] == case.template)
        assert case.system.endswith("\n\n" + entry["question"][0][0]["content"])
        assert all(m.role != "system" for m in case.messages)


def test_oracle_passes_all_but_the_json_reader_defect(suites):
    """Faithful: every entry in every format but one entry's six JSON variants (BFCL's JSON reader
    cannot read a list of objects inside the arguments); improved (json_whole_answer): all 5,200."""
    faithful, improved = suites
    failed = Counter()
    for case in faithful.cases:
        verdict = BfclScorer(faithful).score(case, _text_trace(case.metadata["oracle_text"]))
        if not verdict.passed:
            failed[(case.template, split_id(case.id)[0].return_format, verdict.codes[0])] += 1
    assert failed == {(JSON_DEFECT, "json", "simple_function_checker:wrong_count"): 6}
    scorer = BfclScorer(improved)
    assert all(
        scorer.score(case, _text_trace(case.metadata["oracle_text"])).passed for case in improved.cases
    )


def test_answer_sources(suites):
    """Text as received first, then structured calls written in the variant's format, then text."""
    faithful, _ = suites
    case = faithful.cases[5]  # python return format, no tag
    scorer = BfclScorer(faithful)
    gold = case.metadata["oracle_text"]
    raw = Trace(rounds=[RoundInfo(index=1, started_at=0.0, text="", raw_text=gold)])
    assert scorer.score(case, raw).passed
    ((name, args),) = (item for call in decode_text(gold, split_id(case.id)[0]) for item in call.items())
    structured = Trace(
        rounds=[RoundInfo(index=1, started_at=0.0, call_ids=["c1"])],
        calls=[
            TraceCall(
                index=0, call_id="c1", round=1, tool=name, arguments=args, arguments_raw=json.dumps(args)
            )
        ],
    )
    verdict = scorer.score(case, structured)
    assert verdict.passed and verdict.details["bfcl"]["written_from_calls"] is True
    free = scorer.score(case, _text_trace("I cannot help."))
    assert free.codes == ["ast_decoder:decoder_failed"] and not free.details["bfcl"]["written_from_calls"]


def test_decoding_follows_bfcl_quirks():
    assert decode_text("[f(a=+5)]", PYTHON) == [{"f": {"a": -5}}]  # BFCL negates any unary operand
    assert decode_text("f(a=2*3, b=x, c=g(1), d=h(k=1), e=v[0])", PYTHON) == [
        {"f": {"a": 6, "b": "x", "c": "g(1)", "d": {"h": {"k": 1}}, "e": "v[0]"}}
    ]
    assert decode_text("[m.n.f(1, a=1)]", PYTHON) == [{"m.n.f": {"a": 1}}]  # positional arguments dropped
    with pytest.raises(TextDecodeError):
        decode_text("[f(a=len('ab') + 1)]", PYTHON)  # never executed (BFCL's eval would run it)
    with pytest.raises(TextDecodeError):
        decode_text("[f(a=1)]", JSON_TAG)  # tag missing
    nested = '<TOOLCALL>[{"function": "q", "parameters": {"c": [{"f": 1}, {"f": 2}]}}]</TOOLCALL>'
    assert decode_text(nested, JSON_TAG) == []  # cut at the first "}]", no JSON left
    assert decode_text(nested, JSON_TAG, whole_json=True) == [{"q": {"c": [{"f": 1}, {"f": 2}]}}]
    verbose = (
        '<functions><function name="f"><params><param name="a" value="[1, 2]" type="array"/>'
        '<param name="b" value="2.5" type="number"/><param name="c" value="TRUE" type="boolean"/>'
        "</params></function></functions>"
    )
    assert decode_text(verbose, VERBOSE) == [{"f": {"a": [1, 2], "b": "2.5", "c": True}}]
    concise = (
        '<TOOLCALL><functions><function name="f"><param name="a" type="integer"> 7 </param></function>'
        "</functions></TOOLCALL>"
    )
    assert decode_text(concise, CONCISE) == [{"f": {"a": 7}}]


def test_written_calls_read_back_in_every_variant():
    calls = [
        ("a.b", {"s": 'x "y" <z> & \n end', "n": 3, "f": 2.5, "t": True, "l": [1, "2"], "d": {"k": None}}),
        ("g", {}),
    ]
    for variant in VARIANTS:
        assert decode_text(render_calls(calls, variant), variant, whole_json=True) == [
            {name: arguments} for name, arguments in calls
        ], variant.name


def _record(case_id: str, passed: bool) -> CaseRecord:
    from callbench.plugin import Verdict

    return CaseRecord(
        key=f"bfcl:{case_id}",
        suite="bfcl",
        case_id=case_id,
        category="format_sensitivity",
        harness_mode="production-parity",
        verdicts={"bfcl": Verdict(scorer="bfcl", passed=passed)},
    )


def test_spread_figures_and_table(suites):
    faithful, _ = suites
    records = []
    for number, case in enumerate(faithful.cases[: 26 * 40]):
        variant = split_id(case.id)[0]
        # accuracy falls with the variant's position: a spread to measure
        records.append(_record(case.id, (number // 26) % 40 < 40 - VARIANTS.index(variant)))
    aggregate = BfclScorer(faithful).aggregate(records)
    figures = aggregate.figures["format_sensitivity"]
    accuracies = [figures["variants"][v.name]["accuracy"] for v in VARIANTS]
    assert (
        figures["max_delta"] == pytest.approx(max(accuracies) - min(accuracies))
        and figures["max_delta"] > 0.5
    )
    assert figures["std"] == pytest.approx(statistics.stdev(accuracies))
    first = figures["variants"][VARIANTS[0].name]
    assert (
        first["total_count"] == 40
        and first["interval"]["low"] < first["accuracy"] <= first["interval"]["high"]
    )
    low, high = figures["max_delta_interval"]["low"], figures["max_delta_interval"]["high"]
    assert low <= figures["max_delta"] <= high
    assert "overall" not in aggregate.figures  # the category is outside BFCL's overall score
    table = aggregate.tables[0]
    assert len(table.rows) == 26 and any("spread across 26 variants" in note for note in table.notes)


# ---------------------------------------------------------------------------------------------
# agreement with BFCL's own evaluation (reference venv)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, bfcl_folder, reference_python):
    rows = build_outputs(bfcl_folder, stride=8)
    folder = tmp_path_factory.mktemp("bfcl-format")
    source, target = folder / "in.jsonl", folder / "out.json"
    source.write_text(
        "".join(json.dumps({k: row[k] for k in ("key", "id", "result", "runner")}) + "\n" for row in rows)
    )
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(folder / "bfcl-root")}
    script = Path(__file__).parent / "bfcl_reference_format.py"
    subprocess.run(
        [str(reference_python), str(script), PROMPT_MODEL, str(source), str(target), str(folder / "score")],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    return rows, json.loads(target.read_text())


def _normalise(valid: bool, error_type: str) -> tuple[bool, str]:
    return valid, "crash" if error_type.startswith(("crash:", "checker_crash:")) else error_type


def test_faithful_verdicts_agree_with_bfcl(reference, bfcl_folder):
    rows, theirs = reference
    sources = {
        entry["id"]: (category, entry, truth) for category, entry, truth in source_entries(bfcl_folder)
    }
    mismatches = []
    for row in rows:
        variant, source = split_id(row["id"])
        category, entry, truth = sources[source]
        ours = judge_text(category, entry["function"], row["result"], truth, variant, BfclOptions())
        ref = theirs["verdicts"][row["key"]]
        if _normalise(ours.valid, ours.error_type) != _normalise(ref["valid"], ref["error_type"]):
            mismatches.append((row["key"], row["kind"], ref["error_type"], ours.error_type))
    assert not mismatches, f"{len(mismatches)} disagreements, first: {mismatches[:5]}"
    verdicts = Counter(theirs["verdicts"][row["key"]]["valid"] for row in rows)
    assert len(rows) > 9000 and verdicts[True] > 1500 and verdicts[False] > 5000
    # bfcl-eval 2026.3.23 judges each entry with its own category's checker: gold parallel answers pass
    parallel_gold = [r for r in rows if r["kind"] == "gold" and "parallel" in r["source"][0]]
    assert parallel_gold and all(theirs["verdicts"][r["key"]]["valid"] for r in parallel_gold)
    print(
        f"format agreement: {len(rows)} answers, {verdicts[True]} pass / {verdicts[False]} fail",
        file=sys.stderr,
    )


def test_variants_and_prompts_equal_bfcl(reference, bfcl_folder):
    _, theirs = reference
    assert theirs["configs"] == [variant.name for variant in VARIANTS]
    sources = {entry["id"]: entry for _, entry, _ in source_entries(bfcl_folder)}
    different = [
        identifier
        for identifier, prompt in theirs["prompts"].items()
        if system_prompt(split_id(identifier)[0], sources[split_id(identifier)[1]]["function"]) != prompt
    ]
    assert not different and len(theirs["prompts"]) > 600


def test_spread_equals_bfcl_runner(reference, bfcl_folder):
    """BFCL's format_sensitivity_runner on one answer per id: same per-variant counts and spread."""
    rows, theirs = reference
    sources = {
        entry["id"]: (category, entry, truth) for category, entry, truth in source_entries(bfcl_folder)
    }
    judged = []
    for row in (r for r in rows if r["runner"]):
        variant, source = split_id(row["id"])
        category, entry, truth = sources[source]
        check = judge_text(category, entry["function"], row["result"], truth, variant, BfclOptions())
        judged.append((variant.name, source, check.valid))
    figures = format_figures(judged)
    header = theirs["header"]
    for name, item in figures["variants"].items():
        assert (header[name]["correct_count"], header[name]["total_count"]) == (
            item["correct_count"],
            item["total_count"],
        )
    assert header["accuracy_max_delta"] == round(figures["max_delta"] * 100, 2)
    assert header["accuracy_std"] == round(figures["std"] * 100, 2)
    assert header["accuracy_variance"] == round(figures["variance"] * 100**2, 2)


def test_json_whole_answer_changes_only_the_cut_answers(reference, bfcl_folder):
    rows, _ = reference
    sources = {
        entry["id"]: (category, entry, truth) for category, entry, truth in source_entries(bfcl_folder)
    }
    only = BfclOptions(
        mode="improved", **{switch: switch == "json_whole_answer" for switch in IMPROVED_SWITCHES}
    )
    changed = set()
    for row in rows:
        variant, source = split_id(row["id"])
        category, entry, truth = sources[source]
        before = judge_text(category, entry["function"], row["result"], truth, variant, BfclOptions())
        after = judge_text(category, entry["function"], row["result"], truth, variant, only)
        if before.valid != after.valid:
            assert not before.valid and variant.return_format == "json"
            changed.add(source)
    assert changed == {JSON_DEFECT}


def test_exported_run_gets_the_same_figures_from_bfcl_evaluate(tmp_path, bfcl_folder, reference_python):
    """The oracle on the first five entries (all 26 formats; the fifth is the JSON-reader defect),
    exported under a prompt-mode model: `bfcl evaluate` counts the same passes per format."""
    from callbench.cli.main import main

    run = tmp_path / "run"
    argv = ["run", "--suite", "bfcl:format_sensitivity", "--model", "oracle", "--option", "limit=5"]
    assert main([*argv, "--data", str(bfcl_folder), "--out", str(run), "--progress", "quiet"]) == 0
    assert main(["export", "bfcl", str(run), "--out", str(tmp_path / "result"), "--model", PROMPT_MODEL]) == 0
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path), "OPENAI_API_KEY": "unused"}
    command = [str(reference_python.parent / "bfcl"), "evaluate", "--model", PROMPT_MODEL, "--partial-eval"]
    subprocess.run(
        [*command, "--test-category", "format_sensitivity"], env=env, capture_output=True, check=True
    )
    (score,) = (tmp_path / "score").rglob("BFCL_v4_format_sensitivity_score.json")
    header = json.loads(score.read_text().splitlines()[0])
    ours = json.loads((run / "summary.json").read_text())["scorer_aggregates"]["bfcl"]["format_sensitivity"]
    assert (header["correct_count"], header["total_count"]) == (124, 130)
    for name, item in ours["variants"].items():
        assert header[name]["correct_count"] == item["correct_count"], name
    assert header["accuracy_max_delta"] == round(ours["max_delta"] * 100, 2) == 20.0
