"""What every LLM judge of a scorer needs: reading the JSON object of its reply, and a cache of its
verdicts (in memory, optionally appended to a JSON-lines file in a folder the user names) so that
re-scoring a run never asks twice and ``callbench score`` can reuse verdicts offline.

The judges themselves (their prompts, what they decide) belong to the benchmarks that declare them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a judge reply (code fences and chatter around it are ignored)."""
    match = _JSON_OBJECT.search(text or "")
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class JudgeCache:
    """Judge verdicts by key, in memory and, with a ``folder``, appended to ``folder/filename``."""

    def __init__(self, folder: Path | None, filename: str) -> None:
        self.path = Path(folder) / filename if folder else None
        self.entries: dict[str, Any] = {}
        if self.path and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    self.entries[row["key"]] = row["value"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a torn line from an interrupted run: that verdict is asked again

    def get(self, key: str) -> Any:
        """The cached verdict of ``key``, or ``None``."""
        return self.entries.get(key)

    def put(self, key: str, value: Any) -> None:
        """Keep a verdict (and append it to the file, if there is one)."""
        self.entries[key] = value
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n")
