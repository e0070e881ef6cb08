"""HTTP tools on cassettes (issue 28, item 4): a path suite whose Python tools call a local "web search"
stand-in through ``callbench.plugin.http_client`` is recorded with ``--record DIR`` and replayed
offline with ``--replay DIR`` (the server stopped, the network never touched) with the same verdicts
and the same record lines except timing; misses follow ``--replay-miss``; keys never reach the
cassette; a corrupt tape is one line; a service that gives no answer is infrastructure."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import callbench
from callbench.executors import http_client as client_module
from callbench.executors.cassette import CASES_DIR, INDEX_FILE
from callbench.executors.http_client import normalise_url, prepare, secret_name
from callbench.executors.http_tape import HTTP_MISS_TEXT

KEY = "sk-websearch-0123456789abcdef"
"""The stand-in's API key: sent as a header, a query parameter and a JSON field, never taped."""
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
TIMING = re.compile(rb'"(started_at|duration_ms|latency_ms)":(-?[0-9.eE+-]+|null)')


class SearchHandler(BaseHTTPRequestHandler):
    hits: list[str]

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", f"session={KEY}")  # never kept
        self.send_header("X-Request-Id", "random-every-time")  # not on the kept list
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if self.headers.get("X-Api-Key") != KEY or query.get("key") != [KEY]:
            return self._reply(401, {"error": "bad key"})
        if url.path != "/search":
            return self._reply(404, {"error": "no such page"})
        q = query.get("q", [""])[0]
        if q == "nothing":
            return self._reply(404, {"error": "no results"})
        results = [
            {"title": f"{q} {n}", "url": f"https://example.org/{q.replace(' ', '-')}/{n}"} for n in (1, 2)
        ]
        return self._reply(200, {"results": results})

    def do_POST(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/tools/web_search":  # the same search as an endpoint of the http executor
            if self.headers.get("X-Api-Key") != KEY:
                return self._reply(401, {"error": "bad key"})
            if body["query"] == "nothing":
                return self._reply(404, {"error": "no results for that query"})
            if body["query"] == "crash":
                return self._reply(500, {"error": "internal"})
            return self._reply(200, {"results": [{"title": body["query"]}]})
        if body.get("api_key") != KEY:
            return self._reply(401, {"error": "bad key"})
        return self._reply(200, {"summary": f"a page about {body['url'].rsplit('/', 2)[-2]}"})


class SearchServer:
    """The stand-in on 127.0.0.1 (a fixed port once chosen: a replay asks the same URL)."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), SearchHandler)
        self.server.hits = []  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def hits(self) -> list[str]:
        return self.server.hits  # type: ignore[attr-defined,no-any-return]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


TOOLS_PY = """
import os
from callbench.plugin import HttpFault, ToolError, http_client


def _base():
    return os.environ["WEBSEARCH_URL"]


def web_search(query):
    key = os.environ["WEBSEARCH_KEY"]
    params = {"q": query, "key": key}
    response = http_client.get(_base() + "/search", params=params, headers={"X-Api-Key": key})
    if response.status != 200:
        raise ToolError(f"search failed: HTTP {response.status}: {response.json()['error']}")
    assert "set-cookie" not in response.headers and "x-request-id" not in response.headers
    return response.json()["results"]


async def summarize(url):
    body = {"url": url, "api_key": os.environ["WEBSEARCH_KEY"]}
    response = await http_client.apost(_base() + "/summarize", json=body)
    return response.json()


def careful_search(query):
    # catches everything: a strict cassette miss must still be the harness's, not the model's
    try:
        return web_search(query)
    except Exception as exc:
        raise ToolError(f"search unavailable: {exc}")


def fetch_page(url):
    # the URL comes from the model: no answer is something the model may read
    try:
        return http_client.get(url, timeout_s=5).text
    except HttpFault as exc:
        raise ToolError(f"could not fetch {url}: {exc.kind}")
"""


def contract(name: str, param: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]},
    }


CONTRACTS = [
    contract("web_search", "query", "Search the web"),
    contract("summarize", "url", "Summarise a web page"),
    contract("careful_search", "query", "Search the web, carefully"),
    contract("fetch_page", "url", "Fetch a web page"),
]
CASES = [
    {"id": "weather", "instruction": "Search for Paris weather.",
     "expected": [{"tool": "web_search", "arguments": {"query": "paris weather"}}]},
    {"id": "twice", "instruction": "Search for Oslo twice.",  # the same request twice: by occurrence
     "expected": [{"tool": "web_search", "arguments": {"query": "oslo"}},
                  {"tool": "web_search", "arguments": {"query": "oslo"}}]},
    {"id": "summary", "instruction": "Summarise the Rome page.",
     "expected": [{"tool": "summarize", "arguments": {"url": "https://example.org/rome/1"}}]},
    {"id": "nothing", "instruction": "Search for nothing.",  # a 404 the tool turns into a ToolError
     "expected": [{"tool": "web_search", "arguments": {"query": "nothing"}}]},
    {"id": "careful", "instruction": "Search for Lima, carefully.",
     "expected": [{"tool": "careful_search", "arguments": {"query": "lima"}}]},
]  # fmt: skip


def web_suite(root: Path) -> str:
    folder = root / "websearch"
    (folder / "tools").mkdir(parents=True)
    for item in CONTRACTS:
        (folder / "tools" / f"{item['name']}.json").write_text(json.dumps(item))
    (folder / "tools.py").write_text(TOOLS_PY)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (folder / "suite.yaml").write_text("name: websearch\nbindings: tools.py\n")
    return str(folder)


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> Iterator[SearchServer]:
    server = SearchServer()
    monkeypatch.setenv("WEBSEARCH_URL", server.url)
    monkeypatch.setenv("WEBSEARCH_KEY", KEY)
    try:
        yield server
    finally:
        server.stop()


def run(suite: str, out: Path, **options: Any) -> Any:
    return callbench.run(suite, "oracle", out_dir=out, progress="quiet", **options)


def outcomes(result: Any) -> dict[str, Any]:
    return {
        r.case_id: (r.error.type if r.error else tuple(r.verdicts[t].passed for t in TIERS))
        for r in result.records
    }


def zeroed_lines(run_dir: Path) -> dict[str, bytes]:
    out = {}
    for raw in (run_dir / "records.jsonl").read_bytes().splitlines():
        record = json.loads(raw)
        out[f"{record['key']}#{record['trial']}"] = TIMING.sub(lambda m: b'"' + m[1] + b'":0', raw)
    return dict(sorted(out.items()))


def cassette_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "run.json").read_text())["options"]["cassette"]


def tape_of(folder: Path, key: str) -> dict[str, Any]:
    index = json.loads((folder / INDEX_FILE).read_text())
    return json.loads((folder / CASES_DIR / f"{index['cases'][key]}.json").read_text())


def offline(monkeypatch: pytest.MonkeyPatch, sent: list[str]) -> None:
    """Any request that would reach the network is noted and refused."""

    def refuse(out: Any) -> Any:
        sent.append(out.url)
        raise AssertionError("the network was touched")

    monkeypatch.setattr(client_module, "_send", refuse)


def test_a_recorded_web_suite_replays_offline_with_the_same_record_lines(
    tmp_path: Path, web: SearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = web_suite(tmp_path)
    tape = tmp_path / "tape"
    plain = run(suite, tmp_path / "plain")
    live = run(suite, tmp_path / "live", record=tape)
    assert outcomes(live) == outcomes(plain)
    assert zeroed_lines(tmp_path / "live") == zeroed_lines(tmp_path / "plain")  # recording changes nothing
    assert outcomes(live) == {
        "weather": (True, True, True),
        "twice": (True, True, True),
        "summary": (True, True, True),
        "nothing": (True, False, False),  # the 404 is the tool's ToolError, scored as a failed call
        "careful": (True, True, True),
    }
    twice = tape_of(tape, "websearch:twice#1")
    assert twice["calls"] == [] and [(x["seq"], x["occurrence"]) for x in twice["http"]] == [(0, 0), (1, 1)]
    (search, _) = twice["http"]
    assert search["method"] == "GET" and search["body_sha256"] is None
    assert search["url"] == f"{web.url}/search?key=&q=oslo"  # the key kept blank, names sorted
    assert search["request"]["headers"]["x-api-key"] == ""
    assert search["response"]["status"] == 200
    assert search["response"]["headers"] == {"content-type": "application/json"}  # no cookie, no id
    summary = tape_of(tape, "websearch:summary#1")["http"][0]
    assert summary["method"] == "POST" and summary["request"]["body"] == {
        "json": {"api_key": "", "url": "https://example.org/rome/1"}
    }
    for path in tape.rglob("*"):  # the key is nowhere in the cassette, nor in any record
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path
    assert KEY.encode() not in (tmp_path / "live" / "records.jsonl").read_bytes()
    recorded_hash = cassette_of(tmp_path / "live")["hash"]
    assert recorded_hash

    web.stop()  # the service is gone, and the network is refused outright
    hits = len(web.hits)
    sent: list[str] = []
    offline(monkeypatch, sent)
    monkeypatch.setenv("WEBSEARCH_KEY", "sk-another-key-9876543210")  # a replay needs no real key
    for name in ("replay", "replay-again"):
        replay = run(suite, tmp_path / name, replay=tape)
        assert outcomes(replay) == outcomes(live)
        assert zeroed_lines(tmp_path / name) == zeroed_lines(tmp_path / "live")
        assert cassette_of(tmp_path / name) == {
            "mode": "replay",
            "folder": str(tape.resolve()),
            "miss": "strict",
            "hash": recorded_hash,
        }
    assert sent == [] and len(web.hits) == hits


def test_misses_follow_the_declared_policy(
    tmp_path: Path, web: SearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = web_suite(tmp_path)
    tape = tmp_path / "tape"
    run(suite, tmp_path / "rec", record=tape, case_ids=["weather"])
    tape_hash = cassette_of(tmp_path / "rec")["hash"]
    sent: list[str] = []
    offline(monkeypatch, sent)

    strict = run(suite, tmp_path / "strict", replay=tape)
    assert outcomes(strict) == {
        "weather": (True, True, True),
        "twice": "cassette_miss",
        "summary": "cassette_miss",
        "nothing": "cassette_miss",
        "careful": "cassette_miss",  # the tool caught the miss: still never the model's failure
    }
    summary = next(r for r in strict.records if r.case_id == "summary")
    assert (
        summary.error is not None and f"holds no answer to POST {web.url}/summarize" in summary.error.message
    )
    assert strict.summary["n_error"] == 4

    visible = run(suite, tmp_path / "visible", replay=tape, replay_miss="model-visible")
    twice = next(r for r in visible.records if r.case_id == "twice")
    call = twice.trace.calls[0]
    assert twice.status == "completed" and call.execution == "error"
    assert call.annotations["cassette_miss"] == "model-visible"
    assert call.error == HTTP_MISS_TEXT.format(method="GET", url=f"{web.url}/search?key=&q=oslo")
    assert not twice.verdicts["real-tool-execution"].passed  # what the model saw, scored as such
    assert sent == [] and cassette_of(tmp_path / "visible")["hash"] == tape_hash

    monkeypatch.undo()  # live: the service answers the misses, which join the cassette
    monkeypatch.setenv("WEBSEARCH_URL", web.url)
    monkeypatch.setenv("WEBSEARCH_KEY", KEY)
    live = run(suite, tmp_path / "live", replay=tape, replay_miss="live")
    assert live.summary["n_error"] == 0
    summarized = next(r for r in live.records if r.case_id == "summary")
    assert summarized.trace.calls[0].annotations == {"cassette_miss": "live"}
    weather = next(r for r in live.records if r.case_id == "weather")
    assert weather.trace.calls[0].annotations == {}  # a hit adds nothing
    grown = cassette_of(tmp_path / "live")
    assert grown["hash"] == tape_hash and grown["hash_at_end"] != tape_hash
    offline(monkeypatch, sent)
    full = run(suite, tmp_path / "full", replay=tape)
    assert full.summary["n_error"] == 0 and sent == []


def test_no_answer_is_infrastructure_and_replays_as_recorded(
    tmp_path: Path, web: SearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = web_suite(tmp_path)
    folder = Path(suite)
    with (folder / "cases.jsonl").open("a") as cases:
        dead = "http://127.0.0.1:9/page"  # the discard port: nothing listens
        step = {"tool": "fetch_page", "arguments": {"url": dead}}
        cases.write(
            json.dumps({"id": "dead_page", "instruction": "Fetch a page.", "expected": [step]}) + "\n"
        )
    web.stop()  # the search service is down while recording
    tape = tmp_path / "tape"
    live = run(suite, tmp_path / "live", record=tape, case_ids=["weather", "dead_page"])
    assert outcomes(live) == {"weather": "tool_server_lost", "dead_page": (True, False, False)}
    lost = next(r for r in live.records if r.case_id == "weather")
    assert lost.error is not None and lost.error.message.startswith(
        f"GET {web.url}/search?key=&q=paris%20weather: "
    )
    page = next(r for r in live.records if r.case_id == "dead_page")
    assert page.trace.calls[0].error == f"could not fetch {dead}: tool_server_lost"  # the tool's choice
    fault = tape_of(tape, "websearch:weather#1")["http"][0]
    assert "response" not in fault and fault["fault"]["kind"] == "tool_server_lost"

    sent: list[str] = []
    offline(monkeypatch, sent)
    replay = run(suite, tmp_path / "replay", replay=tape, case_ids=["weather", "dead_page"])
    assert outcomes(replay) == outcomes(live) and sent == []
    assert zeroed_lines(tmp_path / "replay") == zeroed_lines(tmp_path / "live")


def test_bad_http_tapes_are_one_line(
    tmp_path: Path, web: SearchServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from callbench.cli.main import main

    suite = web_suite(tmp_path)
    tape = tmp_path / "tape"
    run(suite, tmp_path / "rec", record=tape, case_ids=["weather"])
    base = ["run", "--suite", suite, "--model", "oracle", "--progress", "quiet"]

    def error_line() -> str:
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1, captured
        return lines[0]

    corrupt = Path(shutil.copytree(tape, tmp_path / "corrupt"))
    (victim,) = (corrupt / CASES_DIR).iterdir()
    victim.write_bytes(victim.read_bytes()[:-10])  # truncated
    assert main([*base, "--replay", str(corrupt), "--out", str(tmp_path / "a")]) == 2
    assert f"tape {CASES_DIR}/{victim.name} is corrupt or truncated" in error_line()

    edited = Path(shutil.copytree(tape, tmp_path / "edited"))  # well named, but not an exchange
    (old,) = (edited / CASES_DIR).iterdir()
    content = json.loads(old.read_bytes())
    del content["http"][0]["response"]["status"]
    data = json.dumps(content).encode()
    digest = hashlib.sha256(data).hexdigest()
    (edited / CASES_DIR / f"{digest}.json").write_bytes(data)
    old.unlink()
    index = json.loads((edited / INDEX_FILE).read_text())
    index["cases"] = {k: digest for k in index["cases"]}
    (edited / INDEX_FILE).write_text(json.dumps(index))
    assert main([*base, "--replay", str(edited), "--out", str(tmp_path / "b")]) == 2
    assert error_line().endswith(
        f"tape {CASES_DIR}/{digest}.json: HTTP exchange 0 has a response with no status"
    )

    assert main([*base, "--replay", str(tmp_path / "nowhere"), "--out", str(tmp_path / "c")]) == 2
    assert error_line() == f"callbench: error: --replay {tmp_path / 'nowhere'}: no such cassette folder"

    with (Path(suite) / "cases.jsonl").open("a") as cases:  # another version of the suite's cases
        cases.write(json.dumps({**CASES[0], "id": "weather_again"}) + "\n")
    assert main([*base, "--replay", str(tape), "--out", str(tmp_path / "d")]) == 2
    assert "the cassette was recorded for another suite of suite 'websearch'" in error_line()
    assert not any((tmp_path / name).exists() for name in "abcd")


def test_the_http_executor_records_and_replays_its_endpoints(
    tmp_path: Path, web: SearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from callbench.plugin import HttpExecutor, Suite, ToolRegistry, read_cases

    folder = Path(web_suite(tmp_path))
    crash = {
        "id": "crash",
        "instruction": "Crash.",
        "expected": [{"tool": "web_search", "arguments": {"query": "crash"}}],
    }
    with (folder / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(crash) + "\n")

    def suite() -> Suite:
        return Suite(
            name="web-endpoints",
            cases=[
                c
                for c in read_cases(folder / "cases.jsonl")
                if c.id in ("weather", "twice", "nothing", "crash")
            ],
            registry=ToolRegistry.from_dir(folder / "tools"),
            executor=HttpExecutor(f"{web.url}/tools", headers={"X-Api-Key": KEY}),
        )

    tape = tmp_path / "tape"
    live = callbench.run(suite(), "oracle", out_dir=tmp_path / "live", progress="quiet", record=tape)
    assert outcomes(live) == {
        "weather": (True, True, True),
        "twice": (True, True, True),
        "nothing": (True, False, False),  # a 4xx: the model's failed call, with the service's reason
        "crash": "tool_server_lost",  # a 5xx: the service's failure, never the model's
    }
    nothing = next(r for r in live.records if r.case_id == "nothing")
    assert nothing.trace.calls[0].error == "no results for that query"
    assert all(KEY.encode() not in path.read_bytes() for path in tape.rglob("*") if path.is_file())
    web.stop()
    sent: list[str] = []
    offline(monkeypatch, sent)
    replay = callbench.run(suite(), "oracle", out_dir=tmp_path / "replay", progress="quiet", replay=tape)
    assert outcomes(replay) == outcomes(live) and sent == []
    assert zeroed_lines(tmp_path / "replay") == zeroed_lines(tmp_path / "live")


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("key", True),
        ("api_key", True),
        ("apiKey", True),
        ("X-Api-Key", True),
        ("Authorization", True),
        ("access_token", True),
        ("accesstoken", True),
        ("client_secret", True),
        ("Cookie", True),
        ("sig", True),
        ("q", False),
        ("keyword", False),
        ("sortkey", False),
        ("pageToken", False),
        ("next_token", False),
        ("Content-Type", False),
    ],
)
def test_credential_names(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


def test_requests_are_matched_as_normalised_and_blanked() -> None:
    url, secrets = normalise_url("HTTP://Example.ORG:80/search?q=a%20b&key=sekrit-value-123&a=1#top")
    assert url == "http://example.org/search?a=1&key=&q=a%20b" and secrets == ["sekrit-value-123"]
    one = prepare(
        "get", "https://api.example.org/v1?b=2&a=1", headers={"Authorization": "Bearer tok-0123456789"}
    )
    two = prepare(
        "GET", "https://api.example.org/v1?a=1&b=2", headers={"Authorization": "Bearer other-0123456789"}
    )
    assert one.taped.key == two.taped.key and one.taped.headers["authorization"] == ""
    assert one.headers["Authorization"] == "Bearer tok-0123456789"  # what is sent keeps it
    first = prepare("POST", "https://x.example/a", json_body={"b": [1, 2], "a": {"token": "t-0123456789"}})
    second = prepare("POST", "https://x.example/a", json_body={"a": {"token": "u-0123456789"}, "b": [1, 2]})
    assert first.taped.key == second.taped.key and first.taped.body == {
        "json": {"b": [1, 2], "a": {"token": ""}}
    }
    assert prepare("POST", "https://x.example/a", json_body={"b": [2, 1]}).taped.key != first.taped.key
    with pytest.raises(ValueError, match="not an http"):
        prepare("GET", "file:///etc/passwd")
