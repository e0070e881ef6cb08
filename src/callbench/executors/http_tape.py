"""HTTP exchanges on a case's tape: the cassette of ``--record``/``--replay`` for tools that call web
services through :data:`~callbench.executors.http_client.http_client`.

The cassette (:mod:`callbench.executors.cassette`) keeps one tape per case and trial; a suite whose
tools run in callbench's process (Python functions: the ``python-bindings`` executor of a path
suite, a plugin's ``PythonExecutor``, any executor but the synthetic ``contract`` one) gets its
executor wrapped in an :class:`HttpTapedExecutor`. Its sessions set
:data:`~callbench.executors.http_client.active_http_tape` around each call, and the client hands each
request to the case's :class:`HttpTape`:

* ``--record``: the request goes to the network and the exchange joins the tape's ``http`` list;
* ``--replay``: the recorded response (or recorded fault) is the answer and nothing is sent; a request
  the tape does not hold follows ``--replay-miss`` like an MCP call: ``strict`` makes the case an
  error record ``cassette_miss`` (even when the tool catches the exception: the miss is the
  harness's, never the model's), ``live`` sends it and adds it to the tape, ``model-visible`` raises
  :class:`~callbench.errors.ToolError` with :data:`HTTP_MISS_TEXT` (the model reads it, unless the
  tool handles it). A missed call carries the trace annotation ``cassette_miss``.

An exchange on the tape (``http`` beside ``calls``; a tape is written only when it holds one)::

    {"seq": 0, "method": "GET", "url": "http://127.0.0.1:8123/search?key=&q=paris",
     "body_sha256": null, "occurrence": 0,
     "request": {"headers": {"user-agent": "callbench-http/1", "x-api-key": ""}},
     "response": {"status": 200, "url": "...", "headers": {"content-type": "application/json"},
                  "text": "{...}"}}

``fault`` (``kind``, ``message``) takes the place of ``response`` when no answer came. The tools
themselves still run on replay (only their HTTP traffic is replayed), so their state is their own.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

from callbench.errors import ToolError, ToolServerFault
from callbench.executors.base import Executor, ExecutorSession, ToolOutcome, resolve_executor
from callbench.executors.cassette import CaseTape, Cassette, WrappedExecutor, WrappedSession
from callbench.executors.http_client import (
    GoLive,
    HttpResponse,
    TapeRequest,
    active_http_tape,
    from_entry,
    replay_fault,
)
from callbench.suites.suite import Suite
from callbench.types.case import Case

HTTP_MISS_TEXT = "cassette miss: no recorded answer to {method} {url}; the service was not asked"
"""What a tool raises (as ``ToolError``) for a miss under ``--replay-miss model-visible``."""
SYNTHETIC = "contract"
"""The executor whose answers are synthetic: no code of the suite's runs, so nothing is taped."""


class HttpTape:
    """One session's HTTP exchanges, on its case's tape (the hook the client calls)."""

    def __init__(self, tape: CaseTape) -> None:
        self.tape = tape
        self.lock = threading.Lock()
        self.seen: Counter[tuple[str, str, str | None]] = Counter()
        self.answers = {(e["method"], e["url"], e.get("body_sha256"), e["occurrence"]): e for e in tape.http}
        self.miss: str | None = None
        """The miss policy that answered a request of the call in progress (``None``: none missed)."""
        self.held: ToolServerFault | None = None
        """A ``strict`` miss of the call in progress: the call's outcome, whatever the tool did with it."""

    def answer(self, request: TapeRequest) -> HttpResponse | GoLive:
        with self.lock:
            occurrence = self.seen[request.key]
            self.seen[request.key] += 1
        if not self.tape.replaying:
            return GoLive(occurrence)
        found = self.answers.get((*request.key, occurrence))
        if found is not None:
            if isinstance(found.get("fault"), dict):
                raise replay_fault(found["fault"])
            return from_entry(found["response"])
        policy = self.tape.cassette.miss
        if policy == "live":
            self.miss = "live"
            return GoLive(occurrence)
        if policy == "model-visible":
            self.miss = "model-visible"
            raise ToolError(HTTP_MISS_TEXT.format(method=request.method, url=request.url))
        nth = f" (request {occurrence + 1} of it)" if occurrence else ""
        fault = ToolServerFault(
            "cassette_miss",
            f"the cassette holds no answer to {request.method} {request.url}{nth} in {self.tape.key}: "
            "it was not recorded (--replay-miss strict; live sends such requests)",
        )
        self.held = fault
        raise fault

    def keep(
        self,
        request: TapeRequest,
        live: GoLive,
        response: dict[str, Any] | None,
        fault: dict[str, Any] | None,
        elapsed_ms: float,
    ) -> None:
        entry: dict[str, Any] = {
            "seq": 0,
            "method": request.method,
            "url": request.url,
            "body_sha256": request.body_sha256,
            "occurrence": live.occurrence,
            "request": {"headers": request.headers},
        }
        if request.body is not None:
            entry["request"]["body"] = request.body
        if response is not None:
            entry["response"] = response
        else:
            entry["fault"] = fault
        with self.lock:
            entry["seq"] = len(self.tape.http)
            self.tape.http.append(entry)
            self.tape.elapsed_ms.append(elapsed_ms)
            self.tape.changed = True

    def take_miss(self) -> str | None:
        miss, self.miss = self.miss, None
        return miss

    def take_held(self) -> ToolServerFault | None:
        held, self.held = self.held, None
        return held


class HttpTapedExecutor(WrappedExecutor):
    """A suite's executor whose sessions' HTTP requests go through their case's tape."""

    inner: Executor

    def __init__(self, inner: Executor, cassette: Cassette, suite: str) -> None:
        super().__init__(inner, cassette, suite)

    @property
    def source(self) -> str:
        """What a tape and the cassette's index name as the suite's tool source."""
        return f"executor:{self.inner.name}"

    def plan_cases(self, cases: int, concurrency: int) -> None:
        self.inner.plan_cases(cases, concurrency)

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        tape = self.cassette.tape(
            case.key, self.trial(case), workdir, suite=suite.name, source=self.source, isolation=None
        )
        inner = self.inner.start(case, workdir, suite)
        kind = HttpTapedCheckingSession if inner.sees_invalid_calls else HttpTapedSession
        return kind(inner, HttpTape(tape))


class HttpTapedSession(WrappedSession):
    """A session whose calls run with their case's tape active; every hook is the wrapped session's."""

    def __init__(self, inner: ExecutorSession, http: HttpTape) -> None:
        super().__init__(inner)
        self.http = http

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        token = active_http_tape.set(self.http)
        try:
            outcome = await self.inner.call(name, arguments)
        except Exception as exc:
            held = self.http.take_held()
            if held is not None and held is not exc:
                raise held from exc
            raise
        finally:
            active_http_tape.reset(token)
        held = self.http.take_held()
        if held is not None:  # the tool caught the miss: it is still not the model's to see
            raise held
        miss = self.http.take_miss()
        if miss is not None:
            outcome.annotations["cassette_miss"] = miss
        return outcome

    def _save(self) -> None:
        tape = self.http.tape
        if tape.http and tape.changed:  # a case that sent nothing leaves no tape
            tape.save()


class HttpTapedCheckingSession(HttpTapedSession):
    """:class:`HttpTapedSession` of a session that answers schema-invalid calls itself."""

    sees_invalid_calls = True


def tape_http_tools(cassette: Cassette, suite: Suite) -> bool:
    """Wrap ``suite``'s executor so its tools' HTTP requests are recorded or replayed; ``False`` when
    the suite runs no tool code of its own (the synthetic ``contract`` executor)."""
    from callbench.executors.contract import ContractExecutor

    executor = suite.executor
    if isinstance(executor, HttpTapedExecutor):  # a Suite object run before with a cassette
        executor = executor.inner
    if executor == SYNTHETIC or isinstance(executor, ContractExecutor):
        return False
    if isinstance(executor, str):
        executor = resolve_executor(executor)
    wrapped = HttpTapedExecutor(executor, cassette, suite.name)
    if cassette.mode == "record" or suite.name in cassette.suites:
        cassette.check_suite(suite, wrapped.source)  # recorded for another version of it: one line
    # else a replay of a cassette that never held the suite: its tools may send nothing at all (a
    # recording of a run's MCP servers or of an agent's model); any request it sends is a miss
    suite.executor = wrapped
    return True


__all__ = [
    "HTTP_MISS_TEXT",
    "HttpTape",
    "HttpTapedExecutor",
    "HttpTapedSession",
    "tape_http_tools",
]
