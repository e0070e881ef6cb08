"""Cost and latency per completed task (issue 31, item 4): tokens counted apart (input, cached input,
output, reasoning), the dated built-in price table under a user's, cost per case and per passed case
(failed cases and retries included), latency per request and per case, bad price files as one line,
and the accuracy-vs-cost Pareto front. Expected figures are worked out by hand here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from protocol_server import Api, Fault, ProtocolServer, Turn
from synth import make_records, write_run

import callbench
from callbench.cli.main import main
from callbench.errors import ConfigError
from callbench.harness.runfolder import read_run
from callbench.harness.usage import (
    Price,
    builtin_origin,
    builtin_prices,
    cost_text,
    load_prices,
    price_table,
    record_cost,
    run_usage,
)
from callbench.report.cost import pareto_front
from callbench.report.overview import overview_payload, overview_tables
from callbench.report.payload import run_statistics
from callbench.report.tables import render_compare
from callbench.types.messages import Usage
from callbench.types.records import CaseRecord
from callbench.types.summary import RunUsage
from callbench.types.trace import RoundInfo, Trace
from callbench.types.verdict import Verdict


def _turn(text: str = "", calls: list[tuple[str, str]] | None = None) -> Turn:
    """Every answer of the server: 1,000 prompt tokens of which 400 cached, 200 completion tokens of
    which 50 reasoning, sent in each vendor's own usage fields."""
    return Turn(
        text=text,
        calls=calls or [],
        input_tokens=1000,
        cached_input_tokens=400,
        output_tokens=200,
        reasoning_tokens=50,
    )


PRICES = "bench-model: {input: 2.0, cached_input: 0.5, output: 8.0}\n"
# One request: 600 fresh x $2 + 400 cached x $0.5 + 200 output x $8 (reasoning inside it) per 1e6.
PER_REQUEST = (600 * 2.0 + 400 * 0.5 + 200 * 8.0) / 1e6  # $0.003
CASES = ["weather_paris", "weather_tokyo_fahrenheit", "convert_distance"]
STRICT = ("native-function-contract", "real-tool-execution", "task-completion-execution")


def _answered(body: dict[str, Any]) -> bool:
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    return last.get("role") == "tool" or (
        isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
    )


def _responder(api: Api, body: dict[str, Any]) -> Turn:
    """Paris: the right call, then an answer (2 requests, passes). Tokyo: no call (1 request, fails).
    42 km: a wrong value, then an answer (2 requests, fails)."""
    text = json.dumps(body["messages"])
    if _answered(body):
        return _turn("Done.")
    if "Paris" in text:
        return _turn(calls=[("get_weather", '{"city": "Paris"}')])
    if "42 km" in text:
        return _turn(calls=[("convert_units", '{"value": 40, "from_unit": "km", "to_unit": "mi"}')])
    return _turn("I cannot tell.")


def _run(tmp_path: Path, api: Api) -> Any:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    with ProtocolServer(_responder) as server:
        server.inject(Fault("500"))  # the first attempt fails: retried; a 500 carries no usage
        return callbench.run(
            "starter",
            f"{api}:bench-model@{server.url}",
            "all",
            out_dir=tmp_path / api,
            case_ids=CASES,
            concurrency=1,
            cache=False,
            progress="quiet",
            price_table=prices,
        )


def test_cost_per_passed_case_of_a_run_against_a_server_that_reports_usage(tmp_path, capsys):
    result = _run(tmp_path, "openai")
    usage = result.summary["usage"]
    # 5 answered requests (Paris 2, Tokyo 1, 42 km 2); the 500 was a 6th attempt, retried
    assert result.summary["requests"]["requests"] == 6 and result.summary["requests"]["retries"] == 1
    assert usage["tokens"] == {
        "input": 5000,
        "cached_input": 2000,
        "output": 1000,
        "reasoning": 250,
        "requests": 5,
        "cache_hits": 0,
    }
    assert PER_REQUEST == pytest.approx(0.003)
    assert usage["cost_usd"] == pytest.approx(0.015)  # 5 x $0.003: the failed attempt cost nothing
    assert usage["cost_per_case_mean"] == pytest.approx(0.005)  # $0.015 / 3 records
    assert (usage["price_model"], usage["price_table"]) == ("bench-model", str(tmp_path / "prices.yaml"))
    by_case = {r.case_id: r for r in result.records}
    price = Price(input=2.0, cached_input=0.5, output=8.0)
    assert record_cost(by_case["weather_paris"], price) == pytest.approx(0.006)
    assert record_cost(by_case["weather_tokyo_fahrenheit"], price) == pytest.approx(0.003)
    assert record_cost(by_case["convert_distance"], price) == pytest.approx(0.006)  # a failed case is paid
    # Paris passes every strict tier, the other two fail: $0.015 / 1 passed case
    assert {t: v.passed for t, v in by_case["weather_paris"].verdicts.items()} == dict.fromkeys(STRICT, True)
    for case in ("weather_tokyo_fahrenheit", "convert_distance"):
        assert not any(v.passed for v in by_case[case].verdicts.values())
    assert usage["cost_per_pass"] == {t: {"passed": 1, "cost_usd": pytest.approx(0.015)} for t in STRICT}
    # latency per request (5 live requests) and per case (3 records) side by side
    assert usage["n_latency"] == 5 and usage["n_case_latency"] == 3
    durations = sorted(r.duration_ms for r in result.records)
    assert usage["case_latency_ms_p50"] == pytest.approx(durations[1])
    assert usage["latency_ms_p50"] <= usage["latency_ms_p95"]
    # callbench show, and the leaderboard of callbench compare
    assert main(["show", str(result.run_dir)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "5,000 input (2,000 cached) + 1,000 output (250 reasoning) tokens" in shown
    assert "per request" in shown and "per case" in shown
    assert "cost $0.0150 (bench-model, " in shown and "$0.0050 per case" in shown
    assert "per passed case: native-function-contract $0.0150 (1 passed)" in shown
    board = render_compare([result.run_dir], "md")
    assert "| Cost (USD) | Cost per passed case (USD) |" in board
    assert board.count("| $0.0150 | $0.0150 |") == 3
    rows = render_compare([result.run_dir], "csv").splitlines()
    assert rows[0].endswith(",cost_usd,cost_per_case,cost_per_pass") and rows[1].endswith(
        ",0.015,0.005,0.015"
    )


def test_anthropic_cache_reads_are_counted_as_cached_input(tmp_path):
    usage = _run(tmp_path, "anthropic").summary["usage"]
    # input_tokens (600) + cache_read_input_tokens (400) per answer; Anthropic reports no reasoning apart
    assert usage["tokens"]["input"] == 5000 and usage["tokens"]["cached_input"] == 2000
    assert usage["tokens"]["reasoning"] == 0
    assert usage["cost_usd"] == pytest.approx(0.015)


def _record(
    case: str,
    model: str,
    usage: Usage,
    *,
    passed: bool | None = None,
    status: Literal["completed", "error"] = "completed",
) -> CaseRecord:
    rnd = RoundInfo(index=1, started_at=0.0, usage=usage, latency_ms=10.0, model=model)
    record = CaseRecord(
        key=f"s:{case}",
        suite="s",
        case_id=case,
        category="c",
        harness_mode="native",
        trace=Trace(rounds=[rnd]),
        status=status,
        duration_ms=20.0,
    )
    if passed is not None:
        record.verdicts = {"ast": Verdict(scorer="ast", passed=passed)}
    return record


def test_the_built_in_table_prices_a_dated_version_of_a_known_model():
    table = price_table()
    key, price, origin = table.lookup("claude-sonnet-4-5-20250929") or ("", None, "")
    assert (
        key == "claude-sonnet-4-5" and origin == builtin_origin() == "built-in price table (as of 2026-12-01)"
    )
    assert price == builtin_prices()["claude-sonnet-4-5"] and price.source
    assert table.lookup("openai/gpt-4o-mini")[0] == "gpt-4o-mini"
    assert table.lookup("o3-pro") is None  # another model, not a dated o3
    records = [
        _record(
            "a",
            "gpt-4o-mini-2024-07-18",
            Usage(input_tokens=1000, cached_tokens=200, output_tokens=100),
            passed=True,
        ),
        _record("b", "gpt-4o-mini-2024-07-18", Usage(input_tokens=1000, output_tokens=100), status="error"),
    ]
    usage = run_usage(records)
    # gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output per million
    assert usage.cost_usd == pytest.approx((1800 * 0.15 + 200 * 0.075 + 200 * 0.60) / 1e6)
    assert (usage.price_model, usage.price_table) == (
        "gpt-4o-mini",
        "built-in price table (as of 2026-12-01)",
    )
    # the error record was paid for: in the cost per passed case
    assert usage.cost_per_pass is not None and usage.cost_per_pass["ast"].cost_usd == usage.cost_usd


def test_a_user_file_overrides_and_extends_the_built_in_table(tmp_path, monkeypatch):
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps({"gpt-4o": {"input": 1.0, "output": 2.0}, "my-model": {"input": 0, "output": 1}})
    )
    monkeypatch.setenv("CALLBENCH_PRICES", str(path))
    table = price_table()
    assert table.lookup("gpt-4o")[1:] == (Price(input=1.0, output=2.0), str(path))
    assert table.lookup("my-model") is not None and table.lookup("gpt-4o-mini")[2] == builtin_origin()


def test_a_model_without_a_price_has_no_cost_and_says_why():
    usage = run_usage([_record("a", "my-local-model", Usage(input_tokens=10, output_tokens=5), passed=False)])
    assert usage.cost_usd is None and usage.cost_per_pass is None
    why = "no price table entry for 'my-local-model' in the built-in price table (as of 2026-12-01)"
    assert usage.cost_missing == why
    assert cost_text(usage) == f"cost – ({why})"
    two = [_record("a", "x-1", Usage(input_tokens=1)), _record("b", "y-2", Usage(input_tokens=1))]
    assert (
        run_usage(two).cost_missing == "no price table entry: the records name several models ('x-1', 'y-2')"
    )
    # none passed: no cost per passed case, never a division by zero
    priced = run_usage([_record("a", "gpt-4o", Usage(input_tokens=10), passed=False)])
    assert priced.cost_per_pass is not None and priced.cost_per_pass["ast"].cost_usd is None
    assert "ast – (none passed)" in cost_text(priced)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "gpt-x: {input: 1, outptu: 4}\n",
            "entry 'gpt-x': unknown field 'outptu' (known: input, cached_input, output",
        ),
        ("gpt-x: {input: 1, output: abc}\n", "entry 'gpt-x': 'output' is not a number ('abc')"),
        ("gpt-x: {input: -1, output: 4}\n", "entry 'gpt-x': 'input' is negative (-1)"),
        (
            "gpt-x: {input: 1, output: 4, cached_input: .nan}\n",
            "entry 'gpt-x': 'cached_input' is not a finite number",
        ),
        ("gpt-x: {input: 1}\n", "entry 'gpt-x': 'output' is missing"),
        ("123: {input: 1, output: 4}\n", "entry 123: a model name must be text"),
        ("gpt x: {input: 1, output: 4}\n", "entry 'gpt x': not a model name"),
        ("gpt-x: 3\n", "entry 'gpt-x': expected {input, output}"),
        ("- gpt-x\n", "a price table maps model names to {input, output}"),
        ("gpt-x: {input: [1\n", "cannot read price table"),
    ],
)
def test_a_bad_price_file_is_one_line_naming_file_entry_and_field(tmp_path, text, message):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_prices(path)
    line = str(caught.value)
    assert line.startswith(f"{path}: ") and message in line and "\n" not in line


def test_a_bad_price_file_stops_the_run_before_it_starts_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "prices.yaml"
    bad.write_text("gpt-x: {input: 1, output: abc}\n")
    code = main(
        ["run", "-s", "starter", "-m", "baseline", "--price-table", str(bad), "-o", str(tmp_path / "r")]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == f"callbench: error: {bad}: entry 'gpt-x': 'output' is not a number ('abc')"
    assert not (tmp_path / "r").exists()


def test_the_shipped_table_is_dated_and_sourced():
    entries = builtin_prices()
    vendors = {"gpt-": 0, "claude-": 0, "gemini-": 0}
    for name, price in entries.items():
        assert price.source and price.input > 0 and price.output >= price.input
        assert price.cached_input is None or price.cached_input < price.input
        for prefix in vendors:
            vendors[prefix] += name.startswith(prefix)
    assert all(vendors.values()), vendors


def test_pareto_front():
    # (cost, accuracy): A cheap and weak, B dominated by C, C better and cheaper than B, D best and dearest,
    # E equal to C (neither dominates the other), F dominated by A (dearer, no better)
    points = [(1.0, 0.5), (3.0, 0.6), (2.0, 0.7), (5.0, 0.9), (2.0, 0.7), (1.5, 0.5)]
    assert pareto_front(points) == [0, 2, 4, 3]
    assert pareto_front([]) == [] and pareto_front([(0.0, 0.0)]) == [0]
    assert pareto_front([(1.0, 0.8), (1.0, 0.6)]) == [0]  # same cost, less accurate: dominated


def _priced_run(root: Path, name: str, skill: float, per_case: float, seed: int) -> Path:
    records = make_records(60, skill=skill, seed=seed)
    run_dir = write_run(root / name, records, model=name)
    summary = json.loads((run_dir / "summary.json").read_text())
    usage = RunUsage(cost_usd=per_case * 60, cost_per_case_mean=per_case, price_model=name, price_table="t")
    summary["usage"] = usage.model_dump(mode="json", exclude_unset=True)
    (run_dir / "summary.json").write_text(json.dumps(summary))
    return run_dir


def test_accuracy_vs_cost_points_mark_the_pareto_front_on_constructed_runs(tmp_path):
    dirs = [
        _priced_run(tmp_path, "cheap", 0.5, 0.001, 1),
        _priced_run(tmp_path, "mid", 0.8, 0.004, 2),
        _priced_run(tmp_path, "waste", 0.45, 0.02, 3),  # dearer and weaker than mid: off the front
        _priced_run(tmp_path, "best", 0.97, 0.05, 4),
    ]
    unpriced = write_run(tmp_path / "local", make_records(60, skill=0.9, seed=5), model="local")
    runs = [read_run(d) for d in [*dirs, unpriced]]
    stats = [run_statistics(r) for r in runs]
    payload = overview_payload(runs, stats)
    for group in payload["cost_points"]:
        points = {p["label"].split(" ")[0]: p for p in group["points"]}
        acc = {name: p["accuracy"] for name, p in points.items()}
        assert acc["cheap"] < acc["mid"] < acc["best"] and acc["waste"] < acc["mid"]
        assert [runs[i].label.split(" ")[0] for i in group["front"]] == ["cheap", "mid", "best"]
        assert not points["waste"]["pareto"] and points["local"]["cost_per_case"] is None
        assert points["local"]["why"]  # listed with its reason, never drawn at 0
        s = next(s for s in stats[1].strata if s.tier == group["tier"])
        assert points["mid"]["cost_per_pass"] == pytest.approx(0.004 * 60 / s.passed)
    [table] = [t for t in overview_tables(runs, stats) if t.title == "Accuracy vs cost"]
    assert sum(row[-1] == "yes" for row in table.rows) == 3 * len(payload["cost_points"])
