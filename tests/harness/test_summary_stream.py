"""The streaming summary (what the engine writes) equals the list-based ``build_summary`` over every
latest slim record, byte for byte, on real runs: trials, errors, resumes, manual cases, templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import callbench
from callbench.harness import engine
from callbench.harness.runfolder import RECORDS_FILE, latest_records, read_header, read_records, slim_record
from callbench.harness.summary import build_summary
from callbench.harness.summary_stream import index_latest, stream_summary


def _listed(run_dir: Path, header: Any, scorers: Any = None, requests: Any = None) -> dict[str, Any]:
    records = latest_records([slim_record(r) for r in read_records(run_dir)])
    return build_summary(header, records, scorers, requests=requests).to_json_dict()


@pytest.fixture
def pairs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every summary the engine streams, next to the list-based one over the same folder and scorers."""
    out: list[tuple[str, str]] = []
    real = engine.stream_summary

    def both(run_dir: Path, header: Any, scorers: Any = None, requests: Any = None) -> Any:
        streamed = real(run_dir, header, scorers, requests)
        listed = _listed(run_dir, header, scorers, requests)
        out.append((json.dumps(listed, indent=1), json.dumps(streamed.to_json_dict(), indent=1)))
        return streamed

    monkeypatch.setattr(engine, "stream_summary", both)
    return out


def _same(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    listed, streamed = pairs[-1]
    assert streamed == listed
    return json.loads(streamed)


def test_oracle_run_is_the_same(pairs, tmp_path):
    callbench.run("starter", "oracle", "all", out_dir=tmp_path / "r", progress="quiet")
    summary = _same(pairs)
    assert summary["n_records"] > 10 and summary["n_error"] == 0
    assert summary["statistics"]["strata"][0]["accuracy"]["method"] == "wilson"


def test_noisy_trials_bootstrap_and_flips_are_the_same(pairs, tmp_path):
    callbench.run("starter", "noisy:2", "all", out_dir=tmp_path / "r", progress="quiet", trials=3)
    summary = _same(pairs)
    strata = summary["statistics"]["strata"]
    methods = {s["accuracy"]["method"] for s in strata}
    assert methods & {"cluster-bootstrap", "cluster-bootstrap+wilson"}, methods
    assert all(s["trials"]["trials"] == 3 for s in strata)


def test_baseline_and_manual_cases_are_the_same(pairs, tmp_path):
    callbench.run("starter", "baseline", "all", out_dir=tmp_path / "b", progress="quiet", trials=2)
    _same(pairs)
    callbench.run("genomics-manual", "oracle", "all", out_dir=tmp_path / "m", progress="quiet", limit=6)
    summary = _same(pairs)
    assert summary["n_manual"] == 6
    assert all(t["n_not_applicable"] == 6 for t in summary["tiers"].values())


def _rewrite(path: Path, change: Any) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(i, rec)) + "\n" for i, rec in enumerate(lines)))


def test_resumed_errors_last_line_wins(pairs, tmp_path):
    run_dir = tmp_path / "r"
    callbench.run("starter", "noisy:3", "all", out_dir=run_dir, progress="quiet", trials=2)

    def break_some(i: int, rec: dict[str, Any]) -> dict[str, Any]:
        if i % 4 == 1:  # an endpoint failure, and a crashed tool (flagged for a person)
            kind = "tool_bug:KeyError" if i % 8 == 1 else "HTTPError"
            rec.update(status="error", error={"type": kind, "message": "boom"}, verdicts={})
        return rec

    _rewrite(run_dir / RECORDS_FILE, break_some)
    n_before = len((run_dir / RECORDS_FILE).read_text().splitlines())
    callbench.run("starter", "noisy:3", "all", out_dir=run_dir, progress="quiet", trials=2, resume=True)
    index = index_latest(run_dir / RECORDS_FILE)
    assert index.n_lines > n_before and len(index.moved) == n_before - n_before * 3 // 4
    summary = _same(pairs)
    assert summary["n_error"] == 0 and summary["n_records"] == n_before


def test_templates_superseded_completed_lines_and_errors(tmp_path):
    """Written by hand: templated clusters, an error record left in place, and a completed line
    superseded by a later one (last wins, at the first line's place)."""
    run_dir = tmp_path / "r"
    callbench.run("starter", "noisy:2", "all", out_dir=run_dir, progress="quiet", trials=2)
    path = run_dir / RECORDS_FILE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    flipped = sorted({rec["key"] for rec in lines})[::2]  # by key: the line order depends on scheduling
    for i, rec in enumerate(lines):
        rec["template"] = f"t{i % 5}" if i % 3 else None
        if rec["trial"] == 2 and rec["key"] in flipped:  # a flipping case: its key is printed
            for verdict in rec["verdicts"].values():
                verdict["passed"] = not verdict["passed"]
        if i % 7 == 3:
            rec.update(status="error", error={"type": "HTTPError", "message": "x"})
    again = [
        dict(lines[2], duration_ms=1.0),
        dict(lines[5], status="error", error={"type": "E", "message": "y"}),
    ]
    path.write_text("".join(json.dumps(rec) + "\n" for rec in [*lines, *again]))
    header = read_header(run_dir)
    streamed = stream_summary(run_dir, header).to_json_dict()
    assert json.dumps(streamed) == json.dumps(_listed(run_dir, header))
    assert streamed["n_records"] == len(lines)
    methods = {s["accuracy"]["method"] for s in streamed["statistics"]["strata"]}
    assert "cluster-bootstrap+wilson" in methods or "wilson-clusters" in methods, methods
    assert any(s["trials"].get("flipping_cases") for s in streamed["statistics"]["strata"])


def test_engine_keeps_nothing_per_case(tmp_path):
    result = callbench.run("starter", "oracle", "all", out_dir=tmp_path / "r", progress="quiet")
    assert not hasattr(engine.RecordSink, "slim")
    assert len(result.records) == result.summary["n_records"]
