"""Cassettes: every exchange with a suite's MCP tool servers, recorded per case and replayed offline.

``callbench run --record DIR`` keeps what each case's calls to a live MCP server got back;
``--replay DIR`` answers the same calls from DIR without starting any server. The folder:

* ``cases/<sha256>.json`` — one **tape** per case and trial (and one per case for the gold path the
  state check replays, trial ``gold``), named by the SHA-256 of its bytes (content-addressed: a
  corrupt or truncated file no longer matches its name). It holds every call that reached the
  server, in the order it reached it — tool, arguments, the occurrence number of that same call within
  the case, and the reply (text, ``isError``, structured content) or the fault (``tool_server_lost``,
  ``tool_server_timeout``..., or ``cancelled`` when the case's time limit cut the call) — and, for a
  session that can read its state (``snapshot``), the **state history**: the state before the first
  call and after each call. A per-case server (a fresh repository, a fresh process) starts from the
  same state every time, so the ordered calls and the states after them are the server's history.
* ``index.json`` — the suites (name, suite hash, registry hash), each server's ``initialize`` answer,
  its ``tools/list`` and manifest entry, and which tape answers which ``case#trial``; the
  **cassette hash** is the SHA-256 of that content (timing left out), the one ``run.json`` names.
* ``journal.jsonl`` — while a run records, one line per finished tape (appended, never rewritten), so
  a killed ``--record`` loses at most the cases in flight; the index absorbs it when the run ends.
* Timing (milliseconds per call and per listing) is kept in the index beside the content, never in the
  hash and never in a record: a replayed call takes no time.

A call is matched by (tool, canonical JSON of its arguments, occurrence number): repeated identical
calls replay in order, and calls may come in another order than they were recorded. The case's work
folder appears in tapes as ``{workdir}`` (its arguments and answers name a per-case path that differs
between runs), put back as the replaying case's own folder.

A call the cassette does not hold is answered per the miss policy: ``strict`` raises a
:class:`~callbench.errors.ToolServerFault` of kind ``cassette_miss`` (an error record, never the
model's failure), ``live`` forwards it to the live server (started then, and only then) and adds it to
the tape, ``model-visible`` answers with an ``isError`` result the model sees (the trace call carries
the annotation ``cassette_miss``).

The harness opens a cassette (:mod:`callbench.harness.cassettes`) and wraps each suite's
:class:`~callbench.executors.mcp.McpExecutor` in a :class:`TapedExecutor`; its sessions set
:data:`~callbench.types.tape.active_tape` around each call, which ``McpExecutor.forward`` hands the
call to. The HTTP requests of a suite's own Python tools (made through
:data:`~callbench.executors.http_client.http_client`) join the same tapes, as their ``http`` list
(:mod:`callbench.executors.http_tape`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from callbench.errors import ToolBug, ToolServerFault, UserError
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome, TurnDirective
from callbench.executors.http_client import exchange_problem
from callbench.executors.mcp import McpExecutor, McpToolSource, _listing_folder
from callbench.mcp.client import McpCallResult, McpConnection, McpServerSpec, McpTool
from callbench.suites.suite import Suite
from callbench.tools.manifest import mcp_manifest
from callbench.tools.mcp_source import contracts_from_tools
from callbench.types.case import Case
from callbench.types.frozen import freeze
from callbench.types.hashing import canonical_json, sha256_of
from callbench.types.manifest import ToolSourceManifest, mcp_tool_payload
from callbench.types.messages import ToolCall
from callbench.types.tape import CasePlay, active_tape, current_play, server_replayed

FORMAT = "callbench-cassette/1"
INDEX_FILE = "index.json"
JOURNAL_FILE = "journal.jsonl"
CASES_DIR = "cases"
WORKDIR = "{workdir}"
"""What a case's work folder is written as in a tape."""
GOLD = "gold"
"""The trial slot of sessions opened outside a played case (the state check's gold replay)."""
MissPolicy = Literal["strict", "live", "model-visible"]
CANCELLED = "cancelled"
"""A recorded call cut by its case's time limit (replayed as ``tool_server_timeout``)."""
MISS_TEXT = "cassette miss: no recorded answer to this call (tool {tool!r}); the tool server was not asked"
"""What the model reads for a miss under ``--replay-miss model-visible`` (the same in every run)."""

Mode = Literal["record", "replay"]


class CassetteError(UserError):
    """A cassette folder that cannot be used (missing, corrupt, recorded for another suite): one line."""


def tape_key(case_key: str, trial: int | str) -> str:
    """``suite:id#1`` (``suite:id#gold`` for the gold path)."""
    return f"{case_key}#{trial}"


def _dumps(value: Any) -> bytes:
    """JSON as a tape stores it: key order kept (records replay byte for byte), non-ASCII escaped
    (any text a server sends, lone surrogates too, stays writable)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")


def _write_atomic(path: Path, data: bytes) -> None:
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


# --- the folder ----------------------------------------------------------------------------------


@dataclass
class Cassette:
    """One cassette folder, opened to record into or to replay from (see the module docstring)."""

    folder: Path
    mode: Mode
    miss: MissPolicy = "strict"
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)
    """Tape key -> the SHA-256 (file name) of its tape."""
    timing: dict[str, Any] = field(default_factory=dict)
    tapes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The tapes read (replay), by file hash."""
    added: int = 0
    """Tapes written by this run."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def for_replay(cls, folder: Path, miss: MissPolicy = "strict") -> Cassette:
        """Open ``folder`` to replay from; every tape is read and checked against its name now, so a
        missing folder, a corrupt index or a corrupt or truncated tape is one line before any case."""
        folder = Path(folder)
        if not folder.is_dir():
            raise CassetteError(f"--replay {folder}: no such cassette folder")
        cassette = cls(folder, "replay", miss)
        cassette._read(flag="--replay")
        for digest in set(cassette.cases.values()):
            cassette.tapes[digest] = cassette._read_tape(digest, "--replay")
        return cassette

    @classmethod
    def for_record(cls, folder: Path) -> Cassette:
        """Open ``folder`` to record into: a new folder, an empty one, or a cassette to add to (its
        tapes of the cases recorded again are replaced)."""
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise CassetteError(f"--record {folder}: not a folder")
        cassette = cls(folder, "record")
        if (folder / INDEX_FILE).exists() or (folder / JOURNAL_FILE).exists():
            cassette._read(flag="--record")
        elif folder.is_dir() and any(folder.iterdir()):
            raise CassetteError(
                f"--record {folder}: the folder holds files but no cassette ({INDEX_FILE}); "
                "record into a new or empty folder"
            )
        (folder / CASES_DIR).mkdir(parents=True, exist_ok=True)
        return cassette

    def _read(self, flag: str) -> None:
        index_path = self.folder / INDEX_FILE
        index: dict[str, Any] = {}
        if index_path.exists():
            try:
                index = json.loads(index_path.read_bytes())
            except (ValueError, OSError) as exc:
                raise CassetteError(
                    f"{flag} {self.folder}: {INDEX_FILE} is corrupt or truncated ({exc})"
                ) from None
            if not isinstance(index, dict) or index.get("format") != FORMAT:
                found = index.get("format") if isinstance(index, dict) else None
                raise CassetteError(
                    f"{flag} {self.folder}: {INDEX_FILE} is not a callbench cassette index "
                    f"(format {found!r}, expected {FORMAT!r})"
                )
            for key in ("suites", "sources", "cases", "timing"):
                if not isinstance(index.get(key, {}), dict):
                    raise CassetteError(f"{flag} {self.folder}: {INDEX_FILE}: {key!r} is not an object")
        elif flag == "--replay" and not (self.folder / JOURNAL_FILE).exists():
            raise CassetteError(f"--replay {self.folder}: not a cassette folder (no {INDEX_FILE})")
        self.suites = dict(index.get("suites", {}))
        self.sources = dict(index.get("sources", {}))
        self.cases = {str(k): str(v) for k, v in index.get("cases", {}).items()}
        self.timing = dict(index.get("timing", {}))
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
            if "suite" in entry and isinstance(entry["suite"], dict):
                name = str(entry["suite"].get("name"))
                self.suites.setdefault(name, {k: v for k, v in entry["suite"].items() if k != "name"})
            if "elapsed_ms" in entry:
                self.timing[key] = {"elapsed_ms": entry["elapsed_ms"]}

    def _read_tape(self, digest: str, flag: str) -> dict[str, Any]:
        path = self.folder / CASES_DIR / f"{digest}.json"
        try:
            raw = path.read_bytes()
        except OSError:
            raise CassetteError(f"{flag} {self.folder}: tape {CASES_DIR}/{digest}.json is missing") from None
        if hashlib.sha256(raw).hexdigest() != digest:
            raise CassetteError(
                f"{flag} {self.folder}: tape {CASES_DIR}/{digest}.json is corrupt or truncated "
                "(its content no longer matches its name); record the cassette again"
            )
        try:
            tape = json.loads(raw)
        except ValueError as exc:
            raise CassetteError(f"{flag} {self.folder}: tape {CASES_DIR}/{digest}.json: {exc}") from None
        problem = _tape_problem(tape)
        if problem:
            raise CassetteError(f"{flag} {self.folder}: tape {CASES_DIR}/{digest}.json: {problem}")
        return tape

    # -- suites and servers -------------------------------------------------------------------
    def check_suite(self, suite: Suite, source: str) -> None:
        """Replay: the cassette must hold ``suite`` with the same suite and registry hashes. Record:
        the suite is added, or must be the one already there."""
        flag = f"--{self.mode} {self.folder}"
        now = {"hash": suite.hash, "registry_hash": suite.registry.hash}
        known = self.suites.get(suite.name)
        if known is None:
            if self.mode == "replay":
                held = ", ".join(sorted(self.suites)) or "none"
                raise CassetteError(
                    f"{flag}: the cassette holds no recording of suite {suite.name!r} (it holds: {held})"
                )
            self.suites[suite.name] = {**now, "source": source}
            return
        for what, name in (("hash", "suite"), ("registry_hash", "tool registry")):
            if known.get(what) != now[what]:
                old, new = str(known.get(what) or "none")[:12], now[what][:12]
                fix = "record it again" if self.mode == "replay" else "record into a new folder"
                raise CassetteError(
                    f"{flag}: the cassette was recorded for another {name} of suite {suite.name!r} "
                    f"({name} hash {old}…, this run's {new}…); {fix}"
                )

    def add_source(
        self,
        spec: McpServerSpec,
        server: tuple[str | None, str | None, str | None],
        tools: Sequence[McpTool],
        manifest: ToolSourceManifest,
        elapsed_ms: float,
    ) -> None:
        """Record a server's ``initialize`` answer, its ``tools/list`` and its manifest entry."""
        name, version, protocol = server
        self.sources[spec.text] = {
            "initialize": {"server_name": name, "server_version": version, "protocol_version": protocol},
            "tools": [_tool_payload(t) for t in tools],
            "manifest": manifest.model_copy(update={"suites": []}).model_dump(mode="json"),
        }
        self.timing[f"listing:{spec.text}"] = {"elapsed_ms": round(elapsed_ms, 3)}
        self.write_index()

    def source(self, spec: McpServerSpec) -> dict[str, Any]:
        """The recorded listing of the server ``spec``; one line when the cassette has none."""
        found = self.sources.get(spec.text)
        if found is None:
            held = ", ".join(repr(s) for s in sorted(self.sources)) or "none"
            raise CassetteError(
                f"--replay {self.folder}: the cassette holds no listing of MCP server {spec.text!r} "
                f"(it was recorded with: {held})"
            )
        return found

    def manifest(self, spec: McpServerSpec) -> ToolSourceManifest:
        """The recorded manifest entry of the server ``spec``."""
        raw = self.source(spec).get("manifest")
        try:
            return ToolSourceManifest.model_validate(raw)
        except ValueError as exc:
            raise CassetteError(
                f"--replay {self.folder}: {INDEX_FILE}: the manifest of {spec.text!r} is unreadable ({exc})"
            ) from None

    def tools(self, spec: McpServerSpec) -> list[McpTool]:
        """The recorded ``tools/list`` of the server ``spec``."""
        listed = self.source(spec).get("tools")
        if not isinstance(listed, list) or not all(isinstance(t, dict) and "name" in t for t in listed):
            raise CassetteError(
                f"--replay {self.folder}: {INDEX_FILE}: the listing of {spec.text!r} is unreadable"
            )
        return [
            McpTool(
                name=str(t["name"]),
                description=str(t.get("description") or ""),
                input_schema=t.get("inputSchema"),
                annotations=dict(t.get("annotations") or {}),
                title=t.get("title"),
                output_schema=t.get("outputSchema"),
            )
            for t in listed
        ]

    # -- tapes --------------------------------------------------------------------------------
    def recorded(self, key: str) -> dict[str, Any] | None:
        """The tape of ``key`` (replay), or ``None`` when the cassette holds none."""
        digest = self.cases.get(key)
        return self.tapes.get(digest) if digest is not None else None

    def store(self, key: str, tape: dict[str, Any], elapsed_ms: list[float]) -> str:
        """Write ``tape`` as ``cases/<sha256>.json`` and journal it under ``key``; returns its hash."""
        data = _dumps(tape)
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / CASES_DIR / f"{digest}.json"
        with self._lock:
            if not path.exists():
                _write_atomic(path, data)
            line: dict[str, Any] = {
                "key": key,
                "file": digest,
                "elapsed_ms": [round(ms, 3) for ms in elapsed_ms],
            }
            suite = tape.get("suite")
            if isinstance(suite, str) and suite in self.suites:
                line["suite"] = {"name": suite, **self.suites[suite]}
            with open(self.folder / JOURNAL_FILE, "ab") as journal:
                journal.write(_dumps(line) + b"\n")
            self.cases[key] = digest
            self.timing[key] = {"elapsed_ms": line["elapsed_ms"]}
            self.tapes[digest] = tape
            self.added += 1
        return digest

    def write_index(self) -> None:
        """Write ``index.json`` (atomically) with every tape so far, then drop the journal it absorbed."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(
                self.folder / INDEX_FILE, json.dumps(self._index(), indent=1, sort_keys=True).encode()
            )
            (self.folder / JOURNAL_FILE).unlink(missing_ok=True)

    def _index(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "suites": self.suites,
            "sources": self.sources,
            "cases": dict(sorted(self.cases.items())),
            "timing": self.timing,
        }

    @property
    def hash(self) -> str:
        """The cassette hash: SHA-256 of its content (suites, servers, which tape answers which case),
        timing left out."""
        content = {k: v for k, v in self._index().items() if k != "timing"}
        return sha256_of(content)

    def tape(
        self,
        case_key: str,
        trial: int | str,
        workdir: Path,
        *,
        suite: str,
        source: str,
        isolation: str | None,
    ) -> CaseTape:
        """A fresh tape for one session: to record into, or (replay) the recorded one to answer from."""
        key = tape_key(case_key, trial)
        recorded = self.recorded(key) if self.mode == "replay" else None
        return CaseTape(
            self,
            key,
            workdir,
            header={
                "format": FORMAT,
                "key": case_key,
                "trial": trial,
                "suite": suite,
                "source": source,
                "isolation": isolation,
            },
            recorded=recorded,
        )


def _tool_payload(tool: McpTool) -> dict[str, Any]:
    return mcp_tool_payload(
        tool.name,
        tool.description,
        tool.input_schema,
        title=tool.title,
        output_schema=tool.output_schema,
        annotations=tool.annotations,
    )


def _tape_problem(tape: Any) -> str | None:
    """What makes ``tape`` unusable (``None``: nothing)."""
    if not isinstance(tape, dict) or tape.get("format") != FORMAT:
        return f"not a tape of format {FORMAT!r}"
    calls = tape.get("calls")
    if not isinstance(calls, list):
        return "no list of calls"
    for n, call in enumerate(calls):
        if not (
            isinstance(call, dict)
            and isinstance(call.get("tool"), str)
            and isinstance(call.get("arguments"), dict)
            and isinstance(call.get("occurrence"), int)
            and (isinstance(call.get("reply"), dict) or isinstance(call.get("fault"), dict))
        ):
            return f"call {n} is malformed"
    states = tape.get("states")
    if states is not None and not isinstance(states, list):
        return "its states are not a list"
    http = tape.get("http", [])
    if not isinstance(http, list):
        return "its HTTP exchanges are not a list"
    for n, exchange in enumerate(http):
        problem = exchange_problem(exchange)
        if problem:
            return f"HTTP exchange {n} {problem}"
    return None


# --- the case's folder in tapes ---------------------------------------------------------------


def _folders(workdir: Path) -> list[str]:
    names = {str(workdir)}
    try:
        names.add(os.path.realpath(workdir))
    except OSError:
        pass
    return sorted(names, key=len, reverse=True)  # the longer first: one may hold the other


def _swap(value: Any, old: Sequence[str], new: str) -> Any:
    """``value`` with every ``old`` text replaced by ``new`` in its strings (keys too)."""
    if isinstance(value, str):
        for text in old:
            if text and text in value:
                value = value.replace(text, new)
        return value
    if isinstance(value, dict):
        return {_swap(k, old, new): _swap(v, old, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_swap(v, old, new) for v in value]
    return value


# --- one session's tape ---------------------------------------------------------------------------


class CaseTape:
    """The calls of one session: recorded as they reach the live server, or answered from the cassette.

    An instance is what :data:`~callbench.types.tape.active_tape` holds while its session calls."""

    def __init__(
        self,
        cassette: Cassette,
        key: str,
        workdir: Path,
        *,
        header: dict[str, Any],
        recorded: dict[str, Any] | None,
    ) -> None:
        self.cassette = cassette
        self.key = key
        self.workdir = workdir
        self.folders = _folders(workdir)
        self.header = header
        self.calls: list[dict[str, Any]] = list(recorded["calls"]) if recorded else []
        self.states: list[Any] | None = (
            list(recorded["states"]) if recorded and recorded.get("states") else None
        )
        self.http: list[dict[str, Any]] = list(recorded.get("http") or []) if recorded else []
        """The HTTP exchanges of the case's Python tools (:mod:`callbench.executors.http_tape`)."""
        timing = (cassette.timing.get(key) or {}).get("elapsed_ms") if recorded else None
        self.elapsed_ms: list[float] = list(timing or [])
        self.seen: Counter[tuple[str, str]] = Counter()
        self.answers = {(c["tool"], canonical_json(c["arguments"]), c["occurrence"]): c for c in self.calls}
        self.replayed: list[int] = []
        """Sequence numbers of the recorded calls answered, in the order they were."""
        self.went_live = False
        self.miss: str | None = None
        """The miss policy that answered the last call (``None``: it was not a miss)."""
        self.changed = cassette.mode == "record"

    @property
    def replaying(self) -> bool:
        return self.cassette.mode == "replay"

    async def __call__(self, executor: Any, name: str, arguments: dict[str, Any]) -> McpCallResult:
        """Answer ``name(arguments)`` (the arguments as sent to the server)."""
        stored = _swap(arguments, self.folders, WORKDIR)
        canonical = canonical_json(stored)
        occurrence = self.seen[(name, canonical)]
        self.seen[(name, canonical)] += 1
        self.miss = None
        if self.replaying:
            found = self.answers.get((name, canonical, occurrence))
            if found is not None:
                self.replayed.append(int(found.get("seq", -1)))
                return self._answer(found)
            return await self._missed(executor, name, arguments, stored, occurrence)
        return await self._live(executor, name, arguments, stored, occurrence)

    def _answer(self, call: dict[str, Any]) -> McpCallResult:
        fault = call.get("fault")
        if fault is not None:
            raise _fault(call["tool"], _swap(fault, [WORKDIR], str(self.workdir)))
        reply = _swap(call["reply"], [WORKDIR], str(self.workdir))
        structured = reply.get("structured")
        return McpCallResult(
            text=str(reply.get("text") or ""),
            is_error=bool(reply.get("is_error")),
            structured=structured if isinstance(structured, dict) else None,
        )

    async def _missed(
        self, executor: Any, name: str, arguments: dict[str, Any], stored: dict[str, Any], occurrence: int
    ) -> McpCallResult:
        policy = self.cassette.miss
        if policy == "live":
            self.miss, self.went_live, self.changed = "live", True, True
            return await self._live(executor, name, arguments, stored, occurrence)
        if policy == "model-visible":
            self.miss = "model-visible"
            return McpCallResult(text=MISS_TEXT.format(tool=name), is_error=True)
        nth = f" (call {occurrence + 1} of it with these arguments)" if occurrence else ""
        raise ToolServerFault(
            "cassette_miss",
            f"the cassette holds no answer to {name}{nth} in {self.key}: it was not recorded "
            "(--replay-miss strict; live forwards such calls to the server)",
        )

    async def _live(
        self, executor: Any, name: str, arguments: dict[str, Any], stored: dict[str, Any], occurrence: int
    ) -> McpCallResult:
        """Send the call to the live server through ``executor`` and keep what came back."""
        call: dict[str, Any] = {
            "seq": len(self.calls),
            "tool": name,
            "arguments": stored,
            "occurrence": occurrence,
        }
        started = time.perf_counter()
        token = active_tape.set(None)  # the executor's forward goes to the server this time
        try:
            reply: McpCallResult = await executor.forward(name, arguments)
        except ToolServerFault as exc:
            call["fault"] = {"kind": exc.kind, "message": str(exc)}
            raise
        except ToolBug as exc:
            call["fault"] = {"kind": "tool_bug", "error_type": exc.error_type, "message": str(exc)}
            raise
        except asyncio.CancelledError:
            call["fault"] = {"kind": CANCELLED, "message": "the case's time limit ran out during this call"}
            raise
        else:
            call["reply"] = {"text": reply.text, "is_error": reply.is_error, "structured": reply.structured}
            return reply
        finally:
            active_tape.reset(token)
            self.elapsed_ms.append((time.perf_counter() - started) * 1000)
            self.calls.append(_swap(call, self.folders, WORKDIR))

    # -- state ------------------------------------------------------------------------------
    def note_state(self, state: Any) -> None:
        """Record mode: the session's state now (before the first call, or after a call)."""
        if self.states is None:
            self.states = []
        self.states.append(_swap(_plain(state), self.folders, WORKDIR))

    def replayed_state(self) -> Any:
        """Replay: the recorded state after the calls answered so far, when they are the recorded
        calls in their recorded order (else the state is not known: ``None``)."""
        if self.states is None or self.went_live:
            return None
        n = len(self.replayed)
        if self.replayed != list(range(n)) or n >= len(self.states):
            return None
        state = self.states[n]
        return None if state is None else freeze(_swap(state, [WORKDIR], str(self.workdir)))

    def save(self) -> None:
        """Write the tape when it holds anything new (a recording, or live answers to misses)."""
        if not self.changed:
            return
        tape: dict[str, Any] = {**self.header, "calls": self.calls, "states": self.states}
        if self.http:  # only then: tapes without HTTP exchanges keep their bytes (and their hashes)
            tape["http"] = self.http
        self.cassette.store(self.key, tape, self.elapsed_ms)
        self.changed = False


def _plain(value: Any) -> Any:
    """A snapshot as plain JSON data (frozen dicts and lists become plain ones)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _fault(tool: str, fault: dict[str, Any]) -> Exception:
    """The exception a recorded fault is replayed as."""
    kind, message = str(fault.get("kind")), str(fault.get("message") or "")
    if kind == "tool_bug":
        bug = ToolBug(tool, RuntimeError(message), "")
        bug.error_type = str(fault.get("error_type") or "RuntimeError")
        bug.args = (message,)
        return bug
    if kind == CANCELLED:
        return ToolServerFault("tool_server_timeout", f"replayed: {message} when it was recorded")
    if kind in ("tool_server_timeout", "tool_server_lost", "tool_server_bad_result", "tool_server_too_large"):
        return ToolServerFault(kind, message)  # type: ignore[arg-type]  # one of the kinds just listed
    return ToolServerFault("tool_server_lost", message)


# --- executors and sessions --------------------------------------------------------------------


class TapedExecutor(Executor):
    """A suite's MCP executor with a cassette: each session records into, or replays from, its tape.

    Sessions are the wrapped executor's own (its argument and text mapping, its state), so a suite's
    executor subclass (``mcp-git``) is taped as it is."""

    def __init__(self, inner: McpExecutor, cassette: Cassette, suite: str) -> None:
        self.inner = inner
        self.cassette = cassette
        self.suite = suite
        self.name = inner.name

    @property
    def spec(self) -> McpServerSpec:
        return self.inner.spec

    def __getattr__(self, name: str) -> Any:
        # what else a caller asks of the MCP executor (its isolation, time-outs...) is the wrapped one's
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def plan_cases(self, cases: int, concurrency: int) -> None:
        if self.cassette.mode == "record":  # a replay starts no server ahead (a live miss starts one)
            self.inner.plan_cases(cases, concurrency)

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        play: CasePlay | None = current_play.get()
        trial: int | str = play.trial if play is not None and play.key == case.key else GOLD
        isolation = getattr(self.inner, "isolation", None)
        tape = self.cassette.tape(
            case.key,
            trial,
            workdir,
            suite=suite.name,
            source=self.inner.spec.text,
            isolation=str(isolation) if isolation is not None else None,
        )
        never_live = self.cassette.mode == "replay" and self.cassette.miss != "live"
        token = server_replayed.set(never_live)
        try:
            inner = self.inner.start(case, workdir, suite)
        finally:
            server_replayed.reset(token)
        kind = TapedCheckingSession if inner.sees_invalid_calls else TapedSession
        session = kind(inner, tape)
        if self.cassette.mode == "record" and session.keeps_state:
            tape.note_state(session.inner_snapshot())
        return session

    async def aclose(self) -> None:
        await self.inner.aclose()


class TapedSession(ExecutorSession):
    """A session whose calls go through its tape; every other hook is the wrapped session's."""

    def __init__(self, inner: ExecutorSession, tape: CaseTape) -> None:
        self.inner = inner
        self.tape = tape
        self.keeps_state = type(inner).snapshot is not ExecutorSession.snapshot
        """Whether the session can say its state (a state history is recorded only then)."""

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        tape = self.tape
        before = len(tape.calls)
        token = active_tape.set(tape)
        try:
            outcome = await self.inner.call(name, arguments)
        except asyncio.CancelledError:
            raise
        except BaseException:
            self._after_call(before)
            raise
        finally:
            active_tape.reset(token)
        self._after_call(before)
        if tape.miss is not None:
            outcome.annotations["cassette_miss"] = tape.miss
            tape.miss = None
        return outcome

    def _after_call(self, before: int) -> None:
        tape = self.tape
        if len(tape.calls) > before and self.keeps_state and (not tape.replaying):
            tape.note_state(self.inner_snapshot())

    def inner_snapshot(self) -> Any:
        try:
            return self.inner.snapshot()
        except Exception:  # noqa: BLE001 - a state that cannot be read is not known, never a failure
            return None

    async def begin_round(self, round_index: int, calls: Sequence[ToolCall]) -> None:
        await self.inner.begin_round(round_index, calls)

    def episode_over(self) -> bool:
        return self.inner.episode_over()

    async def after_turn(self, had_calls: bool) -> TurnDirective:
        return await self.inner.after_turn(had_calls)

    def snapshot(self) -> dict[str, Any] | None:
        if self.tape.replaying:
            state = self.tape.replayed_state()
            return state if isinstance(state, dict) else None
        return self.inner.snapshot()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.tape.save()

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self.tape.save()


class TapedCheckingSession(TapedSession):
    """:class:`TapedSession` of a session that answers schema-invalid calls itself."""

    sees_invalid_calls = True


# --- tool listings -----------------------------------------------------------------------------


@dataclass
class Listing:
    """What a server said when listed: its ``initialize`` identity and ``tools/list``."""

    spec: McpServerSpec
    server: tuple[str | None, str | None, str | None]
    tools: list[McpTool]
    elapsed_ms: float

    def manifest(self) -> ToolSourceManifest:
        return mcp_manifest(self.spec, self.server, self.tools)


async def list_server(spec: McpServerSpec, **connection_options: Any) -> Listing:
    """Connect to the server, keep its identity and its tools, disconnect (what ``--record`` keeps of
    the listing a run makes before its cases)."""
    started = time.perf_counter()
    with _listing_folder(spec) as listed:  # a command naming {workdir} is listed in a folder of its own
        async with McpConnection(listed, **connection_options) as connection:
            server = connection.server_info()
            tools = await connection.list_tools()
    return Listing(spec, server, tools, (time.perf_counter() - started) * 1000)


def record_listing(cassette: Cassette, listing: Listing) -> ToolSourceManifest:
    """Keep ``listing`` in the cassette; its manifest entry."""
    manifest = listing.manifest()
    cassette.add_source(listing.spec, listing.server, listing.tools, manifest, listing.elapsed_ms)
    return manifest


def replayed_tool_source(cassette: Cassette, spec: McpServerSpec) -> McpToolSource:
    """``--tools mcp:SPEC`` under ``--replay``: the registry from the recorded listing, the recorded
    manifest, and an executor that starts the server only for a ``live`` miss."""
    registry, notes = contracts_from_tools(spec.text, cassette.tools(spec))
    return McpToolSource(spec=spec, registry=registry, notes=notes, manifest=cassette.manifest(spec))


def recorded_tool_source(cassette: Cassette, listing: Listing) -> McpToolSource:
    """``--tools mcp:SPEC`` under ``--record``: the live listing, kept in the cassette."""
    registry, notes = contracts_from_tools(listing.spec.text, listing.tools)
    manifest = record_listing(cassette, listing)
    return McpToolSource(spec=listing.spec, registry=registry, notes=notes, manifest=manifest)
