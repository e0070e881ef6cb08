"""Per-tool memo of derived forms (wire schemas, hash text) that every request would recompute.

A run sends the same few dozen tool contracts thousands of times; strictifying a schema deep-
copies it and hashing it serialises it, which adds up at high concurrency. Entries are keyed
by the contract object and keep it alive, so an id is never reused while its entry exists;
contracts are treated as read-only once loaded (as suites do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from callbench.types.contract import ToolContract

T = TypeVar("T")
_MAX_ENTRIES = 20_000
_memo: dict[tuple[int, str], tuple[ToolContract, Any]] = {}


def memo(tool: ToolContract, kind: str, make: Callable[[ToolContract], T]) -> T:
    """Return ``make(tool)``, computed once per contract object and ``kind``."""
    key = (id(tool), kind)
    hit = _memo.get(key)
    if hit is not None and hit[0] is tool:
        return hit[1]
    if len(_memo) >= _MAX_ENTRIES:
        _memo.clear()
    value = make(tool)
    _memo[key] = (tool, value)
    return value
