"""A suite of one-round text cases (one request each): the Ray tests' and the throughput benches' load."""

from __future__ import annotations

import json
from pathlib import Path


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
