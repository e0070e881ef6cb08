"""End to end through ``callbench.run``: real providers, the protocol server, faults, resume, cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gold_responder import GoldResponder
from protocol_server import Api, Fault, ProtocolServer, Turn

import callbench
from callbench.errors import FatalProviderError
from callbench.harness.runfolder import read_records

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
N_CASES = 16


def _run(model: str, out: Path, **options: Any) -> callbench.api.RunResult:  # type: ignore[name-defined]
    options.setdefault("cache", False)
    options.setdefault("concurrency", 4)
    return callbench.run("starter", model, out_dir=out, **options)


def _accuracies(summary: dict[str, Any]) -> dict[str, float]:
    return {t: summary["tiers"][t]["accuracy"] for t in TIERS}


@pytest.fixture
def gold() -> GoldResponder:
    return GoldResponder()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_gold_path_over_http_scores_full_marks(gold: GoldResponder, tmp_path: Path, api: Api) -> None:
    with ProtocolServer(responder=gold) as server:
        model = f"openai:gold@{server.url}" if api == "openai" else f"anthropic:gold@{server.root}"
        result = _run(model, tmp_path / "run")
    assert result.summary["n_completed"] == N_CASES and result.summary["n_error"] == 0
    assert _accuracies(result.summary) == dict.fromkeys(TIERS, 1.0)
    header = json.loads((result.run_dir / "run.json").read_text())
    assert header["provider"]["base_url"].startswith("http://127.0.0.1:")
    usage = result.summary["usage"]
    rounds = sum(len(r.trace.rounds) for r in result.records)
    assert usage["tokens"]["requests"] == rounds and usage["tokens"]["input"] == 10 * rounds
    assert usage["tokens"]["output"] == 5 * rounds and usage["latency_ms_p50"] > 0


def test_transient_faults_are_retried_and_no_record_is_lost(gold: GoldResponder, tmp_path: Path) -> None:
    with ProtocolServer(responder=gold) as server:
        server.inject(
            Fault("429", retry_after=0.01),
            Fault("503", retry_after=0.01),
            Fault("slow", delay_s=3),
            Fault("drop"),
            Fault("truncate"),
            Fault("500"),
        )
        result = _run(f"openai:gold@{server.url}", tmp_path / "run", request_timeout_s=0.5, concurrency=8)
        n_requests = len(server.requests)
    assert result.summary["n_completed"] == N_CASES and result.summary["n_error"] == 0
    assert _accuracies(result.summary) == dict.fromkeys(TIERS, 1.0)
    rounds = sum(len(r.trace.rounds) for r in result.records)
    assert n_requests == rounds + 6  # every fault cost exactly one extra request


def test_persistent_failure_is_an_error_record_and_resume_reruns_only_it(
    gold: GoldResponder, tmp_path: Path
) -> None:
    broken = gold.suite.cases[3]
    failing = {"on": True}

    def rule(api: Api, body: dict[str, Any]) -> Fault | None:
        return Fault("500") if failing["on"] and gold.case_of(api, body) is broken else None

    out = tmp_path / "run"
    with ProtocolServer(responder=gold) as server:
        server.fault_rule = rule
        model = f"openai:gold@{server.url}"
        first = _run(model, out, max_retries=1)
        assert first.summary["n_error"] == 1 and first.summary["n_completed"] == N_CASES - 1
        tier = first.summary["tiers"][TIERS[0]]
        assert tier["accuracy"] == 1.0 and tier["n"] == N_CASES - 1 and tier["n_error_excluded"] == 1
        (error,) = [r for r in first.records if r.status == "error"]
        assert error.case_id == broken.id and "gave up after 2 attempt" in error.error.message  # type: ignore[union-attr]

        failing["on"] = False
        before = len(server.requests)
        second = _run(model, out, resume=True)
        rerun = server.requests[before:]
    assert {gold.case_of("openai", body).id for _, body, _ in rerun} == {broken.id}
    assert second.summary["n_error"] == 0 and second.summary["n_completed"] == N_CASES
    assert _accuracies(second.summary) == dict.fromkeys(TIERS, 1.0)
    lines = read_records(out)
    assert len(lines) == N_CASES + 1  # the error line stays in the log; the re-run supersedes it


def test_malformed_arguments_are_scored_as_model_failure(gold: GoldResponder, tmp_path: Path) -> None:
    target = gold.suite.cases[0]

    def responder(api: Api, body: dict[str, Any]) -> Turn:
        turn = gold(api, body)
        if gold.case_of(api, body) is target and turn.calls:
            return Turn(calls=[(turn.calls[0][0], '{"city": "Par')], ids=turn.ids)
        return turn

    with ProtocolServer(responder=responder) as server:
        result = _run(f"openai:gold@{server.url}", tmp_path / "run")
    assert result.summary["n_error"] == 0 and result.summary["n_completed"] == N_CASES
    record = next(r for r in result.records if r.case_id == target.id)
    assert record.status == "completed" and record.trace.calls[0].parse_error
    assert record.trace.calls[0].execution == "rejected"
    assert not record.verdicts[TIERS[0]].passed
    assert result.summary["tiers"][TIERS[0]]["passed"] == N_CASES - 1


def test_fatal_error_stops_the_run_and_keeps_completed_records(
    gold: GoldResponder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-e2e-secret-key-0123456789"
    monkeypatch.setenv("CB_E2E_KEY", key)
    out = tmp_path / "run"
    with ProtocolServer(responder=gold) as server:
        model = f"openai:gold@{server.url}?key_env=CB_E2E_KEY"
        server.fault_rule = lambda api, body: Fault("401") if len(server.requests) > 12 else None
        with pytest.raises(FatalProviderError, match="check the API key \\(CB_E2E_KEY\\)"):
            _run(model, out, concurrency=1)
        kept = read_records(out)
        assert kept and all(r.status == "completed" for r in kept)
        server.fault_rule = None
        resumed = _run(model, out, resume=True, concurrency=1)
    assert resumed.summary["n_completed"] == N_CASES
    for path in out.rglob("*"):
        if path.is_file():
            assert key not in path.read_text(errors="replace"), path


def test_unchanged_rerun_is_answered_from_the_cache(gold: GoldResponder, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with ProtocolServer(responder=gold) as server:
        model = f"openai:gold@{server.url}"
        first = _run(model, tmp_path / "a", cache=True, cache_path=cache)
        sent = len(server.requests)
        second = _run(model, tmp_path / "b", cache=True, cache_path=cache)
        assert len(server.requests) == sent and sent > 0
        third = _run(model, tmp_path / "c", cache=False, cache_path=cache)
        assert len(server.requests) == 2 * sent
    assert _accuracies(second.summary) == _accuracies(first.summary) == _accuracies(third.summary)
    assert all(info.cached for r in second.records for info in r.trace.rounds)


def test_prompt_mode_gold_path_scores_full_marks(tmp_path: Path) -> None:
    from gold_responder import PromptGoldResponder

    with ProtocolServer(responder=PromptGoldResponder()) as server:
        result = _run(f"prompt:openai:gold@{server.url}", tmp_path / "run")
        assert all("tools" not in body for _, body, _ in server.requests)
    assert result.summary["n_completed"] == N_CASES and result.summary["n_error"] == 0
    assert _accuracies(result.summary) == dict.fromkeys(TIERS, 1.0)


def test_context_overflow_is_scored_apart_and_the_run_goes_on(gold: GoldResponder, tmp_path: Path) -> None:
    target = gold.suite.cases[2]

    def rule(api: Api, body: dict[str, Any]) -> Fault | None:
        return (
            Fault("400", message="maximum context length is 10 tokens")
            if gold.case_of(api, body) is target
            else None
        )

    with ProtocolServer(responder=gold) as server:
        server.fault_rule = rule
        result = _run(f"openai:gold@{server.url}", tmp_path / "run")
    # Retrying cannot make the conversation fit: the case is scored with the reason context_overflow,
    # counted apart, and accuracy without it is shown beside (tests/scoring/test_serving_faults.py).
    assert result.summary["n_completed"] == N_CASES and result.summary["n_error"] == 0
    assert result.summary["serving"]["context_overflow"] == 1
    [record] = [r for r in result.records if r.key == target.key]
    assert record.trace.stop_reason == "context_overflow"
    assert all(v.codes[0] == "context_overflow" for v in record.verdicts.values())


def test_each_trial_gets_its_own_cache_entries(gold: GoldResponder, tmp_path: Path) -> None:
    with ProtocolServer(responder=gold) as server:
        result = _run(
            f"openai:gold@{server.url}",
            tmp_path / "run",
            trials=2,
            cache=True,
            cache_path=tmp_path / "c.sqlite",
        )
        sent = len(server.requests)
    rounds = sum(len(r.trace.rounds) for r in result.records)
    assert len(result.records) == 2 * N_CASES and sent == rounds
    assert not any(info.cached for r in result.records for info in r.trace.rounds)


def test_a_password_in_the_base_url_stays_out_of_the_run_folder_and_resume_asks_for_it(
    gold: GoldResponder, tmp_path: Path
) -> None:
    """Issue 33, item 8: credentials written into a base URL are kept out of every output like keys."""
    from callbench.errors import ConfigError
    from callbench.harness.prepare import resume_config

    password = "pw-0123456789-secret"
    out = tmp_path / "run"
    with ProtocolServer(responder=gold) as server:
        model = f"openai:gold@http://alice:{password}@127.0.0.1:{server.port}/v1"
        result = _run(model, out, case_ids=["weather_paris"])
        assert result.summary["n_completed"] == 1 and result.summary["n_error"] == 0
        texts = {path.name: path.read_text() for path in out.iterdir() if path.is_file()}
        assert "run.json" in texts and "alice:***@127.0.0.1" in texts["run.json"]
        assert not [name for name, text in texts.items() if password in text]
        with pytest.raises(ConfigError, match="had a password, which run.json does not keep"):
            resume_config(out)
        # given again, the same model (with its password) resumes the run: the stored form matches
        again = _run(model, out, case_ids=["weather_paris"], resume=True)
        assert again.summary["n_completed"] == 1
        assert password not in (out / "run.json").read_text()
