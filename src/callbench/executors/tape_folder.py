"""The folder of a recording, shared by the tool cassette and the agent-model tapes.

Both keep the same layout (:mod:`callbench.executors.cassette`, :mod:`callbench.providers.model_tape`):

* ``cases/<sha256>.json`` — one tape per case and trial, named by the SHA-256 of its bytes
  (content-addressed: a corrupt or truncated file no longer matches its name);
* ``index.json`` — which tape answers which ``case#trial``, and the timing (written atomically);
* ``journal.jsonl`` — while a run records, one line per finished tape, absorbed by the index when the
  run ends (a torn last line, the case in flight when a run was killed, is left out).

:class:`TapeFolder` reads and writes that layout; a subclass says what differs: its index format, its
error class, the index keys it keeps beyond ``cases`` and ``timing``, and what a tape must hold.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from callbench.errors import UserError
from callbench.types.hashing import sha256_of

INDEX_FILE = "index.json"
JOURNAL_FILE = "journal.jsonl"
CASES_DIR = "cases"

Mode = Literal["record", "replay"]


def tape_key(case_key: str, trial: int | str) -> str:
    """``suite:id#1`` (``suite:id#gold`` for the gold path)."""
    return f"{case_key}#{trial}"


def dumps(value: Any) -> bytes:
    """JSON as a tape stores it: key order kept (records replay byte for byte), non-ASCII escaped
    (any text a server sends, lone surrogates too, stays writable)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``: a reader (or a run killed
    meanwhile) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def swap(value: Any, pairs: Sequence[tuple[str, str]]) -> Any:
    """``value`` with each ``old`` text of ``pairs`` replaced by its ``new`` one in every string (keys
    too)."""
    if isinstance(value, str):
        for old, new in pairs:
            if old and old in value:
                value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {swap(k, pairs): swap(v, pairs) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [swap(v, pairs) for v in value]
    return value


@dataclass
class TapeFolder:
    """A recording's folder (see the module docstring), opened to record into or to replay from."""

    error: ClassVar[type[UserError]] = UserError
    """What a folder that cannot be used raises (one line)."""
    index_format: ClassVar[str] = ""
    index_what: ClassVar[str] = "an index of tapes"
    """What ``index.json`` is said not to be when its format is another."""
    index_objects: ClassVar[tuple[str, ...]] = ("cases", "timing")
    """The index's keys that must hold objects."""
    record_again: ClassVar[str] = "record it again"
    """The advice on a corrupt or truncated tape."""
    sort_index: ClassVar[bool] = False
    """Whether ``index.json`` is written with its keys sorted."""

    folder: Path
    mode: Mode
    miss: str = "strict"
    cases: dict[str, str] = field(default_factory=dict)
    """Tape key -> the SHA-256 (file name) of its tape."""
    timing: dict[str, Any] = field(default_factory=dict)
    tapes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The tapes read (replay) or written, by file hash."""
    added: int = 0
    """Tapes written by this run."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- hooks --------------------------------------------------------------------------------
    def _objects_problem(self, key: str) -> str:
        """What is said of the index when its ``key`` does not hold an object."""
        return f"{key!r} is not an object"

    def _take_index(self, index: dict[str, Any]) -> None:
        """Keep what the index read holds (a subclass keeps its own keys too)."""
        self.cases = {str(k): str(v) for k, v in index.get("cases", {}).items()}
        self.timing = dict(index.get("timing", {}))

    def _take_entry(self, key: str, entry: dict[str, Any]) -> None:
        """Keep what a journal line says beyond its tape (its timing...)."""

    def _tape_problem(self, tape: Any) -> str | None:
        """What makes ``tape`` unusable (``None``: nothing)."""
        return None

    def _index(self) -> dict[str, Any]:
        """What ``index.json`` holds."""
        return {
            "format": self.index_format,
            "cases": dict(sorted(self.cases.items())),
            "timing": dict(sorted(self.timing.items())),
        }

    # -- reading ------------------------------------------------------------------------------
    def holds_index(self) -> bool:
        """Whether the folder holds an index or a journal (a recording to replay or to add to)."""
        return (self.folder / INDEX_FILE).exists() or (self.folder / JOURNAL_FILE).exists()

    def _read(self, flag: str) -> None:
        path = self.folder / INDEX_FILE
        index: dict[str, Any] = {}
        if path.exists():
            try:
                index = json.loads(path.read_bytes())
            except (ValueError, OSError) as exc:
                raise self.error(
                    f"{flag} {self.folder}: {INDEX_FILE} is corrupt or truncated ({exc})"
                ) from None
            if not isinstance(index, dict) or index.get("format") != self.index_format:
                found = index.get("format") if isinstance(index, dict) else None
                raise self.error(
                    f"{flag} {self.folder}: {INDEX_FILE} is not {self.index_what} "
                    f"(format {found!r}, expected {self.index_format!r})"
                )
            for key in self.index_objects:
                if not isinstance(index.get(key, {}), dict):
                    raise self.error(f"{flag} {self.folder}: {INDEX_FILE}: {self._objects_problem(key)}")
        self._take_index(index)
        self._read_journal()

    def _read_journal(self) -> None:
        """Tapes a run that did not finish recorded after the index was last written (a torn last
        line, the case in flight when it was killed, is left out)."""
        path = self.folder / JOURNAL_FILE
        if not path.exists():
            return
        for line in path.read_bytes().splitlines():
            try:
                entry = json.loads(line)
                key, digest = str(entry["key"]), str(entry["file"])
            except (ValueError, KeyError, TypeError):
                continue
            self.cases[key] = digest
            self._take_entry(key, entry)

    def _read_tape(self, digest: str, flag: str) -> dict[str, Any]:
        path = self.folder / CASES_DIR / f"{digest}.json"
        where = f"{flag} {self.folder}: tape {CASES_DIR}/{digest}.json"
        try:
            raw = path.read_bytes()
        except OSError:
            raise self.error(f"{where} is missing") from None
        if hashlib.sha256(raw).hexdigest() != digest:
            raise self.error(
                f"{where} is corrupt or truncated (its content no longer matches its name); "
                + self.record_again
            )
        try:
            tape = json.loads(raw)
        except ValueError as exc:
            raise self.error(f"{where}: {exc}") from None
        problem = self._tape_problem(tape)
        if problem:
            raise self.error(f"{where}: {problem}")
        return tape

    def _open_replay(self, flag: str) -> None:
        """Read the index, the journal and every tape (each checked against its name now)."""
        self._read(flag)
        for digest in set(self.cases.values()):
            self.tapes[digest] = self._read_tape(digest, flag)

    def _open_record(self, flag: str) -> None:
        """Read what the folder holds (a recording to add to), and make room for tapes."""
        if self.holds_index():
            self._read(flag)
        (self.folder / CASES_DIR).mkdir(parents=True, exist_ok=True)

    # -- writing ------------------------------------------------------------------------------
    def recorded(self, key: str) -> dict[str, Any] | None:
        """The tape of ``key`` (replay), or ``None`` when the folder holds none."""
        digest = self.cases.get(key)
        return self.tapes.get(digest) if digest is not None else None

    def _store(self, key: str, tape: dict[str, Any], data: bytes, line: dict[str, Any], timing: Any) -> str:
        """Write ``data`` (the bytes of ``tape``) as ``cases/<sha256>.json`` and journal it under
        ``key`` (with ``line`` beside the key and the file); returns its hash."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / CASES_DIR / f"{digest}.json"
        with self._lock:
            if not path.exists():
                write_atomic(path, data)
            with open(self.folder / JOURNAL_FILE, "ab") as journal:
                journal.write(dumps({"key": key, "file": digest, **line}) + b"\n")
            self.cases[key] = digest
            self.timing[key] = timing
            self.tapes[digest] = tape
            self.added += 1
        return digest

    def write_index(self) -> None:
        """Write ``index.json`` (atomically) with every tape so far, then drop the journal it absorbed."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            data = json.dumps(self._index(), indent=1, sort_keys=self.sort_index).encode()
            write_atomic(self.folder / INDEX_FILE, data)
            (self.folder / JOURNAL_FILE).unlink(missing_ok=True)

    @property
    def hash(self) -> str:
        """SHA-256 of the index's content (which tape answers which case...), timing left out."""
        return sha256_of({k: v for k, v in self._index().items() if k != "timing"})
