"""The verdicts of a run as the shipped ``cassettes/verdicts.json`` keeps them, to compare runs with.

One entry per case and trial (``mcp-memory:id#1``), one value per scorer: ``pass``, ``n/a`` (not
applicable), or ``fail:`` and the sorted reason codes; an error record is ``{"!error": TYPE}``.
A live run and a replay of its recording give the same table; so do runs in any case order and at any
concurrency.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from callbench.plugin import CaseRecord

VERDICTS_FILE = "verdicts.json"
RECORDED_AGENTS = {"oracle": "oracle", "noisy:1": "noisy-1"}
"""The agents whose runs are shipped, and the cassette folder of each (under ``cassettes/``)."""


def verdict_table(records: Iterable[CaseRecord]) -> dict[str, dict[str, str]]:
    """The verdicts of ``records``, sorted by case key."""
    table: dict[str, dict[str, str]] = {}
    for record in records:
        key = f"{record.key}#{record.trial}"
        if record.status == "error":
            table[key] = {"!error": record.error.type if record.error else "?"}
            continue
        row = {}
        for name, verdict in sorted(record.verdicts.items()):
            if not getattr(verdict, "applicable", True):
                row[name] = "n/a"
            elif verdict.passed:
                row[name] = "pass"
            else:
                row[name] = "fail:" + ",".join(sorted({r.code for r in verdict.reasons}))
        table[key] = row
    return dict(sorted(table.items()))


def read_verdicts(folder: Path) -> dict[str, Any]:
    """``verdicts.json`` of a cassettes folder: agent -> verdict table."""
    data: dict[str, Any] = json.loads((folder / VERDICTS_FILE).read_text(encoding="utf-8"))
    return data


def write_verdicts(folder: Path, tables: dict[str, dict[str, dict[str, str]]]) -> None:
    (folder / VERDICTS_FILE).write_text(json.dumps(tables, indent=1, sort_keys=True) + "\n", encoding="utf-8")
