"""Helpers of the Ray tests: the timing fields and a record comparison (the suite: text_suite.py)."""

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


def record_lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines() if line]


def differences(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The paths where ``a`` and ``b`` differ (list items under ``*``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b)) for p in differences(a.get(k), b.get(k), (*path, k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for x, y in zip(a, b, strict=True) for p in differences(x, y, (*path, "*"))]
    return [] if a == b else [path]
