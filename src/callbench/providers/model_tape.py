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

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from callbench.errors import UserError
from callbench.executors.tape_folder import (
    INDEX_FILE,
    JOURNAL_FILE,
    TapeFolder,
    dumps,
    tape_key,
)
from callbench.executors.tape_folder import swap as swap  # what the model proxy swaps placeholders with
from callbench.secrets import scrub_data
from callbench.types.hashing import canonical_json, sha256_of

FORMAT = "callbench-model-tape/1"
INDEX_FORMAT = "callbench-model-tapes/1"
FOLDER = "model"
"""The subfolder of the ``--record``/``--replay`` folder that holds the model tapes."""
VOLATILE_KEYS = frozenset({"user", "metadata", "prompt_cache_key", "safety_identifier"})
"""Top-level request fields left out of the match: they identify the caller or the session, not what
is asked (an SDK may fill them with a fresh id per run)."""
CREDENTIAL_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})
KEPT_HEADERS = frozenset({"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta"})
"""Request headers a tape keeps (content negotiation; credentials are kept blank, others dropped)."""

MissPolicy = Literal["strict", "live"]


class ModelTapeError(UserError):
    """A model tape folder that cannot be used (missing, corrupt): one line."""


# --- matching ---------------------------------------------------------------------------------


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
class ModelTapes(TapeFolder):
    """The ``model/`` folder of a recording, opened to record into or to replay from."""

    error: ClassVar[type[UserError]] = ModelTapeError
    index_format: ClassVar[str] = INDEX_FORMAT
    index_what: ClassVar[str] = "an index of model tapes"

    miss: MissPolicy = "strict"

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
        tapes._open_replay(flag)
        return tapes

    @classmethod
    def for_record(cls, root: Path, flag: str = "--record") -> ModelTapes:
        """Open ``root/model`` to record into (a new folder, or a recording to add to: the tapes of the
        cases recorded again are replaced)."""
        folder = Path(root) / FOLDER
        if Path(root).exists() and not Path(root).is_dir():
            raise ModelTapeError(f"{flag} {root}: not a folder")
        tapes = cls(folder, "record")
        tapes._open_record(flag)
        return tapes

    def _objects_problem(self, key: str) -> str:
        return "'cases' or 'timing' is not an object"

    def _take_entry(self, key: str, entry: dict[str, Any]) -> None:
        self.timing[key] = entry.get("timing", [])

    def _tape_problem(self, tape: Any) -> str | None:
        return _tape_problem(tape)

    # -- tapes ---------------------------------------------------------------------------------
    def tape(self, case_key: str, trial: int | str) -> CaseModelTape:
        """The tape of one case and trial: empty (record), or the recorded one to answer from."""
        key = tape_key(case_key, trial)
        recorded = self.recorded(key) if self.mode == "replay" else None
        timing = self.timing.get(key) if recorded is not None else None
        return CaseModelTape(self, key, recorded, timing if isinstance(timing, list) else [])

    def store(self, key: str, tape: dict[str, Any], timing: list[dict[str, Any]]) -> str:
        """Write ``tape`` as ``cases/<sha256>.json`` and journal it under ``key``; returns its hash."""
        return self._store(key, tape, dumps(scrub_data(tape)), {"timing": timing}, timing)


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
