"""The agent under test: the user's own agent application, run once per case (``--agent SPEC``).

Three forms of ``SPEC``:

* ``cmd:COMMAND`` runs ``COMMAND`` (shell-split, no shell) per case with the request in environment
  variables and a JSON file; the answer is what it writes to ``CALLBENCH_ANSWER_FILE``, else its stdout;
* ``http:URL`` POSTs the request JSON to the user's agent service; the answer is the reply's
  ``"answer"`` field (JSON) or its body (text);
* ``py:module:function`` awaits ``function(instruction, mcp_url)`` in this process, on an event loop
  of its own in a thread of its own per case (plus ``system_prompt=``, ``case_id=``, ``workdir=``,
  ``messages=``, ``turn=``... for the ones it names as parameters).

In a conversation case the agent is run once per agent turn, with the user's latest turn as the
instruction and the conversation so far as ``messages`` (:mod:`callbench.harness.agent_episode`).

The agent is the system under test: a crash, a non-zero exit, a hang past the case's time limit or an
empty answer is a scored outcome (:class:`AgentResult`), never an error record. Only failures that say
nothing about the agent (its service refusing connections mid-run) raise :class:`AgentUnreachable`,
which the engine turns into an error record that ``--resume`` re-runs. See docs/agents.md.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from callbench.errors import ConfigError, ProviderError, missing_extra

AgentOutcome = Literal["answer", "agent_crashed", "agent_timeout", "no_answer"]
KINDS = ("cmd", "http", "py")


class AgentUnreachable(ProviderError):
    """The agent service could not be reached mid-run: infrastructure, not the agent's answer."""


@dataclass(frozen=True)
class AgentRequest:
    """What an agent under test is given for one case (the JSON file holds exactly these fields)."""

    instruction: str
    system_prompt: str
    mcp_url: str
    mcp_stdio: list[str]
    """argv of a stdio MCP server bridged to the same case session."""
    case_id: str
    workdir: str
    answer_file: str
    model_url: str | None = None
    """With callbench's model proxy on: the case's OpenAI-compatible base URL (``.../case/TOKEN/v1``)."""
    anthropic_url: str | None = None
    """With callbench's model proxy on: the case's Anthropic base URL (``.../case/TOKEN/anthropic``)."""
    messages: list[dict[str, Any]] | None = None
    """Conversation cases: the conversation so far, ending with the user turn that is ``instruction``
    (``role`` ``user``/``assistant``/``tool``; the agent's earlier calls as ``tool_calls`` with what it
    heard). ``None`` for a single-instruction case (docs/agents.md, "Conversations")."""
    turn: int | None = None
    """Conversation cases: the agent's turn, 1 for its first (``None`` for a single-instruction case)."""
    otel_endpoint: str | None = None
    """With ``--agent-otel``: the case's OTLP/HTTP endpoint for the agent's own spans (the base an OTLP
    exporter adds ``/v1/traces`` to; ``OTEL_EXPORTER_OTLP_ENDPOINT`` for a ``cmd:`` agent)."""

    def environment(self) -> dict[str, str]:
        """The ``CALLBENCH_*`` variables a ``cmd:`` agent receives (and, with the model proxy on,
        ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL`` pointing at it; docs/agents.md)."""
        env = {
            "CALLBENCH_INSTRUCTION": self.instruction,
            "CALLBENCH_SYSTEM_PROMPT": self.system_prompt,
            "CALLBENCH_MCP_URL": self.mcp_url,
            "CALLBENCH_MCP_STDIO": shlex.join(self.mcp_stdio),
            "CALLBENCH_CASE_ID": self.case_id,
            "CALLBENCH_WORKDIR": self.workdir,
            "CALLBENCH_ANSWER_FILE": self.answer_file,
        }
        if self.model_url is not None:
            env.update(CALLBENCH_MODEL_URL=self.model_url, OPENAI_BASE_URL=self.model_url)
        if self.anthropic_url is not None:
            env.update(CALLBENCH_ANTHROPIC_URL=self.anthropic_url, ANTHROPIC_BASE_URL=self.anthropic_url)
        if self.turn is not None:  # the conversation itself is in the request file (no size limit there)
            env["CALLBENCH_TURN"] = str(self.turn)
        if self.otel_endpoint is not None:  # --agent-otel: the agent's spans go to its case's endpoint
            env.update(otel_environment(self.otel_endpoint))
        return env

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


SEMCONV_OPT_IN = ("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
"""Asks instrumentations for the newest GenAI attribute names (added to what the variable holds)."""


def otel_environment(endpoint: str) -> dict[str, str]:
    """The OpenTelemetry variables of a ``cmd:`` agent under ``--agent-otel``: its spans over OTLP/HTTP
    (protobuf) to ``endpoint`` (and ``CALLBENCH_OTEL_ENDPOINT``), the newest GenAI conventions asked for."""
    name, value = SEMCONV_OPT_IN
    given = [part.strip() for part in os.environ.get(name, "").split(",") if part.strip()]
    return {
        "CALLBENCH_OTEL_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint.rstrip("/") + "/v1/traces",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        name: ",".join(given if value in given else [*given, value]),
    }


@dataclass
class AgentResult:
    """How one agent run ended; recorded on the trace as ``agent``."""

    outcome: AgentOutcome
    answer: str = ""
    exit_code: int | None = None
    stderr_tail: str = ""
    message: str = ""
    duration_ms: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


def _tail(text: str | bytes) -> str:
    """The agent's stderr as text, whole: the harness keeps a head and a tail of it in the record,
    within the run's stderr size limit (``--size-limit stderr=``)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return text


def _answered(answer: str, result: AgentResult) -> AgentResult:
    """``no_answer`` when the agent finished without a final answer (blank text)."""
    result.answer = answer
    if not answer.strip() and result.outcome == "answer":
        result.outcome = "no_answer"
        result.message = result.message or "the agent finished without an answer"
    return result


class AgentRunner(ABC):
    """Runs the agent under test for one case (once per agent turn of a conversation case)."""

    kind: str

    def __init__(self, spec: str, target: str) -> None:
        self.spec = spec
        self.target = target

    @abstractmethod
    async def run(self, request: AgentRequest, timeout_s: float) -> AgentResult:
        """Run the agent on ``request``; a time limit that runs out is ``agent_timeout``."""

    @abstractmethod
    def preflight(self) -> None:
        """Check, before any case runs, that the agent can be started at all (one-line ConfigError)."""

    def describe(self) -> dict[str, Any]:
        return {"provider": "agent-under-test", "kind": self.kind, "agent": self.spec}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release what the runner keeps for the whole run (connections); called once at its end."""


class CommandAgent(AgentRunner):
    """``cmd:COMMAND``: one process per case."""

    kind = "cmd"

    def __init__(self, spec: str, target: str) -> None:
        super().__init__(spec, target)
        try:
            self.argv = shlex.split(target)
        except ValueError as exc:
            raise ConfigError(f"--agent {spec!r}: cannot split the command line: {exc}") from None
        if not self.argv:
            raise ConfigError(f"--agent {spec!r}: no command after 'cmd:'")

    def preflight(self) -> None:
        program = self.argv[0]
        found = (
            shutil.which(program) if os.sep not in program else (program if Path(program).exists() else None)
        )
        if found is None:
            raise ConfigError(
                f"--agent {self.spec!r}: command {program!r} not found (not on PATH, no such file)"
            )
        script = _python_script(found, self.argv[1:])
        if script is not None:
            missing = _missing_imports(found, script)
            if missing:
                same = Path(found).resolve() == Path(sys.executable).resolve()
                where = "" if same else f" for {found}"
                raise missing_extra(f"--agent {self.spec!r}: {script.name}", missing[0], where=where)

    async def run(self, request: AgentRequest, timeout_s: float) -> AgentResult:
        Path(request.workdir).mkdir(parents=True, exist_ok=True)
        # A conversation runs the agent once per turn in the same folder: a turn that answers on
        # stdout must not be read the answer file an earlier turn wrote.
        Path(request.answer_file).unlink(missing_ok=True)
        request_file = Path(request.workdir) / ".callbench-request.json"
        request_file.write_text(json.dumps(request.to_json(), ensure_ascii=False), encoding="utf-8")
        env = {**os.environ, **request.environment(), "CALLBENCH_REQUEST": str(request_file)}
        started = time.perf_counter()
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                # the user's working folder, so relative paths in the command work as typed
                env=env,
                start_new_session=True,  # its own process group: a timeout kills its children too
            )
        except OSError as exc:  # found at preflight, gone now (or not executable): the agent cannot start
            return AgentResult("agent_crashed", message=f"cannot start {self.argv[0]!r}: {exc}")
        try:
            try:
                stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
            except TimeoutError:
                _kill_group(process)
                stdout, stderr = await process.communicate()
                return AgentResult(
                    "agent_timeout",
                    stderr_tail=_tail(stderr),
                    message=f"the agent ran past the case time limit of {timeout_s:g}s and was killed",
                    duration_ms=(time.perf_counter() - started) * 1000,
                )
        finally:
            if process.returncode is None:  # cancelled (the run stops): leave no process behind
                _kill_group(process)
        result = AgentResult(
            "answer",
            exit_code=process.returncode,
            stderr_tail=_tail(stderr),
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        answer_file = Path(request.answer_file)
        # surrogateescape: bytes that are not UTF-8 stay in the answer losslessly (stored escaped)
        answer = (
            answer_file.read_text(encoding="utf-8", errors="surrogateescape")
            if answer_file.exists()
            else stdout.decode("utf-8", errors="surrogateescape")
        )
        result.details["answer_source"] = "answer_file" if answer_file.exists() else "stdout"
        if process.returncode != 0:
            result.outcome = "agent_crashed"
            result.answer = answer
            result.message = f"the agent exited with status {process.returncode}"
            return result
        return _answered(answer.strip(), result)


_PYTHON = re.compile(r"python(\d+(\.\d+)*)?(\.exe)?$")


def _python_script(program: str, args: list[str]) -> Path | None:
    """The script a ``python [OPTIONS] SCRIPT.py ...`` command runs (``None``: another command)."""
    if not _PYTHON.match(Path(program).name):
        return None
    for arg in args:
        if arg.startswith("-"):
            if arg in ("-c", "-m", "-X", "-W") or arg.startswith(("-c", "-m")):
                return None  # code or a module, not a file; or an option whose value follows
            continue
        path = Path(arg)
        return path if path.suffix == ".py" and path.is_file() else None
    return None


_FIND_MODULES = """
import importlib.util, sys
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        print(name)
"""


def _missing_imports(python: str, script: Path) -> list[str]:
    """The modules ``script`` imports unconditionally at its top that ``python`` cannot find.

    Only plain ``import``/``from ... import`` statements of the module body count (not those under
    ``try``, ``if`` or in functions, which a script may guard), and only outside the standard library.
    Every case would crash on them: said once here, before any case runs. Any doubt (a script that
    does not parse, a check that fails) finds nothing, and the agent runs as it is.
    """
    try:
        tree = ast.parse(script.read_bytes(), filename=str(script))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found = [node.module]
        else:
            continue
        for name in (n.split(".")[0] for n in found):
            if name not in sys.stdlib_module_names and name != "__future__" and name not in names:
                names.append(name)
    if not names:
        return []
    try:
        done = subprocess.run(
            [python, "-c", _FIND_MODULES, str(script.resolve().parent), *names],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [name for name in done.stdout.split() if name in names]


def _kill_group(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class HttpAgent(AgentRunner):
    """``http:URL``: one POST per case to the user's agent service."""

    kind = "http"

    def __init__(self, spec: str, target: str) -> None:
        super().__init__(spec, target)
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--agent {spec!r}: expected http:http://HOST[:PORT]/PATH, got {target!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self._http: Any = None
        """One aiohttp session for the run: a connection per case would cost more than the request."""

    def preflight(self) -> None:
        try:
            with socket.create_connection((self.host, self.port), timeout=5):
                pass
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ConfigError(
                f"--agent {self.spec!r}: nothing accepts connections at {self.host}:{self.port} ({reason}); "
                "start your agent service first"
            ) from None

    async def run(self, request: AgentRequest, timeout_s: float) -> AgentResult:
        import aiohttp

        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        started = time.perf_counter()
        try:
            async with self._http.post(
                self.target, json=request.to_json(), timeout=aiohttp.ClientTimeout(total=timeout_s)
            ) as reply:
                body = await reply.text(errors="surrogateescape")
                status, content_type = reply.status, reply.content_type
        except TimeoutError:
            return AgentResult(
                "agent_timeout",
                message=f"the agent service did not answer within the case time limit of {timeout_s:g}s",
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        except aiohttp.ClientConnectorError as exc:
            raise AgentUnreachable(f"agent service {self.target}: {exc}") from None
        except aiohttp.ClientError as exc:  # the service dropped the connection mid-request
            return AgentResult("agent_crashed", message=f"{type(exc).__name__}: {exc}")
        result = AgentResult("answer", duration_ms=(time.perf_counter() - started) * 1000)
        result.details["http_status"] = status
        if status >= 400:
            result.outcome = "agent_crashed"
            result.stderr_tail = _tail(body)
            result.message = f"the agent service answered HTTP {status}"
            return result
        return _answered(_answer_from_body(body, content_type, result), result)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None


def _answer_from_body(body: str, content_type: str, result: AgentResult) -> str:
    """``{"answer": ...}`` from a JSON reply, the body itself otherwise. A malformed JSON reply is
    kept as it came (as the answer text) and noted."""
    if content_type != "application/json":
        return body.strip()
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past what the reader follows
        result.details["malformed_reply"] = True
        return body.strip()
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        return str(value["answer"]).strip()
    result.details["malformed_reply"] = True  # JSON without a string "answer": recorded as it came
    return body.strip()


AgentCallable = Callable[[str, str], Awaitable[Any]]


class PythonAgent(AgentRunner):
    """``py:module:function``: an async callable ``(instruction, mcp_url) -> answer`` in this process."""

    kind = "py"

    def __init__(self, spec: str, target: str) -> None:
        super().__init__(spec, target)
        module, sep, function = target.rpartition(":")
        if not sep or not module or not function:
            raise ConfigError(f"--agent {spec!r}: expected py:module:function, got {target!r}")
        self.module, self.function = module, function
        self._callable: AgentCallable | None = None
        self._wants: set[str] = set()
        """Optional keywords the callable accepts (``system_prompt``, ``case_id``, ``workdir``)."""

    def load(self) -> AgentCallable:
        if self._callable is None:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())  # like `python -m`: modules in the working folder import
            try:
                module = importlib.import_module(self.module)
            except ModuleNotFoundError as exc:
                top = (exc.name or "").split(".")[0]
                if top and top != self.module.split(".")[0]:  # the module is there; what it imports is not
                    raise missing_extra(f"--agent {self.spec!r}: module {self.module!r}", top) from None
                raise ConfigError(
                    f"--agent {self.spec!r}: cannot import module {self.module!r}: ModuleNotFoundError: {exc}"
                ) from None
            except Exception as exc:  # noqa: BLE001 - any import failure is the user's module
                problem = f"{type(exc).__name__}: {exc}"
                raise ConfigError(
                    f"--agent {self.spec!r}: cannot import module {self.module!r}: {problem}"
                ) from None
            target = getattr(module, self.function, None)
            if target is None:
                raise ConfigError(f"--agent {self.spec!r}: module {self.module!r} has no {self.function!r}")
            if not inspect.iscoroutinefunction(target):
                raise ConfigError(
                    f"--agent {self.spec!r}: {self.function!r} must be an async function "
                    "(async def agent(instruction, mcp_url) -> str)"
                )
            self._callable = target
            self._wants = _optional_keywords(target)
        return self._callable

    def preflight(self) -> None:
        self.load()

    def takes(self, keyword: str) -> bool:
        """Whether the function names ``keyword`` as a parameter (or takes ``**kwargs``)."""
        self.load()
        return keyword in self._wants

    async def run(self, request: AgentRequest, timeout_s: float) -> AgentResult:
        agent = self.load()
        extra = {key: getattr(request, key) for key in self._wants if getattr(request, key) is not None}
        started = time.perf_counter()
        # Its own thread and event loop: an agent that blocks (time.sleep, a synchronous HTTP client,
        # CPU-bound work) stalls only itself, never callbench's loop, the tool server or other cases.
        running = AgentThread(lambda: agent(request.instruction, request.mcp_url, **extra), request.case_id)
        try:
            answer = await asyncio.wait_for(running.outcome, timeout_s)
        except TimeoutError:
            return AgentResult(
                "agent_timeout",
                message=f"the agent did not return within the case time limit of {timeout_s:g}s" + ABANDONED,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        except Exception as exc:  # noqa: BLE001 - the agent under test raised: its own failure
            return AgentResult(
                "agent_crashed",
                stderr_tail=_tail(f"{type(exc).__name__}: {exc}"),
                message=f"the agent raised {type(exc).__name__}",
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        finally:
            running.stop()  # a no-op once it has finished; else its task is cancelled, its thread left
        result = AgentResult("answer", duration_ms=(time.perf_counter() - started) * 1000)
        if answer is not None and not isinstance(answer, str):
            result.details["answer_type"] = type(answer).__name__  # recorded as it came, as text
            answer = json.dumps(answer, ensure_ascii=False, default=str)
        return _answered((answer or "").strip(), result)


ABANDONED = "; it was cancelled (an agent that ignores cancellation is left to end on its own thread)"
"""Said of a timed-out ``py:`` agent."""


class AgentRaisedBaseException(Exception):
    """A ``py:`` agent ended with ``SystemExit``, ``KeyboardInterrupt`` or a stray ``CancelledError``:
    in its own thread that is its failure, not a reason to stop the run."""


class AgentThread:
    """One ``py:`` agent call on an event loop of its own, in a daemon thread.

    ``outcome`` is a future of the caller's loop that gets the agent's return value or exception.
    :meth:`stop` cancels the agent's task on its own loop; an agent that swallows the cancellation and
    goes on is abandoned there (its case is already scored; a daemon thread never holds the run's end).
    """

    def __init__(self, make: Callable[[], Awaitable[Any]], case_id: str) -> None:
        self._caller = asyncio.get_running_loop()
        self.outcome: asyncio.Future[Any] = self._caller.create_future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Future[Any] | None = None
        self._started = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(make,), name=f"agent:{case_id}", daemon=True)
        self._thread.start()
        self._started.wait()

    def _main(self, make: Callable[[], Awaitable[Any]]) -> None:
        loop = _loop_like(self._caller)
        self._loop = loop
        try:
            try:
                self._task = asyncio.ensure_future(make(), loop=loop)
            finally:
                self._started.set()  # also when calling the agent function itself failed
            value = loop.run_until_complete(self._task)
        except BaseException as exc:  # noqa: BLE001 - whatever the agent raised is its outcome
            self._settle(None, exc)
        else:
            self._settle(value, None)
        finally:
            self._finished.set()
            _close_loop(loop)

    def _settle(self, value: Any, exc: BaseException | None) -> None:
        if exc is not None and not isinstance(exc, Exception):
            exc = AgentRaisedBaseException(f"{type(exc).__name__}: {exc}".rstrip(": "))

        def deliver() -> None:
            if self.outcome.done():  # timed out or cancelled meanwhile
                return
            if exc is not None:
                self.outcome.set_exception(exc)
            else:
                self.outcome.set_result(value)

        try:
            self._caller.call_soon_threadsafe(deliver)
        except RuntimeError:  # the run's loop has closed: an abandoned agent finished after the run
            pass

    def stop(self) -> None:
        """Cancel the agent's task if it is still running (its thread is not waited for)."""
        if self._finished.is_set() or self._loop is None or self._task is None:
            return
        try:
            self._loop.call_soon_threadsafe(self._task.cancel)
        except RuntimeError:  # its loop closed in between
            pass


def _loop_like(caller: asyncio.AbstractEventLoop) -> asyncio.AbstractEventLoop:
    """A new loop of the run's own kind: uvloop's when the run is on uvloop, as the agent's client ran
    when it shared the run's loop (a loop class that needs arguments: asyncio's default)."""
    try:
        return type(caller)()
    except Exception:  # noqa: BLE001 - a loop class that needs arguments: asyncio's own will do
        return asyncio.new_event_loop()


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the agent left running on its loop, then close it."""
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except BaseException:  # noqa: BLE001, S110 - best effort: the agent's result is already delivered
        pass
    finally:
        loop.close()


OPTIONAL_KEYWORDS = (
    "system_prompt",
    "case_id",
    "workdir",
    "model_url",
    "anthropic_url",
    "messages",
    "turn",
    "otel_endpoint",
)


def _optional_keywords(function: Callable[..., Any]) -> set[str]:
    """The request fields a ``py:`` agent asks for by naming them as parameters (or ``**kwargs``)."""
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return set(OPTIONAL_KEYWORDS)
    return {p.name for p in parameters if p.name in OPTIONAL_KEYWORDS}


RUNNERS: dict[str, type[AgentRunner]] = {"cmd": CommandAgent, "http": HttpAgent, "py": PythonAgent}


def parse_agent(spec: str) -> AgentRunner:
    """The runner for ``--agent SPEC``; a malformed spec is one ConfigError line."""
    kind, sep, target = spec.partition(":")
    if not sep or kind not in RUNNERS:
        raise ConfigError(
            f"--agent {spec!r}: expected cmd:COMMAND, http:URL or py:module:function "
            f"(the part before the first ':' must be one of {', '.join(KINDS)})"
        )
    if not target.strip():
        raise ConfigError(f"--agent {spec!r}: nothing after '{kind}:'")
    return RUNNERS[kind](spec, target.strip())
