"""Usage and cost summary; the ``callbench cache`` commands."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from protocol_server import Fault, ProtocolServer
from typer.testing import CliRunner

import callbench
from callbench.cli import cache as cache_cli
from callbench.errors import ConfigError
from callbench.harness.usage import Price, load_prices, percentile, requests_text, usage_summary
from callbench.providers.cache import ResponseCache
from callbench.types.messages import ModelTurn, Usage
from callbench.types.records import CaseRecord
from callbench.types.summary import TokenCounts
from callbench.types.trace import RoundInfo, Trace


def _record(case: str, rounds: list[tuple[int, int, float, bool]]) -> CaseRecord:
    infos = [
        RoundInfo(
            index=i + 1,
            started_at=0.0,
            usage=Usage(input_tokens=a, output_tokens=b),
            latency_ms=ms,
            cached=cached,
            model="gpt-x-2025-01-01",
        )
        for i, (a, b, ms, cached) in enumerate(rounds)
    ]
    return CaseRecord(
        key=f"s:{case}",
        suite="s",
        case_id=case,
        category="c",
        harness_mode="native",
        trace=Trace(rounds=infos),
    )


def test_usage_summary_counts_tokens_latency_and_cost() -> None:
    records = [
        _record("a", [(100, 10, 50.0, False), (120, 5, 150.0, False)]),
        _record("b", [(100, 10, 999.0, True)]),
    ]  # cached round: no cost, no latency
    prices = {"gpt-x": Price(input=2.0, output=8.0)}
    out = usage_summary(records, prices)
    assert out["tokens"]["input"] == 220 and out["tokens"]["output"] == 15
    assert out["tokens"]["requests"] == 2 and out["tokens"]["cache_hits"] == 1
    assert out["latency_ms_p50"] == 100.0 and out["latency_ms_p95"] == pytest.approx(145.0)
    assert out["price_model"] == "gpt-x" and out["cost_usd"] == pytest.approx((220 * 2 + 15 * 8) / 1e6)
    assert out["tokens_per_case_mean"] == 117.5


def test_no_price_means_no_cost() -> None:
    assert usage_summary([_record("a", [(1, 1, 1.0, False)])])["cost_usd"] is None
    assert percentile([], 50) is None


def test_requests_that_got_no_answer_are_not_counted_as_answered(tmp_path: Path) -> None:
    """Issue 33, item 9: a case whose every attempt failed said "1 answered request" (its round was
    counted though nothing answered it). Three attempts, none answered: 0 answered, 3 sent."""
    with ProtocolServer() as server:
        server.fault_rule = lambda api, body: Fault("503", retry_after=0.01)
        result = callbench.run(
            "starter",
            f"openai:m@{server.url}",
            out_dir=tmp_path / "run",
            cache=False,
            progress="quiet",
            max_retries=2,
            limit=1,
        )
    assert result.summary["n_error"] == 1 and len(result.records[0].trace.rounds) == 1
    tokens = TokenCounts(**result.summary["usage"]["tokens"])
    line = requests_text(tokens, result.summary["requests"])
    expected = "0 answered requests (0 from cache), 3 HTTP attempts, 2 retries (1 given up)"
    assert line.startswith(expected), line
    # one answered round, then one that failed: one answered request
    answered = RoundInfo(index=1, started_at=0.0, latency_ms=5.0, model="m", finish_reason="tool_calls")
    failed = RoundInfo(index=2, started_at=0.0)
    record = _record("x", [])
    record.trace.rounds = [answered, failed]
    assert usage_summary([record])["tokens"]["requests"] == 1


def test_price_table_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("gpt-x:\n  input: 1\n")
    with pytest.raises(ConfigError, match="prices.yaml: entry 'gpt-x': 'output' is missing"):
        load_prices(path)
    path.write_text("gpt-x: {input: 1, output: 4}\n")
    assert load_prices(path)["gpt-x"].output == 4


def test_cache_cli_stats_and_clear(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    cache = ResponseCache(db)
    cache.put("k1", ModelTurn(text="a"), "openai", "m1")
    cache.put("k2", ModelTurn(text="b"), "anthropic", "m2")
    cache.close()
    app = typer.Typer()
    cache_cli.register(app)

    @app.callback()
    def _root() -> None:
        """Test root."""

    runner = CliRunner()
    result = runner.invoke(app, ["cache", "stats", "--path", str(db)])
    assert result.exit_code == 0 and "2 entries" in result.output and "m1" in result.output
    result = runner.invoke(app, ["cache", "clear", "--path", str(db), "--model", "m1"])
    assert result.exit_code == 0 and "deleted 1 entries" in result.output
    result = runner.invoke(app, ["cache", "stats", "--path", str(tmp_path / "none.sqlite")])
    assert "no cache yet" in result.output
