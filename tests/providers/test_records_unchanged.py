"""The records a run writes are byte for byte what they were before the CPU work of issue 15, timing
fields aside; so are the requests sent, the summaries' figures and the response cache's keys.

``records_fingerprint.json`` was written by this module (``python tests/providers/test_records_unchanged.py
--write``) at commit 66023ae, before any of that work. Each scenario keeps one digest per record line
(timings zeroed in the raw text, so key order, float spelling and escapes all count), one digest of the
summary without its timing figures, and, over HTTP, one digest per request body the server received.
The request digests alone were re-written in issue 25, when an assistant turn with tool calls began
to carry ``"content": ""`` instead of ``null`` (llama-cpp-python's server refuses ``null``); with
``null`` put back, all 39 digests matched the old ones, so that is the only change in what is sent.
They were re-written again in issue 27, when the starter's ``get_weather`` contract lost the junk key
``"e.g. Paris": null`` (an unquoted YAML flow mapping) and its description became ``City name, e.g.
Paris``: each of the 39 bodies differs from the old one by exactly that fragment (record lines,
summaries and the cache key unchanged).
In issue 33 a record began to store its final text once: ``"final_text": null`` when it is the last
round's text, read back from there. The digests are of each line with that copy written out again
(:data:`~callbench.types.trace.KEEP_COPIES`), which gives the old bytes: all record digests matched.
In issue 31 the ``http-live`` summary digest alone was re-written: its usage gained ``cost_missing``
(why a run has no cost: its model has no price-table entry); with that key taken out the summary's
digest equals the old one, and every record line, request and the other summaries are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0] / "helpers"))

from gold_responder import GoldResponder  # noqa: E402
from protocol_server import ProtocolServer  # noqa: E402

import callbench  # noqa: E402
from callbench.providers.cache import cache_key  # noqa: E402
from callbench.types.contract import ToolContract  # noqa: E402
from callbench.types.messages import GenerationSettings, Message, ToolCall  # noqa: E402
from callbench.types.records import CaseRecord  # noqa: E402
from callbench.types.trace import KEEP_COPIES  # noqa: E402

EXPECTED = HERE / "fixtures" / "records_fingerprint.json"
TIMING = re.compile(rb'"(started_at|duration_ms|latency_ms)":(-?[0-9.eE+-]+|null)')
"""Timing fields: the only bytes of a record line allowed to differ between runs."""
SUMMARY_TIMING = {"latency_ms_p50", "latency_ms_p95", "latency_ms_mean", "duration_s", "wall_s"}


def line_digests(run_dir: Path) -> dict[str, str]:
    """``key#trial`` -> digest of the record line with its timing values zeroed (and its final text
    written out where it was stored once, as the last round's)."""
    digests: dict[str, str] = {}
    for raw in (run_dir / "records.jsonl").read_bytes().splitlines():
        record = json.loads(raw)
        if record["trace"].get("final_text", "") is None:
            raw = CaseRecord.model_validate_json(raw).model_dump_json(context={KEEP_COPIES: True}).encode()
        zeroed = TIMING.sub(lambda m: b'"' + m[1] + b'":0', raw)
        digests[f"{record['key']}#{record['trial']}"] = hashlib.sha256(zeroed).hexdigest()
    return dict(sorted(digests.items()))


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in SUMMARY_TIMING and "latency" not in k}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, float):
        # Means are summed in the order cases finish, which concurrency varies (last-digit noise).
        return round(value, 10)
    return value


def summary_digest(summary: dict[str, Any]) -> str:
    """Digest of the summary's figures (timings, run id and dates left out)."""
    kept = {k: v for k, v in summary.items() if k not in {"run_id", "created_at", "finished_at", "run_dir"}}
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", json.dumps(_strip(kept), sort_keys=True))
    return hashlib.sha256(text.encode()).hexdigest()


def _scenario(result: Any) -> dict[str, Any]:
    return {"records": line_digests(result.run_dir), "summary": summary_digest(result.summary)}


def run_scenarios(tmp: Path) -> dict[str, Any]:
    """Every scenario's fingerprint."""
    found: dict[str, Any] = {}
    for name, suite, model in [
        ("starter-oracle", "starter", "oracle"),
        ("starter-noisy3", "starter", "noisy:3"),
        ("genomics-noisy3", "genomics", "noisy:3"),
        ("genomics-oracle", "genomics", "oracle"),
    ]:
        result = callbench.run(suite, model, "all", out_dir=tmp / name, cache=False, concurrency=8)
        found[name] = _scenario(result)
    gold = GoldResponder()
    with ProtocolServer(responder=gold) as server:
        model = f"openai:gold@{server.url}"
        cache = tmp / "cache.sqlite"
        # Concurrency 1: the server numbers requests, and the order of the bodies must not vary.
        for name in ("http-live", "http-cached"):
            result = callbench.run(
                "starter", model, "all", out_dir=tmp / name, cache=True, cache_path=cache, concurrency=1
            )
            found[name] = _scenario(result)
        bodies = [json.dumps(body, sort_keys=True) for _path, body, _headers in server.requests]
    found["http-requests"] = [hashlib.sha256(b.encode()).hexdigest() for b in bodies]
    found["cache-key"] = sample_cache_key()
    return found


def sample_cache_key() -> str:
    """The cache key of one fixed request: old cache files must still be hit."""
    tool = ToolContract.model_validate(
        {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                "required": ["city"],
            },
        }
    )
    call = ToolCall(
        id="c1", name="get_weather", arguments_raw='{"city": "Paris"}', arguments={"city": "Paris"}
    )
    messages = [
        Message.system("Be brief."),
        Message.user("Weather in Paris, é?"),
        Message(role="assistant", content="", tool_calls=[call]),
        Message.tool(call, '{"temp": 21.5}'),
    ]
    description = {"provider": "openai", "model": "m", "base_url": "http://x/v1", "quirks": {"strict": False}}
    return cache_key(description, messages, [tool], GenerationSettings(seed=3), "trial-2")


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_scenarios(tmp_path_factory.mktemp("unchanged"))


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text())


@pytest.mark.parametrize(
    "scenario",
    ["starter-oracle", "starter-noisy3", "genomics-noisy3", "genomics-oracle", "http-live", "http-cached"],
)
def test_record_lines_and_summary_are_unchanged(
    fingerprint: dict[str, Any], expected: dict[str, Any], scenario: str
) -> None:
    got, want = fingerprint[scenario], expected[scenario]
    assert len(got["records"]) == len(want["records"]) and len(want["records"]) >= 16
    changed = sorted(k for k in want["records"] if got["records"].get(k) != want["records"][k])
    assert changed == [], f"{scenario}: record lines differ for {changed[:10]}"
    assert got["summary"] == want["summary"]


def test_requests_sent_are_unchanged(fingerprint: dict[str, Any], expected: dict[str, Any]) -> None:
    assert len(fingerprint["http-requests"]) == len(expected["http-requests"]) > 16
    assert fingerprint["http-requests"] == expected["http-requests"]


def test_cache_key_is_unchanged(expected: dict[str, Any]) -> None:
    assert sample_cache_key() == expected["cache-key"]


def test_a_changed_record_is_caught(tmp_path: Path) -> None:
    """The digest is of the bytes: one changed character outside the timings changes it."""
    result = callbench.run(
        "starter", "oracle", out_dir=tmp_path / "r", cache=False, case_ids=["weather_paris"]
    )
    before = line_digests(result.run_dir)
    path = result.run_dir / "records.jsonl"
    path.write_bytes(
        path.read_bytes().replace(b'"duration_ms":', b'"duration_ms":1').replace(b"Paris", b"Pari")
    )
    after = line_digests(result.run_dir)
    assert before.keys() == after.keys() and before != after


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        data = run_scenarios(Path(folder))
    EXPECTED.parent.mkdir(exist_ok=True)
    EXPECTED.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {EXPECTED}")
