"""BFCL v4 web search (``bfcl:web_search``), hermetic: the tools call SerpAPI and the web through
callbench's ``http_client``; the tests record a cassette of all 200 entries against a stand-in of
SerpAPI and the pages (``web_standin.py``, on 127.0.0.1) and replay it with the network refused.

* the oracle passes every entry, recorded and replayed; a replay's record lines are the recording's
  (timing aside), and the SerpAPI key never reaches the cassette or the run folder;
* a search or a page fetch the cassette lacks is a ``cassette_miss`` error record, not the model's
  failure;
* faithful verdicts are BFCL's ``agentic_checker`` on perturbed final answers;
* improved mode's failure injection is deterministic under its seed and refused in faithful mode;
* the tools answer as BFCL's backend does (result format, snippets, errors, fetch modes), SerpAPI's
  infrastructure failures are error records, and more than 20 steps force-quit an entry.
"""

from __future__ import annotations

import asyncio
import json
import re
from ast import literal_eval
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from web_standin import KEY, NO_RESULTS, NOT_JSON, RATE_LIMITED, SERVER_ERROR, StandInServer, offline, route

import callbench
from callbench.benchmarks.bfcl import web_search
from callbench.benchmarks.bfcl.scorer import BfclScorer
from callbench.benchmarks.bfcl.suite import load_suite
from callbench.benchmarks.bfcl.web_search import KEY_VARIABLE, SEARCH_FAILED, FailureInjection, WebSearchAPI
from callbench.benchmarks.bfcl.web_search_cases import answer_format_prompt
from callbench.errors import ConfigError
from callbench.plugin import HttpFault, SuiteOptions
from callbench.providers.base import Provider
from callbench.types.messages import ModelTurn, ToolCall
from callbench.types.trace import RoundInfo, Trace, TraceCall

SPEC = "bfcl:web_search"
TIMING = re.compile(rb'"(started_at|duration_ms|latency_ms)":(-?[0-9.eE+-]+|null)')


@dataclass
class Recording:
    tape: Path
    run_dir: Path
    result: Any
    requests: list[tuple[str, dict[str, str]]]


@pytest.fixture(scope="module")
def recorded(bfcl_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """All 200 entries played by the oracle against the stand-in, recorded (the stand-in then stops)."""
    root = tmp_path_factory.mktemp("web_search")
    patch = pytest.MonkeyPatch()
    server = StandInServer(bfcl_folder)
    try:
        route(patch, server)
        patch.setenv(KEY_VARIABLE, KEY)
        result = run(SPEC, root / "live", record=root / "tape")
    finally:
        server.stop()
        patch.undo()
    return Recording(root / "tape", root / "live", result, server.requests)


def run(spec: str, out: Path, model: Any = "oracle", **options: Any) -> Any:
    return callbench.run(spec, model, out_dir=out, progress="quiet", **options)


def zeroed_lines(run_dir: Path) -> dict[str, bytes]:
    out = {}
    for raw in (run_dir / "records.jsonl").read_bytes().splitlines():
        record = json.loads(raw)
        out[f"{record['key']}#{record['trial']}"] = TIMING.sub(lambda m: b'"' + m[1] + b'":0', raw)
    return dict(sorted(out.items()))


def outcomes(result: Any) -> dict[str, Any]:
    return {r.case_id: (r.error.type if r.error else r.verdicts["bfcl"].passed) for r in result.records}


# --- the oracle, recorded and replayed ------------------------------------------------------------


def test_the_oracle_passes_every_entry_recorded_and_replayed_offline(
    recorded: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = recorded.result
    assert len(live.records) == 200
    assert set(outcomes(live).values()) == {True}
    by_category = live.summary["tiers"]["bfcl"]["by_category"]
    assert {name: (f["passed"], f["n"]) for name, f in by_category.items()} == {
        "web_search_base": (100, 100),
        "web_search_no_snippet": (100, 100),
    }
    searches = [query for path, query in recorded.requests if path == "/search"]
    assert len(searches) == 628 and {q["engine"] for q in searches} == {"duckduckgo"}

    sent: list[str] = []
    offline(monkeypatch, sent)
    monkeypatch.delenv(KEY_VARIABLE, raising=False)  # a replay needs no key
    replayed = run(SPEC, tmp_path / "replay", replay=recorded.tape)
    assert sent == []
    assert outcomes(replayed) == outcomes(live)
    assert zeroed_lines(tmp_path / "replay") == zeroed_lines(recorded.run_dir)

    for folder in (recorded.tape, recorded.run_dir, tmp_path / "replay"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    index = json.loads((recorded.tape / "index.json").read_text())
    assert index["suites"]["bfcl"]["source"] == "executor:bfcl-web-search"
    tape = json.loads(
        (recorded.tape / "cases" / f"{index['cases']['bfcl:web_search_base_0#1']}.json").read_text()
    )
    urls = [exchange["url"] for exchange in tape["http"]]
    assert urls[0].startswith("https://serpapi.com/search?api_key=&engine=duckduckgo&kl=wt-wt&output=json&q=")
    assert urls[1] == "https://camellios.com/blogs/the-camellios-blog/the-5-most-expensive-teas-in-the-world"

    record = next(r for r in live.records if r.case_id == "web_search_no_snippet_0")
    search = record.trace.calls[0]
    assert search.tool == "search_engine_query" and "'body'" not in search.result  # no snippets
    fetched = record.trace.calls[1]
    assert fetched.tool == "fetch_url_content" and "DaHong Pao" in json.loads(fetched.result)["content"]
    details = record.verdicts["bfcl"].details["bfcl"]
    assert details["last_message"].startswith('{"answer": "Zhang Yiming"') and details["steps"] == 6


# --- cassette misses ----------------------------------------------------------------------------


class Scripted(Provider):
    """Per case: the calls listed for it, one a round, then an answer."""

    name = "scripted"
    model = "scripted"
    needs_network = False

    def __init__(self, plans: dict[str, list[tuple[str, Any]]], answer: str = "I do not know") -> None:
        self.plans = plans
        self.answer = answer
        self.calls: list[tuple[str, Any]] = []

    def for_case(self, case: Any) -> Provider:
        bound = Scripted(self.plans, self.answer)
        bound.calls = self.plans.get(case.id, [])
        return bound

    async def generate(self, messages: Any, tools: Any, settings: Any) -> ModelTurn:
        done = sum(1 for message in messages if message.role == "assistant")
        if done < len(self.calls):
            name, arguments = self.calls[done]
            if isinstance(arguments, str):  # arguments that are not JSON
                call = ToolCall(id=f"c{done}", name=name, arguments_raw=arguments, parse_error="not JSON")
            else:
                raw = json.dumps(arguments)
                call = ToolCall(id=f"c{done}", name=name, arguments_raw=raw, arguments=arguments)
            return ModelTurn(tool_calls=[call], finish_reason="tool_calls")
        return ModelTurn(text=self.answer, finish_reason="stop")


def test_a_search_or_fetch_the_cassette_lacks_is_a_cassette_miss_error_record(
    recorded: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    offline(monkeypatch, sent)
    plans = {
        "web_search_base_0": [("search_engine_query", {"keywords": "a search nobody recorded"})],
        "web_search_base_1": [
            ("fetch_url_content", {"url": "https://unrecorded.example.com/", "mode": "raw"})
        ],
        "web_search_base_2": [("search_engine_query", {"keywords": "Most expensive tea in the world"})],
    }
    ids = list(plans) + ["web_search_base_3"]
    result = run(SPEC, tmp_path / "miss", Scripted(plans), replay=recorded.tape, case_ids=ids)
    assert sent == []
    got = {r.case_id: r for r in result.records}
    for case_id in ("web_search_base_0", "web_search_base_1"):
        assert got[case_id].status == "error" and got[case_id].error.type == "cassette_miss", case_id
        assert "the cassette holds no answer to GET" in got[case_id].error.message
    # base_2 searched what base_0 recorded, but each case has its own tape: a miss too
    assert got["web_search_base_2"].error.type == "cassette_miss"
    # a case that asks nothing is scored (the model's own failure)
    assert got["web_search_base_3"].status == "completed"
    assert got["web_search_base_3"].verdicts["bfcl"].reasons[0].code == "agentic:answer_not_found"
    assert result.summary["tiers"]["bfcl"]["n_error_excluded"] == 3


# --- faithful verdicts are BFCL's ----------------------------------------------------------------


def _trace(final: str | None, undecodable: bool = False) -> Trace:
    calls = [
        TraceCall(index=0, call_id="c0", round=1, tool="search_engine_query",
                  arguments_raw='{"keywords": "x"}', arguments={"keywords": "x"}),
    ]  # fmt: skip
    rounds = [RoundInfo(index=1, started_at=0.0)]
    if undecodable:
        calls.append(
            TraceCall(index=1, call_id="c1", round=2, tool="search_engine_query", arguments_raw=final or "")
        )
        rounds.append(RoundInfo(index=2, started_at=0.0))
    elif final is not None:
        rounds.append(RoundInfo(index=2, started_at=0.0, text=final))
    return Trace(rounds=rounds, calls=calls, final_text=final or "")


def _perturbed(answer: str, context: str) -> list[str]:
    spaced = " ".join(answer)
    return [
        json.dumps({"answer": answer, "context": context}),
        str({"answer": answer, "context": context}),  # Python's quotes, as BFCL's prompt shows
        answer.upper(),
        f"The answer is {answer.lower()}.",
        answer.replace(" ", ", "),
        answer.replace(" ", ""),
        answer.replace(" ", "-"),
        f"{answer}s",
        f"x{answer}",
        spaced,
        answer[:-1],
        f"({answer})",
        f"*{answer}*",
        answer.replace("a", "á"),
        "{'answer': 'I do not know', 'context': 'I do not know'}",
        context,
        "",
    ]


def test_faithful_verdicts_are_bfcls_agentic_checker_on_perturbed_answers(bfcl_folder: Path) -> None:
    from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker

    suite = load_suite("bfcl:web_search_base", SuiteOptions(data=bfcl_folder))
    scorer = BfclScorer(suite)
    compared = disagreements = passes = 0
    for case in suite.cases:
        truth = case.metadata["bfcl"]["ground_truth"]
        context = "; ".join(hop["answer"] for hop in case.metadata["bfcl"]["hops"])
        for answer in truth:
            for message in _perturbed(answer, context):
                for undecodable in (False, True):
                    verdict = scorer.score(case, _trace(message, undecodable))
                    details = verdict.details["bfcl"]
                    if undecodable:  # BFCL reads the step's first call, {name: arguments}, as text
                        expected = agentic_checker([{"search_engine_query": message}], truth)
                    elif not message:  # BFCL's runner: no last message before the checker runs
                        expected = {"valid": False, "error_type": "agentic:no_last_message"}
                    else:
                        expected = agentic_checker(message, truth)
                    compared += 1
                    passes += bool(expected["valid"])
                    mine = (verdict.passed, details["error_type"] or None)
                    theirs = (expected["valid"], expected.get("error_type"))
                    disagreements += mine != theirs
                    assert mine == theirs, (case.id, message, undecodable)
    assert compared > 4500 and disagreements == 0
    assert 0.2 < passes / compared < 0.8  # both outcomes well represented
    no_answer = scorer.score(suite.cases[0], _trace(None))
    assert not no_answer.passed and no_answer.reasons[0].code == "agentic:no_last_message"


def test_improved_mode_judges_as_faithful_and_records_its_settings(bfcl_folder: Path) -> None:
    options = SuiteOptions(
        data=bfcl_folder, extra={"limit": 3, "web_failure_rate": "0.25", "web_failure_seed": "7"}
    )
    suite = load_suite("bfcl:web_search_base:improved", options)
    assert suite.metadata["bfcl"] == {"mode": "improved", "web_failure_rate": 0.25, "web_failure_seed": 7}
    case = suite.cases[0]
    answer = case.metadata["oracle_text"]
    verdict = BfclScorer(suite).score(case, _trace(answer))
    details = verdict.details["bfcl"]
    assert verdict.passed and details["faithful_passed"] and details["mode"] == "improved"
    faithful = load_suite("bfcl:web_search_base", SuiteOptions(data=bfcl_folder, extra={"limit": 3}))
    assert faithful.hash == suite.hash  # the same cases: one cassette serves both modes
    with pytest.raises(ConfigError, match="improved-mode option"):
        load_suite("bfcl:web_search", SuiteOptions(data=bfcl_folder, extra={"web_failure_rate": "0.1"}))
    with pytest.raises(ConfigError, match="from 0 to 1"):
        load_suite(
            "bfcl:web_search:improved", SuiteOptions(data=bfcl_folder, extra={"web_failure_rate": "2"})
        )


# --- failure injection ---------------------------------------------------------------------------


def test_failure_injection_is_deterministic_under_its_seed(
    recorded: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline(monkeypatch, [])
    ids = [f"web_search_base_{n}" for n in range(12)]

    def replay(name: str, seed: int) -> Any:
        extra = {"web_failure_rate": "0.5", "web_failure_seed": str(seed)}
        return run(
            f"{SPEC}:improved", tmp_path / name, replay=recorded.tape, case_ids=ids, suite_options=extra
        )

    first, _, other = replay("a", 7), replay("b", 7), replay("c", 8)
    assert zeroed_lines(tmp_path / "a") == zeroed_lines(tmp_path / "b")

    def injected(result: Any) -> list[tuple[str, int, str]]:
        return [
            (r.case_id, call.index, call.annotations["injected_failure"])
            for r in result.records
            for call in r.trace.calls
            if "injected_failure" in call.annotations
        ]

    hits = injected(first)
    fetches = sum(call.tool == "fetch_url_content" for r in first.records for call in r.trace.calls)
    assert 0.25 * fetches < len(hits) < 0.75 * fetches
    assert hits != injected(other)
    for r in first.records:
        details = r.verdicts["bfcl"].details["bfcl"]
        failures = details["web_failures"]
        assert (failures["rate"], failures["seed"]) == (0.5, 7)
        for call in r.trace.calls:
            if "injected_failure" in call.annotations:
                assert call.tool == "fetch_url_content" and not call.executed_ok
                assert set(json.loads(call.result)) == {"error"}
        assert [entry["fetch"] for entry in failures["injected"]] == sorted(
            e["fetch"] for e in failures["injected"]
        )
    # the same draws without a run: one per fetch, in order, from the seed and the case id
    a, b = FailureInjection(0.5, 7, "web_search_base_0"), FailureInjection(0.5, 7, "web_search_base_0")
    urls = [f"https://example.com/{n}" for n in range(40)]
    assert [a.draw(u) for u in urls] == [b.draw(u) for u in urls]
    c = FailureInjection(0.5, 7, "web_search_base_1")
    assert [c.draw(u) for u in urls] != [FailureInjection(0.5, 7, "web_search_base_0").draw(u) for u in urls]
    assert all(FailureInjection(0.0, 7, "x").draw(u) is None for u in urls)


# --- the tools, against the stand-in -------------------------------------------------------------


@pytest.fixture
def standin(bfcl_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    server = StandInServer(bfcl_folder)
    route(monkeypatch, server)
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    try:
        yield server
    finally:
        server.stop()


TEA = "https://camellios.com/blogs/the-camellios-blog/the-5-most-expensive-teas-in-the-world"


def test_the_tools_answer_as_bfcls_backend(standin: StandInServer, monkeypatch: pytest.MonkeyPatch) -> None:
    def call(api: WebSearchAPI, name: str, **arguments: Any) -> str:
        return asyncio.run(api.call(name, arguments))

    api = WebSearchAPI(show_snippet=True)
    text = call(api, "search_engine_query", keywords="Most expensive tea in the world", max_results=2)
    results = literal_eval(text)  # BFCL hands the model a list as Python's str
    assert [sorted(item) for item in results] == [["body", "href", "title"]] * 2
    assert results[0]["href"].startswith(TEA) and results[0]["body"].endswith("DaHong Pao.")
    plain = literal_eval(call(WebSearchAPI(show_snippet=False), "search_engine_query", keywords="anything"))
    assert len(plain) == 3 and all(sorted(item) == ["href", "title"] for item in plain)
    assert json.loads(call(api, "search_engine_query", keywords=NO_RESULTS)) == {"error": SEARCH_FAILED}
    assert standin.requests[-1][1]["kl"] == "wt-wt" and standin.requests[-1][1]["source"] == "python"

    monkeypatch.setattr(web_search, "RATE_LIMIT_BACKOFF_S", 0.0)
    assert len(literal_eval(call(api, "search_engine_query", keywords=RATE_LIMITED))) == 3
    assert [q["q"] for _, q in standin.requests].count(RATE_LIMITED) == 3  # two 429s, then results

    raw = json.loads(call(api, "fetch_url_content", url=TEA + "#:~:text=x"))["content"]
    assert raw.startswith("<!DOCTYPE html>") and "<script>" in raw
    text = json.loads(call(api, "fetch_url_content", url=TEA, mode="truncate"))["content"]
    title = "Most expensive tea in the world"
    assert text.splitlines() == [title, title, f"{title}:", "DaHong Pao", ".", "first", "second"]
    markdown = json.loads(call(api, "fetch_url_content", url=TEA, mode="markdown"))["content"]
    assert markdown == (
        "# Most expensive tea in the world\n\nMost expensive tea in the world: **DaHong Pao**.\n\n"
        "  * first\n  * second\n\n"
    )
    missing = json.loads(call(api, "fetch_url_content", url="https://nowhere.example.com/page"))
    assert missing == {
        "error": "An error occurred while fetching https://nowhere.example.com/page: 404 Client Error: "
        "Not Found for url: https://nowhere.example.com/page"
    }
    odd = json.loads(call(api, "fetch_url_content", url=TEA, mode="pdf"))
    assert odd["error"].endswith("Unsupported mode: pdf")
    assert (
        call(api, "fetch_url_content", url="ftp://example.com/")
        == "Error during execution: Invalid URL: ftp://example.com/"
    )
    assert call(api, "search_engine_query", keywords="x", page=2).startswith(
        "Error during execution: WebSearchAPI.search_engine_query() got an unexpected keyword argument"
    )


def test_serpapis_infrastructure_failures_are_faults_naming_the_key(
    standin: StandInServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = WebSearchAPI()
    monkeypatch.delenv(KEY_VARIABLE)
    with pytest.raises(HttpFault, match=f"refused the key .*{KEY_VARIABLE} is not set") as caught:
        asyncio.run(api.call("search_engine_query", {"keywords": "x"}))
    assert caught.value.kind == "tool_server_lost"
    monkeypatch.setenv(KEY_VARIABLE, "wrong")
    with pytest.raises(HttpFault, match=f"HTTP 401.*check {KEY_VARIABLE}"):
        asyncio.run(api.call("search_engine_query", {"keywords": "x"}))
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    with pytest.raises(HttpFault, match="HTTP 503"):
        asyncio.run(api.call("search_engine_query", {"keywords": SERVER_ERROR}))
    with pytest.raises(HttpFault, match="not a JSON object"):
        asyncio.run(api.call("search_engine_query", {"keywords": NOT_JSON}))
    monkeypatch.setattr(web_search, "RATE_LIMIT_BACKOFF_S", 0.0)
    monkeypatch.setattr(web_search, "RATE_LIMIT_RETRIES", 1)
    with pytest.raises(HttpFault, match="kept answering 429"):
        asyncio.run(api.call("search_engine_query", {"keywords": RATE_LIMITED}))


EDGES = [
    "",
    ".",
    "..",
    "/",
    "x" * 2000,
    "\ud800",
    "a\x00b",
    "http://",
    "https://[::1",
    "https://exa mple.com/",
]


def test_any_call_the_schema_admits_is_answered_never_raised(standin: StandInServer) -> None:
    """Edge values in every parameter: an answer or BFCL's error text for the model, no exception."""
    api = WebSearchAPI()
    calls: list[tuple[str, dict[str, Any]]] = []
    for value in EDGES:
        calls.append(("search_engine_query", {"keywords": value}))
        calls.append(("search_engine_query", {"keywords": "x", "region": value}))
        calls.append(("fetch_url_content", {"url": value}))
        calls.append(("fetch_url_content", {"url": TEA, "mode": value}))
    for number in (0, -1, 10**4299, -(10**4299)):
        calls.append(("search_engine_query", {"keywords": "x", "max_results": number}))
    for name, arguments in calls:
        text = asyncio.run(api.call(name, arguments))
        assert isinstance(text, str) and text, (name, arguments)


def test_more_than_twenty_steps_force_quit_the_entry(standin: StandInServer, tmp_path: Path) -> None:
    plans = {"web_search_base_0": [("search_engine_query", {"keywords": f"query {n}"}) for n in range(30)]}
    result = run(f"{SPEC}_base", tmp_path / "steps", Scripted(plans), case_ids=["web_search_base_0"])
    (record,) = result.records
    assert len(record.trace.calls) == 21
    verdict = record.verdicts["bfcl"]
    assert not verdict.passed and verdict.reasons[0].code == "agentic:no_last_message"
    assert verdict.details["bfcl"]["force_quit"] is True


def test_a_round_whose_calls_do_not_decode_ends_the_entry_as_in_bfcl(
    standin: StandInServer, tmp_path: Path
) -> None:
    raw = '{"keywords": "Zhang Yiming'
    plans = {
        "web_search_base_0": [("search_engine_query", {"keywords": "tea"}), ("search_engine_query", raw)]
    }
    result = run(f"{SPEC}_base", tmp_path / "undecodable", Scripted(plans), case_ids=["web_search_base_0"])
    (record,) = result.records
    assert [r.index for r in record.trace.rounds] == [1, 2]  # no answer round after it
    details = record.verdicts["bfcl"].details["bfcl"]
    assert details["ended_undecodable"] is True and details["steps"] == 1
    assert details["last_message"] == str({"search_engine_query": raw})
    # BFCL's checker reads that text, in which the answer is found
    assert record.verdicts["bfcl"].passed


# --- the suite --------------------------------------------------------------------------------------


def test_the_suite_holds_both_variants_with_bfcls_prompt_and_tools(bfcl_folder: Path) -> None:
    suite = load_suite(SPEC, SuiteOptions(data=bfcl_folder))
    assert suite.executor == "bfcl-web-search"
    assert [c.id for c in suite.cases[:2]] == ["web_search_base_0", "web_search_base_1"]
    assert suite.cases[100].id == "web_search_no_snippet_0"
    case = suite.cases[0]
    assert case.system == answer_format_prompt() and case.system.startswith("For your final answer")
    assert [t.name for t in case.inline_contracts()] == ["search_engine_query", "fetch_url_content"]
    assert case.inline_contracts()[0].description.endswith(
        "Note that the provided function is in Python 3 syntax."
    )
    assert case.executor is None and case.executor_config == {"show_snippet": True}
    assert suite.cases[100].executor_config == {"show_snippet": False}
    mixed = load_suite(
        "bfcl:simple_python,web_search_base", SuiteOptions(data=bfcl_folder, extra={"limit": 2})
    )
    assert [(c.id, c.executor) for c in mixed.cases] == [
        ("simple_python_0", "contract"), ("simple_python_1", "contract"),
        ("web_search_base_0", None), ("web_search_base_1", None),
    ]  # fmt: skip
    alone = load_suite("bfcl:simple_python", SuiteOptions(data=bfcl_folder, extra={"limit": 2}))
    assert alone.executor == "contract" and all(c.executor is None for c in alone.cases)
