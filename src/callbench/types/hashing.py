"""Canonical JSON and hashing shared by registries, suites and caches."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` deterministically: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_of(value: Any) -> str:
    """SHA-256 hex digest of the canonical JSON of ``value`` (strings are hashed as-is)."""
    text = value if isinstance(value, str) else canonical_json(value)
    # surrogatepass: a lone surrogate in a model's text still hashes (identical bytes for any other text)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
