"""Response cache: SQLite, keyed by a hash of everything that affects a model's answer.

The key covers the provider description (provider, API, model, base URL, quirks), the
messages, the tools and the generation settings (except the client-side timeout). A re-run of
an unchanged run is then answered from the cache without any request.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from callbench.errors import ConfigError
from callbench.providers.tool_memo import memo
from callbench.types.contract import ToolContract
from callbench.types.hashing import canonical_json
from callbench.types.jsoncodec import load_model, model_json
from callbench.types.messages import GenerationSettings, Message, ModelTurn

CACHE_DIR_ENV = "CALLBENCH_CACHE_DIR"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    turn TEXT NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$CALLBENCH_CACHE_DIR/responses.sqlite``, else ``~/.cache/callbench/responses.sqlite``."""
    base = os.environ.get(CACHE_DIR_ENV) or "~/.cache/callbench"
    return Path(base).expanduser() / "responses.sqlite"


def cache_key(
    description: dict[str, Any],
    messages: list[Message],
    tools: list[ToolContract],
    settings: GenerationSettings,
    salt: str = "",
) -> str:
    """Hash of everything that affects the response.

    Args:
        description: ``Provider.describe()`` (provider, model, base URL, quirks; never a key).
        messages: The conversation sent.
        tools: The tools offered.
        settings: Generation settings; ``timeout_s`` is left out since it cannot change an answer.
        salt: Extra text that must separate otherwise equal requests (e.g. a trial number).
    """
    digest = hashlib.sha256()
    # Length-prefixed parts: no two different requests can concatenate to the same bytes.
    parts = [
        canonical_json(description),
        *(model_json(m) for m in messages),
        *(memo(t, "hash-json", _tool_json) for t in tools),
        model_json(settings, exclude={"timeout_s"}),
        salt,
    ]
    digest.update(f"v3|{len(messages)}|{len(tools)}".encode())
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _tool_json(tool: ToolContract) -> str:
    return canonical_json(tool.hash_payload())


class ResponseCache:
    """A SQLite table of model turns by request hash. Safe to share across tasks of one loop."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL loses at most the last writes on power loss; they are only a cache.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise ConfigError(f"{self.path}: cannot open response cache ({exc})") from None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> ModelTurn | None:
        """Return the cached turn for ``key`` (marked ``cached=True``), or ``None``."""
        with self._lock:
            row = self._db.execute("SELECT turn FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return load_model(ModelTurn, row[0]).model_copy(update={"cached": True})

    def put(self, key: str, turn: ModelTurn, provider: str, model: str) -> None:
        """Store ``turn`` under ``key`` (replacing any older entry)."""
        data = model_json(turn, exclude={"cached"})
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, provider, model, created, turn) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, provider, model, time.time(), data),
            )

    def stats(self) -> dict[str, Any]:
        """Entries per provider/model, total entries and file size."""
        with self._lock:
            rows = self._db.execute(
                "SELECT provider, model, COUNT(*) FROM responses GROUP BY provider, model ORDER BY 3 DESC"
            ).fetchall()
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {
            "path": str(self.path),
            "entries": sum(r[2] for r in rows),
            "bytes": size,
            "by_model": [{"provider": r[0], "model": r[1], "entries": r[2]} for r in rows],
        }

    def clear(self, model: str | None = None) -> int:
        """Delete all entries (or those of one model); return how many were deleted."""
        with self._lock:
            if model is None:
                cursor = self._db.execute("DELETE FROM responses")
            else:
                cursor = self._db.execute("DELETE FROM responses WHERE model = ?", (model,))
            self._db.execute("VACUUM")
        return cursor.rowcount

    def close(self) -> None:
        """Close the database."""
        self._db.close()
