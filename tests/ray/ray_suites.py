"""Helpers of the Ray tests: a suite of one-round text cases and a record comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TIMING_FIELDS = {
    ("started_at",),
    ("duration_ms",),
    ("trace", "rounds", "*", "started_at"),
    ("trace", "rounds", "*", "latency_ms"),
    ("trace", "calls", "*", "duration_ms"),
}
"""The record fields that measure time: the only ones two backends may disagree on."""


def write_text_suite(root: Path, n: int, name: str = "oneround") -> Path:
    """``n`` cases that each expect a plain-text answer containing 'done' (one request per case)."""
    folder = root / name
    (folder / "tools").mkdir(parents=True)
    (folder / "suite.yaml").write_text(f"name: {name}\ndescription: one-round cases\n")
    tool = {
        "name": "echo",
        "description": "Echo a text.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
    (folder / "tools" / "echo.json").write_text(json.dumps(tool))
    with (folder / "cases.jsonl").open("w") as handle:
        for i in range(n):
            case = {
                "id": f"c{i:04d}",
                "category": "answer",
                "instruction": f"Say hello number {i}.",
                "expected": [],
                "expected_answer": {"contains": ["done"]},
            }
            handle.write(json.dumps(case) + "\n")
    return folder


def record_lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines() if line]


def differences(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The paths where ``a`` and ``b`` differ (list items under ``*``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b)) for p in differences(a.get(k), b.get(k), (*path, k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for x, y in zip(a, b, strict=True) for p in differences(x, y, (*path, "*"))]
    return [] if a == b else [path]
