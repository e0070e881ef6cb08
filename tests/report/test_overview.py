"""The report overview's page data: tie-aware ranks, pairing across suite aliases, cost, config,
trial notes. Expected values are computed here from the records, not by the module under test."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from synth import make_records, write_run

from callbench.harness.runfolder import read_run
from callbench.report.overview import overview_payload, overview_tables
from callbench.report.payload import run_statistics
from callbench.stats import statistics_summary


def _payload(*dirs: Path) -> dict[str, Any]:
    runs = [read_run(d) for d in dirs]
    return overview_payload(runs, [run_statistics(r) for r in runs])


def _board(payload: dict[str, Any], tier: str) -> dict[str, dict[str, Any]]:
    return {r["label"].split(" ")[0]: r for r in payload["leaderboard"] if r["tier"] == tier}


def test_runs_whose_paired_interval_spans_zero_share_a_rank(tmp_path):
    tier = "native-function-contract"
    good = write_run(tmp_path / "good", make_records(120, skill=0.97, seed=3), model="good")
    noisy = write_run(tmp_path / "noisy", make_records(120, skill=0.45, seed=6), model="noisy")
    base = write_run(tmp_path / "base", make_records(120, skill=0.45, seed=106), model="base")
    payload = _payload(good, noisy, base)
    [cmp] = [
        c
        for c in payload["comparisons"]
        if {c["a"], c["b"]} == {"noisy (noisy)", "base (base)"} and c["tier"] == tier
    ]
    # As noisy:3 vs baseline in the issue: A ahead by 5 points at p ≈ 0.5.
    assert cmp["difference"]["estimate"] == pytest.approx(0.05) and 0.4 < cmp["mcnemar_p"] < 0.6
    assert cmp["difference"]["low"] < 0 < cmp["difference"]["high"]
    assert cmp["significant"] is False
    board = _board(payload, tier)
    assert board["good"]["rank"] == 1 and board["good"]["tied"] is False and board["good"]["rank_text"] == "1"
    assert board["noisy"]["rank"] == board["base"]["rank"] == 2
    assert board["noisy"]["rank_text"] == board["base"]["rank_text"] == "=2"
    # A clearly better run is significant against both.
    assert all(c["significant"] for c in payload["comparisons"] if "good (good)" in (c["a"], c["b"]))


def test_overview_tables_have_tie_aware_ranks_and_every_section(tmp_path):
    a = write_run(tmp_path / "a", make_records(60, skill=0.5, seed=11), model="a")
    b = write_run(tmp_path / "b", make_records(60, skill=0.5, seed=12), model="b")
    runs = [read_run(a), read_run(b)]
    tables = overview_tables(runs, [run_statistics(r) for r in runs])
    assert [t.title for t in tables] == [
        "Runs × scorers",
        "Leaderboard",
        "Paired comparisons",
        "Cost and speed",
        "What was run",
    ]
    board = tables[1]
    assert {row[0] for row in board.rows} == {"=1"}  # same skill: no one ranked above the other
    grid = tables[0]
    stats = statistics_summary(json.loads(line) for line in (a / "records.jsonl").read_text().splitlines())
    nfc = next(s for s in stats["strata"] if s["tier"] == "native-function-contract")
    assert grid.rows[0][3].startswith(f"{100 * nfc['accuracy']['estimate']:.1f} (")


def _alias(records: list[dict[str, Any]], suite: str, prefix: str) -> list[dict[str, Any]]:
    out = []
    for rec in copy.deepcopy(records):
        rec["suite"] = suite
        rec["case_id"] = prefix + rec["case_id"]
        rec["key"] = f"{suite}:{rec['case_id']}"
        out.append(rec)
    return out


def test_cases_pair_across_suite_aliases_and_map_back_to_each_runs_keys(tmp_path):
    a_recs = _alias(make_records(30, skill=0.9, seed=1), "genomics", "simple/")
    b_recs = _alias(make_records(30, skill=0.3, seed=2), "genomics-simple", "")
    a = write_run(tmp_path / "a", a_recs, model="a")
    b = write_run(tmp_path / "b", b_recs, model="b")
    payload = _payload(a, b)
    assert payload["notes"] == []
    cmp = next(c for c in payload["comparisons"] if c["tier"] == "native-function-contract")
    assert cmp["n"] == 30
    passed = {
        r["case_id"].removeprefix("simple/"): r["verdicts"]["native-function-contract"]["passed"]
        for r in a_recs
    }
    passed_b = {r["case_id"]: r["verdicts"]["native-function-contract"]["passed"] for r in b_recs}
    want = {cid for cid in passed if passed[cid] != passed_b[cid]}
    keys_a = [r.key for r in read_run(a).records]
    keys_b = [r.key for r in read_run(b).records]
    # the page gets each disagreeing case as [A's row, B's row, winner (0: A, 1: B)]
    got = [{"a_key": keys_a[i], "b_key": keys_b[j], "winner": "ab"[w]} for i, j, w in cmp["disagreeing_rows"]]
    assert {c["b_key"] for c in got} == {f"genomics-simple:{cid}" for cid in want}
    for c in got:
        cid = c["b_key"].split(":", 1)[1]
        assert c["a_key"] == f"genomics:simple/{cid}"
        assert c["winner"] == ("a" if passed[cid] else "b")
    assert cmp["only_a"] == sum(1 for c in want if passed[c]) and cmp["only_b"] == len(want) - cmp["only_a"]


def test_runs_that_pair_nothing_say_why(tmp_path):
    a_recs = make_records(10, seed=1, suite="genomics")
    b_recs = make_records(10, seed=2, suite="starter")
    for rec in b_recs:
        rec["instruction"] = "Something else: " + rec["instruction"]
    payload = _payload(
        write_run(tmp_path / "a", a_recs, model="a"), write_run(tmp_path / "b", b_recs, model="b")
    )
    assert payload["comparisons"] == []
    [note] = payload["notes"]
    assert "pair no case" in note and "genomics" in note and "starter" in note


def test_trial_note_explains_missing_pass_at_k_for_error_records(tmp_path):
    recs = make_records(10, trials=3, seed=4)
    victim = next(r for r in recs if r["key"].endswith("case-00002") and r["trial"] == 2)
    victim.update(status="error", error={"type": "TransientProviderError", "message": "503"}, verdicts={})
    run_dir = write_run(tmp_path / "r", recs)
    header = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps(header | {"trials": 3}))
    stats = json.loads((run_dir / "summary.json").read_text())["statistics"]
    assert {s["trials"]["trials"] for s in stats["strata"]} == {2}  # the cap being explained
    [note] = _payload(run_dir)["trial_notes"]
    assert note["cases"] == ["demo:case-00002"] and note["planned"] == 3
    assert note["text"].startswith("pass@3 not shown: 1 case has error records (1 of their trials)")
    assert "up to k = 2" in note["text"] and "--resume" in note["text"]


def _with_header(run_dir: Path, **fields: Any) -> Path:
    header = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps(header | fields))
    return run_dir


SUITE = {
    "name": "demo",
    "spec": "demo",
    "hash": "a" * 64,
    "registry_hash": "b" * 64,
    "prompt_template_hash": "c" * 64,
    "n_cases": 5,
}


def test_config_warning_lists_each_field_that_differs_but_the_model(tmp_path):
    a = _with_header(
        write_run(tmp_path / "a", make_records(5, seed=1), model="m1"),
        retrieval_k=5,
        settings={"temperature": 0.0},
        suites=[SUITE],
    )
    b = _with_header(
        write_run(tmp_path / "b", make_records(5, seed=2), model="m2"),
        settings={"temperature": 0.7},
        suites=[SUITE | {"hash": "d" * 64}],
    )
    payload = _payload(a, b)
    assert payload["config_warnings"] == [
        "settings: temperature 0.0 vs 0.7",
        "k: 5 vs suite default",
        "suite hash differs for demo",
    ]
    fields = [c["fields"] for c in payload["config"]]
    assert [f["model or agent"] for f in fields] == ["m1", "m2"]  # the model is what is compared


def _usage_rounds(records: list[dict[str, Any]]) -> None:
    for i, rec in enumerate(records):
        for j, rnd in enumerate(rec["trace"]["rounds"]):
            rnd["usage"] = {
                "input_tokens": 100 + i,
                "output_tokens": 10 + j,
                "reasoning_tokens": j,
                "cached_tokens": i % 3,
            }
            rnd["latency_ms"] = 50.0 + 7 * i + j
            rnd["cached"] = i % 10 == 9 and j == 1


def test_cost_and_speed_from_records_and_from_summary(tmp_path):
    recs = make_records(20, seed=1)
    _usage_rounds(recs)
    run_dir = write_run(tmp_path / "r", recs, model="m")
    live = [rnd for rec in recs for rnd in rec["trace"]["rounds"] if not rnd["cached"]]
    [row] = _payload(run_dir)["usage"]
    assert row["source"] == "records"
    assert row["input"] == sum(r["usage"]["input_tokens"] for r in live)
    assert row["output"] == sum(r["usage"]["output_tokens"] for r in live)
    assert row["cached_input"] == sum(r["usage"]["cached_tokens"] for r in live)
    assert row["requests"] == len(live) and row["cache_hits"] == 2
    import numpy as np

    lat = [r["latency_ms"] for r in live]
    assert row["latency_ms_p50"] == pytest.approx(float(np.percentile(lat, 50)))
    assert row["latency_ms_p95"] == pytest.approx(float(np.percentile(lat, 95)))
    assert row["cost_usd"] is None and "price" in row["missing"]["cost"]
    # summary.json's usage wins when present.
    summary = json.loads((run_dir / "summary.json").read_text())
    usage = {
        "tokens": {"input": 7, "output": 3, "requests": 2},
        "latency_ms_p50": 1.5,
        "latency_ms_p95": 2.5,
        "n_latency": 2,
        "cost_usd": 0.25,
        "price_model": "m",
    }
    (run_dir / "summary.json").write_text(json.dumps(summary | {"usage": usage}))
    [row] = _payload(run_dir)["usage"]
    assert (row["source"], row["input"], row["output"], row["latency_ms_p50"], row["cost_usd"]) == (
        "summary.json",
        7,
        3,
        1.5,
        0.25,
    )


def test_builtin_agent_has_no_tokens_with_a_reason(tmp_path):
    run_dir = _with_header(
        write_run(tmp_path / "r", make_records(5), model="oracle"), provider={"provider": "oracle"}
    )
    [row] = _payload(run_dir)["usage"]
    assert row["input"] is None and row["missing"]["tokens"].startswith("built-in agent")
