"""Serving faults apart from model faults: calls left in the text, truncated output, context overflow.

Unit checks of the reasons on hand-built traces, then whole runs against a protocol server whose
tool-call parser "fails" (it returns the gold calls as Hermes text in ``content``), with and without
``--recover-text-calls``, and one whose context window refuses one case.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "providers"))
sys.path.insert(0, str(Path(__file__).parents[1] / "helpers"))

from gold_responder import GoldResponder  # noqa: E402
from protocol_server import Api, Fault, ProtocolServer, Turn  # noqa: E402

import callbench  # noqa: E402
from callbench.harness.runfolder import read_records, read_run  # noqa: E402
from callbench.harness.summary import build_summary  # noqa: E402
from callbench.harness.summary_stream import stream_summary  # noqa: E402
from callbench.report.overview import comparisons, serving_notes  # noqa: E402
from callbench.report.serving import summary_serving_lines  # noqa: E402
from callbench.scoring.tiers import score_tier  # noqa: E402
from callbench.suites.resolve import load_suite  # noqa: E402
from callbench.types.summary import Summary  # noqa: E402
from callbench.types.trace import RoundInfo, Trace, trace_from_calls  # noqa: E402
from callbench.types.verdict import TIERS  # noqa: E402

CONTRACT = "native-function-contract"


@pytest.fixture(scope="module")
def starter() -> Any:
    return load_suite("starter")


def _case_with_calls(suite: Any) -> Any:
    """A case whose expected calls have plain literal arguments (its gold trace is easy to write)."""
    return next(
        c
        for c in suite.cases
        if c.expected and "$" not in json.dumps([s.arguments for s in c.expected]) and len(c.expected) == 1
    )


def _gold_trace(case: Any) -> Trace:
    return trace_from_calls([{"tool": s.tools[0], "arguments": s.arguments} for s in case.expected])


def _round(index: int = 1, **fields: Any) -> RoundInfo:
    return RoundInfo(index=index, started_at=0.0, **fields)


# --- reasons on hand-built traces ------------------------------------------------------------


@pytest.mark.parametrize("tier", TIERS)
def test_text_call_replaces_no_structured_call(starter: Any, tier: Any) -> None:
    case = _case_with_calls(starter)
    trace = Trace(rounds=[_round(text='{"name": "x"}', text_call_format="hermes")])
    verdict = score_tier(tier, case, trace, starter.registry_for(case))
    assert not verdict.passed
    assert verdict.codes[0] == "serving_parse_suspected" and "no_structured_call" not in verdict.codes
    assert "hermes" in verdict.reasons[0].message and "round 1" in verdict.reasons[0].message


def test_plain_miss_is_still_no_structured_call(starter: Any) -> None:
    case = _case_with_calls(starter)
    verdict = score_tier(CONTRACT, case, Trace(rounds=[_round(text="no idea")]), starter.registry_for(case))
    assert verdict.codes[0] == "no_structured_call" and "serving_parse_suspected" not in verdict.codes


def test_recovered_round_is_no_suspect(starter: Any) -> None:
    case = _case_with_calls(starter)
    trace = _gold_trace(case)
    trace.rounds = [_round(text_call_format="mistral", recovered_calls=len(trace.calls))]
    verdict = score_tier(CONTRACT, case, trace, starter.registry_for(case))
    assert verdict.passed and not verdict.warnings[:-1]  # only the contract tier's own note


@pytest.mark.parametrize("finish", ["length", "max_tokens", "max_output_tokens"])
def test_a_pass_stays_a_pass_with_a_warning(starter: Any, finish: str) -> None:
    case = _case_with_calls(starter)
    trace = _gold_trace(case)
    trace.rounds = [_round(finish_reason=finish), _round(2, text_call_format="json")]
    verdict = score_tier(CONTRACT, case, trace, starter.registry_for(case))
    assert verdict.passed and verdict.reasons == []
    assert any(w.startswith("output_truncated:") for w in verdict.warnings)
    assert any(w.startswith("serving_parse_suspected:") for w in verdict.warnings)


def test_truncation_and_overflow_lead_the_reasons(starter: Any) -> None:
    case = _case_with_calls(starter)
    trace = Trace(
        rounds=[_round(finish_reason="length"), _round(2, finish_reason="context_overflow")],
        stop_reason="context_overflow",
    )
    verdict = score_tier(CONTRACT, case, trace, starter.registry_for(case))
    assert verdict.codes[:3] == ["context_overflow", "output_truncated", "no_structured_call"]
    assert "round 2" in verdict.reasons[0].message and "round 1" in verdict.reasons[1].message


def test_format_error_is_its_own_reason_beside_no_structured_call(starter: Any) -> None:
    case = _case_with_calls(starter)
    trace = Trace(rounds=[_round(text="{", raw_text="{", finish_reason="format_error")])
    verdict = score_tier(CONTRACT, case, trace, starter.registry_for(case))
    assert verdict.codes[:2] == ["no_structured_call", "format_error"]


# --- a server whose tool-call parser fails -----------------------------------------------------


class TextCallServer:
    """The gold answers, with every call sent back as Hermes text instead of ``tool_calls``."""

    def __init__(self) -> None:
        self.gold = GoldResponder()
        self.text_rounds = 0

    def __call__(self, api: Api, body: dict[str, Any]) -> Turn:
        turn = self.gold(api, body)
        if not turn.calls:
            return turn
        self.text_rounds += 1
        blocks = [
            f'<tool_call>{{"name": "{name}", "arguments": {args}}}</tool_call>' for name, args in turn.calls
        ]
        return Turn(text="\n".join(blocks))


def _run(model: str, out: Path, **options: Any) -> Any:
    return callbench.run("starter", model, out_dir=out, cache=False, concurrency=4, **options)


def test_unparsed_calls_are_flagged_counted_and_scored_as_before(tmp_path: Path) -> None:
    responder = TextCallServer()
    with ProtocolServer(responder=responder) as server:
        result = _run(f"openai:textcalls@{server.url}", tmp_path / "native")
    records = result.records
    with_calls = [r for r in records if r.expected_tools]
    assert with_calls and responder.text_rounds == len(with_calls)  # one text answer, then the case ends
    summary = Summary.from_json_dict(result.summary)
    serving = summary.serving
    assert serving is not None
    assert serving.text_call_answers == len(with_calls) and serving.text_call_cases == len(with_calls)
    assert serving.text_call_formats == {"hermes": len(with_calls)} and serving.recovered_calls == 0
    flags = [f for f in summary.qc_flags if f.flag == "serving_parse_suspected"]
    assert sorted(f.key for f in flags) == sorted(r.key for r in with_calls)
    for r in with_calls:
        assert r.trace.calls == [] and r.trace.rounds[0].text_call_format == "hermes"
        assert r.trace.rounds[0].text.startswith("<tool_call>")  # the raw text is kept
        for verdict in r.verdicts.values():
            assert not verdict.passed and verdict.codes[0] == "serving_parse_suspected"
    # the score is what it was: every case that needed a call fails, the others pass
    for tier in TIERS:
        assert summary.tiers[tier].passed == len(records) - len(with_calls)
    line = summary_serving_lines(summary)[0]
    assert line.startswith(f"{len(with_calls)} answers look like calls the server failed to parse")
    run_folder = read_run(result.run_dir)
    assert serving_notes([run_folder]) == [f"{run_folder.label}: {line}"]  # the report's overview
    # the streaming summary and the in-memory one agree, figure for figure
    run = read_run(result.run_dir)
    assert run.header is not None
    streamed = stream_summary(result.run_dir, run.header).to_json_dict()
    built = build_summary(run.header, read_records(result.run_dir)).to_json_dict()
    assert streamed["serving"] == built["serving"] == serving.model_dump(mode="json")


def test_recovered_calls_are_scored_marked_and_kept_apart(tmp_path: Path) -> None:
    with ProtocolServer(responder=TextCallServer()) as server:
        native = _run(f"openai:textcalls@{server.url}", tmp_path / "native")
    with ProtocolServer(responder=TextCallServer()) as server:
        recovered = _run(f"openai:textcalls@{server.url}", tmp_path / "recovered", recover_text_calls=True)
    summary = Summary.from_json_dict(recovered.summary)
    # The gold calls, read from the text, pass. Not those fed by a $ref: the scripted gold player finds
    # earlier results by its own call ids, which Hermes text does not carry (a model reads the results).
    no_refs = {r.key for r in recovered.records if "$ref" not in json.dumps(r.expected)}
    before = Summary.from_json_dict(native.summary)
    for tier in TIERS:
        assert {r.key for r in recovered.records if r.verdicts[tier].passed} == no_refs
        assert summary.tiers[tier].passed == len(no_refs) > before.tiers[tier].passed
    calls = [c for r in recovered.records for c in r.trace.calls]
    assert calls and all(c.recovered_from == "hermes" for c in calls)
    rounds = [i for r in recovered.records for i in r.trace.rounds if i.recovered_calls]
    assert sum(i.recovered_calls or 0 for i in rounds) == len(calls)
    assert all(i.raw_text and i.raw_text.startswith("<tool_call>") and i.text == "" for i in rounds)
    assert summary.serving is not None and summary.serving.recovered_calls == len(calls)
    assert summary.serving.text_call_answers == 0 and not [f for f in summary.qc_flags if f.scorer == ""]
    assert {r.harness_mode for r in recovered.records} == {"production-parity+recovered-text-calls"}
    header = json.loads((recovered.run_dir / "run.json").read_text())
    assert header["options"]["config"]["recover_text_calls"] is True
    # never pooled with the native run: no shared stratum, so no comparison, and a note says why
    notes: list[str] = []
    assert comparisons([read_run(native.run_dir), read_run(recovered.run_dir)], notes) == []
    assert notes and "never pooled" in notes[0]


def test_context_overflow_is_scored_and_counted_apart(tmp_path: Path) -> None:
    gold = GoldResponder()
    too_long = gold.suite.cases[2]

    def rule(api: Api, body: dict[str, Any]) -> Fault | None:
        if gold.case_of(api, body) is too_long:
            return Fault("400", message="This model's maximum context length is 2048 tokens")
        return None

    with ProtocolServer(responder=gold) as server:
        server.fault_rule = rule
        result = _run(f"openai:gold@{server.url}", tmp_path / "run")
    summary = Summary.from_json_dict(result.summary)
    assert summary.n_error == 0 and summary.serving is not None and summary.serving.context_overflow == 1
    [record] = [r for r in result.records if r.key == too_long.key]
    assert record.status == "completed" and record.trace.stop_reason == "context_overflow"
    assert record.trace.rounds[-1].finish_reason == "context_overflow"
    n = len(result.records)
    for tier in TIERS:
        figures = summary.tiers[tier]
        assert record.verdicts[tier].codes[0] == "context_overflow"
        assert figures.accuracy == (n - 1) / n and figures.n_serving_limited == 1
        assert figures.accuracy_without_serving_limits == 1.0


def test_clean_run_summary_has_no_serving_keys(tmp_path: Path) -> None:
    with ProtocolServer(responder=GoldResponder()) as server:
        result = _run(f"openai:gold@{server.url}", tmp_path / "run")
    assert "serving" not in result.summary
    assert all("n_serving_limited" not in t for t in result.summary["tiers"].values())


def test_state_match_names_a_refused_conversation_instead_of_a_bare_state_mismatch() -> None:
    """A real server refused round 1 as too long: the untouched state differs from the gold one, and
    the diagnostic verdict must say why (it read as a model failure before)."""
    from callbench.scoring.serving import with_serving_reasons
    from callbench.scoring.state_match import GoldStates, compare

    states = GoldStates({"files": []}, {"files": ["a.fa"]})
    refused = Trace(rounds=[_round(finish_reason="context_overflow")], stop_reason="context_overflow")
    verdict = with_serving_reasons(compare(states, {"files": []}), refused)
    assert not verdict.passed and verdict.codes == ["context_overflow", "state_mismatch"]
    clean = Trace(rounds=[_round()], stop_reason="answer")
    assert with_serving_reasons(compare(states, {"files": []}), clean).codes == ["state_mismatch"]
    matched = with_serving_reasons(compare(states, {"files": ["a.fa"]}), refused)
    assert matched.passed and matched.reasons == [] and matched.warnings  # a pass stays a pass
