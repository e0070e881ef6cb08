"""Helpers that write BFCL result files (FC format) from the possible answers, for interchange tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.data import load_answers, load_questions
from callbench.benchmarks.bfcl.oracle import fc_result, gold_calls


def dotted_entries(folder: Path, category: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` entries of a category whose expected functions have dotted names."""
    answers = load_answers(category, folder)
    picked = []
    for entry in load_questions(category, folder):
        calls = gold_calls(entry, answers[entry["id"]], category)
        if all("." in name for name, _ in calls):
            picked.append({"id": entry["id"], "calls": calls})
        if len(picked) == count:
            break
    return picked


def gold_rows(entries: list[dict[str, Any]], underscored: bool) -> list[dict[str, Any]]:
    """Result lines playing each entry's gold calls with dotted or underscored names."""
    return [{"id": item["id"], "result": fc_result(item["calls"], underscored)} for item in entries]


def write_result(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write result lines as BFCL does (JSONL, despite the .json suffix)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
