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
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from callbench.errors import ToolBug, ToolServerFault, UserError
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome, TurnDirective
from callbench.executors.http_client import exchange_problem
from callbench.executors.mcp import McpExecutor, McpToolSource, _listing_folder
from callbench.executors.tape_folder import CASES_DIR as CASES_DIR  # the folder's names, as tests know them
from callbench.executors.tape_folder import INDEX_FILE, TapeFolder, dumps, swap, tape_key
from callbench.executors.tape_folder import JOURNAL_FILE as JOURNAL_FILE
from callbench.mcp.client import McpCallResult, McpConnection, McpServerSpec, McpTool
from callbench.suites.suite import Suite
from callbench.tools.manifest import mcp_manifest
from callbench.tools.mcp_source import contracts_from_tools
from callbench.types.case import Case
from callbench.types.frozen import freeze
from callbench.types.hashing import canonical_json
from callbench.types.manifest import ToolSourceManifest, mcp_tool_payload
from callbench.types.messages import ToolCall
from callbench.types.tape import CasePlay, active_tape, current_play, server_replayed

FORMAT = "callbench-cassette/1"
WORKDIR = "{workdir}"
"""What a case's work folder is written as in a tape."""
GOLD = "gold"
"""The trial slot of sessions opened outside a played case (the state check's gold replay)."""
MissPolicy = Literal["strict", "live", "model-visible"]
CANCELLED = "cancelled"
"""A recorded call cut by its case's time limit (replayed as ``tool_server_timeout``)."""
MISS_TEXT = "cassette miss: no recorded answer to this call (tool {tool!r}); the tool server was not asked"
"""What the model reads for a miss under ``--replay-miss model-visible`` (the same in every run)."""


class CassetteError(UserError):
    """A cassette folder that cannot be used (missing, corrupt, recorded for another suite): one line."""


# --- the folder ----------------------------------------------------------------------------------


@dataclass
class Cassette(TapeFolder):
    """One cassette folder, opened to record into or to replay from (see the module docstring)."""

    error: ClassVar[type[UserError]] = CassetteError
    index_format: ClassVar[str] = FORMAT
    index_what: ClassVar[str] = "a callbench cassette index"
    index_objects: ClassVar[tuple[str, ...]] = ("suites", "sources", "cases", "timing")
    record_again: ClassVar[str] = "record the cassette again"
    sort_index: ClassVar[bool] = True

    miss: MissPolicy = "strict"
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def for_replay(cls, folder: Path, miss: MissPolicy = "strict") -> Cassette:
        """Open ``folder`` to replay from; every tape is read and checked against its name now, so a
        missing folder, a corrupt index or a corrupt or truncated tape is one line before any case."""
        folder = Path(folder)
        if not folder.is_dir():
            raise CassetteError(f"--replay {folder}: no such cassette folder")
        cassette = cls(folder, "replay", miss)
        cassette._open_replay("--replay")
        return cassette

    @classmethod
    def for_record(cls, folder: Path) -> Cassette:
        """Open ``folder`` to record into: a new folder, an empty one, or a cassette to add to (its
        tapes of the cases recorded again are replaced)."""
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise CassetteError(f"--record {folder}: not a folder")
        cassette = cls(folder, "record")
        if not cassette.holds_index() and folder.is_dir() and any(folder.iterdir()):
            raise CassetteError(
                f"--record {folder}: the folder holds files but no cassette ({INDEX_FILE}); "
                "record into a new or empty folder"
            )
        cassette._open_record("--record")
        return cassette

    def _read(self, flag: str) -> None:
        if flag == "--replay" and not self.holds_index():
            raise CassetteError(f"--replay {self.folder}: not a cassette folder (no {INDEX_FILE})")
        super()._read(flag)

    def _take_index(self, index: dict[str, Any]) -> None:
        self.suites = dict(index.get("suites", {}))
        self.sources = dict(index.get("sources", {}))
        super()._take_index(index)

    def _take_entry(self, key: str, entry: dict[str, Any]) -> None:
        if "suite" in entry and isinstance(entry["suite"], dict):
            name = str(entry["suite"].get("name"))
            self.suites.setdefault(name, {k: v for k, v in entry["suite"].items() if k != "name"})
        if "elapsed_ms" in entry:
            self.timing[key] = {"elapsed_ms": entry["elapsed_ms"]}

    def _tape_problem(self, tape: Any) -> str | None:
        return _tape_problem(tape)

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
    def store(self, key: str, tape: dict[str, Any], elapsed_ms: list[float]) -> str:
        """Write ``tape`` as ``cases/<sha256>.json`` and journal it under ``key``; returns its hash."""
        line: dict[str, Any] = {"elapsed_ms": [round(ms, 3) for ms in elapsed_ms]}
        suite = tape.get("suite")
        if isinstance(suite, str) and suite in self.suites:
            line["suite"] = {"name": suite, **self.suites[suite]}
        return self._store(key, tape, dumps(tape), line, {"elapsed_ms": line["elapsed_ms"]})

    def _index(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "suites": self.suites,
            "sources": self.sources,
            "cases": dict(sorted(self.cases.items())),
            "timing": self.timing,
        }

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
    return swap(value, [(text, new) for text in old])


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


class WrappedExecutor(Executor):
    """A suite's executor with a cassette (the base of :class:`TapedExecutor` and of
    :class:`~callbench.executors.http_tape.HttpTapedExecutor`): what a caller asks of it beyond
    starting sessions is the wrapped executor's."""

    def __init__(self, inner: Any, cassette: Cassette, suite: str) -> None:
        self.inner = inner
        self.cassette = cassette
        self.suite = suite
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        # what else a caller asks of the wrapped executor (its isolation, time-outs...) is its own
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @staticmethod
    def trial(case: Case) -> int | str:
        """The trial slot of a session of ``case``: the played trial, or the gold path's."""
        play: CasePlay | None = current_play.get()
        return play.trial if play is not None and play.key == case.key else GOLD

    async def aclose(self) -> None:
        await self.inner.aclose()


class TapedExecutor(WrappedExecutor):
    """A suite's MCP executor with a cassette: each session records into, or replays from, its tape.

    Sessions are the wrapped executor's own (its argument and text mapping, its state), so a suite's
    executor subclass (``mcp-git``) is taped as it is."""

    inner: McpExecutor

    def __init__(self, inner: McpExecutor, cassette: Cassette, suite: str) -> None:
        super().__init__(inner, cassette, suite)

    @property
    def spec(self) -> McpServerSpec:
        return self.inner.spec

    def plan_cases(self, cases: int, concurrency: int) -> None:
        if self.cassette.mode == "record":  # a replay starts no server ahead (a live miss starts one)
            self.inner.plan_cases(cases, concurrency)

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        isolation = getattr(self.inner, "isolation", None)
        tape = self.cassette.tape(
            case.key,
            self.trial(case),
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


class WrappedSession(ExecutorSession):
    """A session around another (the base of :class:`TapedSession` and of
    :class:`~callbench.executors.http_tape.HttpTapedSession`): every hook is the wrapped session's,
    and what the session kept is saved (:meth:`_save`) when it closes."""

    def __init__(self, inner: ExecutorSession) -> None:
        self.inner = inner

    async def begin_round(self, round_index: int, calls: Sequence[ToolCall]) -> None:
        await self.inner.begin_round(round_index, calls)

    def episode_over(self) -> bool:
        return self.inner.episode_over()

    async def after_turn(self, had_calls: bool) -> TurnDirective:
        return await self.inner.after_turn(had_calls)

    def snapshot(self) -> dict[str, Any] | None:
        return self.inner.snapshot()

    def _save(self) -> None:
        """Write what the session kept (when it closes, whatever the wrapped session's close did)."""

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self._save()

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self._save()


class TapedSession(WrappedSession):
    """A session whose calls go through its tape; every other hook is the wrapped session's."""

    def __init__(self, inner: ExecutorSession, tape: CaseTape) -> None:
        super().__init__(inner)
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

    def snapshot(self) -> dict[str, Any] | None:
        if self.tape.replaying:
            state = self.tape.replayed_state()
            return state if isinstance(state, dict) else None
        return self.inner.snapshot()

    def _save(self) -> None:
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
