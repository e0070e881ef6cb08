"""Synthetic case records in the shape of ``records.jsonl`` lines, for tests and benchmarks."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

TOOLS = ["search_genes", "get_sequence", "translate", "blast", "open_file", "export_genbank"]
CATEGORIES = ["lookup", "edit", "analysis", "export"]
REASONS = ["tool_missing", "argument_mismatch", "schema_invalid", "unexpected_call"]


def make_record(
    i: int,
    *,
    rng: random.Random,
    skill: float = 0.7,
    trial: int = 1,
    suite: str = "demo",
    harness_mode: str = "oracle-assisted",
    tiers: tuple[str, ...] = ("native-function-contract", "real-tool-execution"),
    payload: str | None = None,
    error_rate: float = 0.0,
) -> dict[str, Any]:
    """One synthetic record; ``payload`` is injected into every model-controlled text field."""
    key = f"{suite}:case-{i:05d}"
    tool = TOOLS[i % len(TOOLS)]
    base = {
        "key": key,
        "suite": suite,
        "case_id": f"case-{i:05d}",
        "category": CATEGORIES[i % len(CATEGORIES)],
        "template": f"tpl-{i // 3}",
        "trial": trial,
        "harness_mode": harness_mode,
        "instruction": f"Find the gene number {i} and run {tool}.",
        "offered_tools": [tool, TOOLS[(i + 1) % len(TOOLS)]],
        "retrieval_recall": 1.0 if i % 5 else 0.5,
        "expected_tools": [[tool]],
        "metadata": {"expected": [{"id": tool, "tool": tool, "arguments": {"name": f"gene{i}", "limit": 5}}]},
        "started_at": 1_796_000_000.0 + i,
        "duration_ms": 100.0 + (i % 17) * 13,
    }
    if rng.random() < error_rate:
        error = {"type": "TransientProviderError", "message": "HTTP 503 after 3 retries"}
        return base | {
            "status": "error",
            "error": error,
            "verdicts": {},
            "trace": {"rounds": [], "calls": []},
        }
    ok = rng.random() < skill
    args = {"name": f"gene{i}" if ok else f"gene{i + 1}", "limit": 5}
    final = f"Done with gene{i}."
    if payload is not None:
        args["name"] = payload
        final = payload
    calls = [_call(f"c{i}-1", 1, tool, args, ok)]
    start = base["started_at"]
    rounds = [
        {"index": 1, "started_at": start, "text": "", "call_ids": [f"c{i}-1"], "nudge": None},
        {"index": 2, "started_at": start + 2.5, "text": final, "call_ids": [], "nudge": None},
    ]
    verdicts = {}
    for t_index, tier in enumerate(tiers):
        tier_ok = ok and not (t_index and i % 11 == 0)
        verdicts[tier] = {
            "scorer": tier,
            "passed": tier_ok,
            "partial": 1.0 if tier_ok else round(rng.random() * 0.8, 3),
            "reasons": []
            if tier_ok
            else [{"code": REASONS[i % len(REASONS)], "message": f"argument name differs {payload or ''}"}],
            "rationale": "all strict conditions hold" if tier_ok else f"failed: {payload or 'wrong name'}",
            "details": {},
        }
    trace = {"rounds": rounds, "calls": calls, "final_text": final, "stop_reason": "answer"}
    return base | {"status": "completed", "error": None, "verdicts": verdicts, "trace": trace}


def _call(call_id: str, rnd: int, tool: str, args: dict[str, Any], ok: bool) -> dict[str, Any]:
    return {
        "index": 0,
        "call_id": call_id,
        "round": rnd,
        "tool": tool,
        "arguments_raw": json.dumps(args),
        "arguments": args,
        "parse_error": None,
        "schema_valid": ok,
        "schema_errors": [] if ok else ["$.name: bad value"],
        "execution": "ok" if ok else "error",
        "result": {"rows": 1} if ok else None,
        "error": None if ok else "ToolError: no such gene",
        "duration_ms": 12.5,
    }


def make_records(n: int, *, seed: int = 1, trials: int = 1, **kw: Any) -> list[dict[str, Any]]:
    """``n`` cases times ``trials`` records, deterministic for a seed."""
    rng = random.Random(seed)
    return [make_record(i, rng=rng, trial=t, **kw) for i in range(n) for t in range(1, trials + 1)]


def write_run(
    run_dir: Path, records: list[dict[str, Any]], *, model: str = "scripted", summary: bool = True
) -> Path:
    """Write ``run.json`` + ``records.jsonl`` (+ ``summary.json``) like a finished run."""
    from callbench.stats import statistics_summary

    run_dir.mkdir(parents=True, exist_ok=True)
    header = {
        "run_id": run_dir.name,
        "model": model,
        "harness_mode": records[0]["harness_mode"] if records else "oracle-assisted",
        "created_at": "2026-11-30T05:00:00Z",
        "callbench_version": "0",
        "python_version": "3.11",
    }
    (run_dir / "run.json").write_text(json.dumps(header))
    with (run_dir / "records.jsonl").open("w") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
    if summary:
        (run_dir / "summary.json").write_text(json.dumps({"statistics": statistics_summary(records)}))
    return run_dir
