"""Recordings of an agent's model traffic: ``DIR/model/`` beside the tool cassette of ``--record DIR``.

In an agent-under-test run the agent calls its model itself; callbench's model proxy
(:mod:`callbench.providers.model_proxy`) sits between them. Under ``--record DIR`` it keeps what the
model endpoint answered, under ``--replay DIR`` it answers from the recording with no endpoint at all.
The folder follows the tool cassette's conventions (:mod:`callbench.executors.cassette`):

* ``model/cases/<sha256>.json`` — one **tape** per case and trial, named by the SHA-256 of its bytes
  (content-addressed: a corrupt or truncated file no longer matches its name; trials that had the
  same conversation share one file). It holds every request the agent made, in order: the API and
  path, the request's hash and its occurrence number, a short summary of the request (to explain a
  miss), and the answer — status, content type, and the JSON body, the body text, or the
  server-sent events of a streamed answer one by one — or the fault (the endpoint unreachable).
* ``model/index.json`` — which tape answers which ``case#trial``, and the timing; the **tape hash**
  (SHA-256 of the content, timing left out) is the one ``run.json`` names.
* ``model/journal.jsonl`` — while a run records, one line per finished tape, so a killed run loses
  at most the cases in flight; the index absorbs it when the run ends.

A request is matched by a canonical hash of its method, API, path and JSON body with the volatile
parts removed (:data:`VOLATILE_KEYS`; the case's per-case URLs and folders written as placeholders),
and by its occurrence number among identical requests of the case: identical requests replay in the
order they were recorded. No request header is kept except content negotiation ones; credentials
(``Authorization``, ``api-key``, ``x-api-key``) are never written (kept as ``""`` when sent), and
every known secret is blanked from what is stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from callbench.errors import UserError
from callbench.secrets import scrub_data
from callbench.types.hashing import canonical_json, sha256_of

FORMAT = "callbench-model-tape/1"
INDEX_FORMAT = "callbench-model-tapes/1"
FOLDER = "model"
"""The subfolder of the ``--record``/``--replay`` folder that holds the model tapes."""
INDEX_FILE = "index.json"
JOURNAL_FILE = "journal.jsonl"
CASES_DIR = "cases"
VOLATILE_KEYS = frozenset({"user", "metadata", "prompt_cache_key", "safety_identifier"})
"""Top-level request fields left out of the match: they identify the caller or the session, not what
is asked (an SDK may fill them with a fresh id per run)."""
CREDENTIAL_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})
KEPT_HEADERS = frozenset({"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta"})
"""Request headers a tape keeps (content negotiation; credentials are kept blank, others dropped)."""

Mode = Literal["record", "replay"]
MissPolicy = Literal["strict", "live"]


class ModelTapeError(UserError):
    """A model tape folder that cannot be used (missing, corrupt): one line."""


def tape_key(case_key: str, trial: int | str) -> str:
    return f"{case_key}#{trial}"


def _dumps(value: Any) -> bytes:
    """JSON as a tape stores it: key order kept, non-ASCII escaped (lone surrogates stay writable)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file and ``os.replace``: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- matching ---------------------------------------------------------------------------------


def swap(value: Any, pairs: Sequence[tuple[str, str]]) -> Any:
    """``value`` with each ``old`` text of ``pairs`` replaced by its ``new`` one in every string."""
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


def normalised(body: Any) -> Any:
    """The request body as matched: the volatile top-level fields left out."""
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k not in VOLATILE_KEYS}
    return body


def request_hash(method: str, api: str, path: str, body: Any) -> str:
    """The match key of one request (``body``: parsed JSON, placeholders already in)."""
    return sha256_of({"method": method.upper(), "api": api, "path": path, "body": normalised(body)})


def request_summary(api: str, path: str, body: Any) -> dict[str, Any]:
    """A few words on a request, kept in the tape to explain a miss (the body itself is not kept)."""
    summary: dict[str, Any] = {"path": path}
    if not isinstance(body, dict):
        return summary
    if "model" in body:
        summary["model"] = body["model"]
    messages = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    if isinstance(messages, list):
        summary["messages"] = len(messages)
        last = messages[-1] if messages else None
        if isinstance(last, dict):
            summary["last_role"] = last.get("role") or last.get("type")
            content = last.get("content", last)
            summary["last"] = (content if isinstance(content, str) else canonical_json(content))[:160]
    if isinstance(body.get("tools"), list):
        summary["tools"] = len(body["tools"])
    if body.get("stream"):
        summary["stream"] = True
    return summary


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """What a tape keeps of the request headers: content negotiation; credentials as ``""``."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        low = name.lower()
        if low in CREDENTIAL_HEADERS:
            out[low] = ""
        elif low in KEPT_HEADERS:
            out[low] = value
    return dict(sorted(out.items()))


# --- the folder -------------------------------------------------------------------------------


@dataclass
class ModelTapes:
    """The ``model/`` folder of a recording, opened to record into or to replay from."""

    folder: Path
    mode: Mode
    miss: MissPolicy = "strict"
    cases: dict[str, str] = field(default_factory=dict)
    """Tape key (``suite:id#trial``) -> the SHA-256 (file name) of its tape."""
    timing: dict[str, Any] = field(default_factory=dict)
    tapes: dict[str, dict[str, Any]] = field(default_factory=dict)
    added: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def for_replay(cls, root: Path, miss: MissPolicy = "strict", flag: str = "--replay") -> ModelTapes:
        """Open ``root/model`` to replay from; every tape is read and checked against its name now."""
        folder = Path(root) / FOLDER
        if not Path(root).is_dir():
            raise ModelTapeError(f"{flag} {root}: no such folder")
        if not (folder / INDEX_FILE).exists() and not (folder / JOURNAL_FILE).exists():
            raise ModelTapeError(
                f"{flag} {root}: no recording of an agent's model requests "
                f"({FOLDER}/{INDEX_FILE} is missing); record one with --record {root}"
            )
        tapes = cls(folder, "replay", miss)
        tapes._read(flag)
        for digest in set(tapes.cases.values()):
            tapes.tapes[digest] = tapes._read_tape(digest, flag)
        return tapes

    @classmethod
    def for_record(cls, root: Path, flag: str = "--record") -> ModelTapes:
        """Open ``root/model`` to record into (a new folder, or a recording to add to: the tapes of the
        cases recorded again are replaced)."""
        folder = Path(root) / FOLDER
        if Path(root).exists() and not Path(root).is_dir():
            raise ModelTapeError(f"{flag} {root}: not a folder")
        tapes = cls(folder, "record")
        if (folder / INDEX_FILE).exists() or (folder / JOURNAL_FILE).exists():
            tapes._read(flag)
        (folder / CASES_DIR).mkdir(parents=True, exist_ok=True)
        return tapes

    def _read(self, flag: str) -> None:
        index: dict[str, Any] = {}
        path = self.folder / INDEX_FILE
        if path.exists():
            try:
                index = json.loads(path.read_bytes())
            except (ValueError, OSError) as exc:
                raise ModelTapeError(
                    f"{flag} {self.folder}: {INDEX_FILE} is corrupt or truncated ({exc})"
                ) from None
            if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
                found = index.get("format") if isinstance(index, dict) else None
                raise ModelTapeError(
                    f"{flag} {self.folder}: {INDEX_FILE} is not an index of model tapes "
                    f"(format {found!r}, expected {INDEX_FORMAT!r})"
                )
            if not isinstance(index.get("cases", {}), dict) or not isinstance(index.get("timing", {}), dict):
                raise ModelTapeError(
                    f"{flag} {self.folder}: {INDEX_FILE}: 'cases' or 'timing' is not an object"
                )
        self.cases = {str(k): str(v) for k, v in index.get("cases", {}).items()}
        self.timing = dict(index.get("timing", {}))
        journal = self.folder / JOURNAL_FILE
        if journal.exists():
            for line in journal.read_bytes().splitlines():
                try:
                    entry = json.loads(line)
                    key, digest = str(entry["key"]), str(entry["file"])
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line: the case in flight when the run was killed
                self.cases[key] = digest
                self.timing[key] = entry.get("timing", [])

    def _read_tape(self, digest: str, flag: str) -> dict[str, Any]:
        path = self.folder / CASES_DIR / f"{digest}.json"
        where = f"{flag} {self.folder}: tape {CASES_DIR}/{digest}.json"
        try:
            raw = path.read_bytes()
        except OSError:
            raise ModelTapeError(f"{where} is missing") from None
        if hashlib.sha256(raw).hexdigest() != digest:
            raise ModelTapeError(
                f"{where} is corrupt or truncated (its content no longer matches its name); record it again"
            )
        try:
            tape = json.loads(raw)
        except ValueError as exc:
            raise ModelTapeError(f"{where}: {exc}") from None
        problem = _tape_problem(tape)
        if problem:
            raise ModelTapeError(f"{where}: {problem}")
        return tape

    # -- tapes ---------------------------------------------------------------------------------
    def tape(self, case_key: str, trial: int | str) -> CaseModelTape:
        """The tape of one case and trial: empty (record), or the recorded one to answer from."""
        key = tape_key(case_key, trial)
        recorded = None
        if self.mode == "replay":
            digest = self.cases.get(key)
            recorded = self.tapes.get(digest) if digest is not None else None
        timing = self.timing.get(key) if recorded is not None else None
        return CaseModelTape(self, key, recorded, timing if isinstance(timing, list) else [])

    def store(self, key: str, tape: dict[str, Any], timing: list[dict[str, Any]]) -> str:
        """Write ``tape`` as ``cases/<sha256>.json`` and journal it under ``key``; returns its hash."""
        data = _dumps(scrub_data(tape))
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / CASES_DIR / f"{digest}.json"
        with self._lock:
            if not path.exists():
                write_atomic(path, data)
            line = {"key": key, "file": digest, "timing": timing}
            with open(self.folder / JOURNAL_FILE, "ab") as journal:
                journal.write(_dumps(line) + b"\n")
            self.cases[key] = digest
            self.timing[key] = timing
            self.tapes[digest] = tape
            self.added += 1
        return digest

    def write_index(self) -> None:
        """Write ``index.json`` (atomically) with every tape so far, then drop the journal it absorbed."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            index = {
                "format": INDEX_FORMAT,
                "cases": dict(sorted(self.cases.items())),
                "timing": dict(sorted(self.timing.items())),
            }
            write_atomic(self.folder / INDEX_FILE, json.dumps(index, indent=1).encode())
            (self.folder / JOURNAL_FILE).unlink(missing_ok=True)

    @property
    def hash(self) -> str:
        """SHA-256 of which tape answers which case and trial (timing left out)."""
        return sha256_of({"format": INDEX_FORMAT, "cases": dict(sorted(self.cases.items()))})


def _tape_problem(tape: Any) -> str | None:
    if not isinstance(tape, dict) or tape.get("format") != FORMAT:
        return f"not a model tape of format {FORMAT!r}"
    exchanges = tape.get("exchanges")
    if not isinstance(exchanges, list):
        return "no list of exchanges"
    for n, exchange in enumerate(exchanges):
        if not (
            isinstance(exchange, dict)
            and isinstance(exchange.get("hash"), str)
            and isinstance(exchange.get("occurrence"), int)
            and (isinstance(exchange.get("status"), int) or isinstance(exchange.get("fault"), dict))
        ):
            return f"exchange {n} is malformed"
    return None


class CaseModelTape:
    """The model requests of one case and trial: recorded as they are answered, or answered from the
    recording (matched by request hash and occurrence)."""

    def __init__(
        self, tapes: ModelTapes, key: str, recorded: dict[str, Any] | None, timing: list[dict[str, Any]]
    ) -> None:
        self.tapes = tapes
        self.key = key
        self.recorded: list[dict[str, Any]] = list(recorded["exchanges"]) if recorded else []
        self.recorded_timing = timing
        self.answers = {(x["hash"], x["occurrence"]): (n, x) for n, x in enumerate(self.recorded)}
        self.exchanges: list[dict[str, Any]] = list(self.recorded)
        """What the tape holds after this run: the recorded exchanges (replay) plus what was added."""
        self.timing: list[dict[str, Any]] = list(timing)
        self.seen: Counter[str] = Counter()
        self.changed = tapes.mode == "record"
        """A recording is written even when the agent asked its model nothing (the index then says so)."""

    @property
    def replaying(self) -> bool:
        return self.tapes.mode == "replay"

    def occurrence(self, digest: str) -> int:
        """The occurrence number of this request among identical ones of the case (counted)."""
        n = self.seen[digest]
        self.seen[digest] += 1
        return n

    def find(self, digest: str, occurrence: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The recorded exchange answering this request and its timing, or ``None`` (a miss)."""
        found = self.answers.get((digest, occurrence))
        if found is None:
            return None
        n, exchange = found
        timing = self.recorded_timing[n] if n < len(self.recorded_timing) else {}
        return exchange, timing if isinstance(timing, dict) else {}

    def expected(self, position: int) -> dict[str, Any] | None:
        """The recorded exchange at this position of the case (to explain a miss)."""
        return self.recorded[position] if position < len(self.recorded) else None

    def add(self, exchange: dict[str, Any], timing: dict[str, Any]) -> None:
        """Keep a live exchange (recording, or a replay's ``live`` miss)."""
        self.exchanges.append(exchange)
        self.timing.append(timing)
        self.changed = True

    def save(self) -> str | None:
        """Write the tape when it holds anything new; its hash (``None``: nothing written)."""
        if not self.changed:
            return None
        self.changed = False
        tape = {"format": FORMAT, "exchanges": self.exchanges}
        return self.tapes.store(self.key, tape, self.timing)
