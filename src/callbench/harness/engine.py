"""The engine: loads suites, runs cases concurrently (rounds within a case in order), scores,
appends records as each case finishes, resumes, and writes the summary.

A case is played by a model in callbench's own loop (:mod:`callbench.harness.loop`, under the case time
limit of :mod:`callbench.harness.clock`) or by an agent under test in its own loop
(:mod:`callbench.harness.agent_episode`, ``--agent``)."""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import random
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from callbench.errors import (
    ConfigError,
    FatalProviderError,
    ProviderError,
    ToolBug,
    ToolServerFault,
    UserError,
)
from callbench.executors.base import Executor, ExecutorSession
from callbench.harness.clock import CASE_TIMEOUT, CaseClock, CaseTimeoutError, Pacer
from callbench.harness.config import RunConfig, case_time_limit
from callbench.harness.conversation import (
    SimulatorFault,
    UserSimulatorConfig,
    user_for_case,
    worker_simulator,
)
from callbench.harness.loop import Episode, run_episode
from callbench.harness.modes import ModePolicy, recorded_mode, round_override
from callbench.harness.observer import Observers
from callbench.harness.prepare import Prepared, prepare_run
from callbench.harness.runfolder import RecordWriter, latest_records, read_records, write_summary
from callbench.harness.summary_stream import stream_summary
from callbench.harness.watchdog import LoopWatchdog, current_watchdog
from callbench.providers.agent_under_test import AgentRunner
from callbench.providers.model import Model, endpoint_waits
from callbench.secrets import has_secrets, scrub_json_bytes
from callbench.suites.suite import Suite
from callbench.tools.retrieve import retrieval_recall
from callbench.types.case import Case
from callbench.types.jsoncodec import load_model, model_json_bytes
from callbench.types.records import TOOL_BUG, CaseRecord, ErrorInfo
from callbench.types.tape import CasePlay, current_play
from callbench.types.trace import Trace
from callbench.types.verdict import Verdict
from callbench.types.waits import TOOL_SERVER

if TYPE_CHECKING:
    from callbench.harness.backends.ray_backend import RayBackend
    from callbench.mcp.serve import CaseToolServer  # the MCP SDK takes ~0.5 s to import: agent runs only
    from callbench.providers.model_proxy import AgentModelProxy
    from callbench.telemetry.receiver import SpanReceiver

MANUAL_RATIONALE = "manual case: scored by reviewers against its rubric"
_CASE_NUMBERS = itertools.count(1)
WORKDIR_PREFIX = "callbench-"
_WORKDIR = re.compile(r"callbench-(\d+)-(?:\d+|mcp\w+)")
"""Per-case work folders: ``<tempdir>/callbench-<pid>-<n>``, and tool servers' folders
(``callbench-<pid>-mcp<random>``, :mod:`callbench.mcp.isolation`)."""
T = TypeVar("T")


@dataclass
class Job:
    suite: Suite
    case: Case
    trial: int
    scorers: dict[str, Any]
    executor: Executor
    simulator: UserSimulatorConfig | None = None
    """``--user-model``: the simulated user of conversation cases (``None``: their scripted users)."""
    run_dir: Path | None = None
    """The run folder, told to the executor session as it opens (``case_play().run_dir``)."""


@dataclass
class RunResult:
    """What a finished run returns: its folder and summary; records are read from disk on access."""

    run_dir: Path
    summary: dict[str, Any]

    @property
    def records(self) -> list[CaseRecord]:
        """The latest record of every (case, trial), read from ``records.jsonl``."""
        return latest_records(read_records(self.run_dir))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def remove_dead_workdirs(tempdir: str | Path | None = None) -> list[Path]:
    """Remove the per-case work folders that runs killed mid-case left behind (``kill -9`` gives
    them no chance to clean up): those of this user whose process is gone. Returns what was removed.

    Folders of live processes, of other users, and of this process are kept.
    """
    root = Path(tempdir or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        found = _WORKDIR.fullmatch(entry.name) if entry.name.startswith(WORKDIR_PREFIX) else None
        if found is None or int(found[1]) == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or (uid is not None and entry.stat().st_uid != uid):
                continue
        except OSError:
            continue
        if not _pid_alive(int(found[1])):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


async def run_async(config: RunConfig, observers: list[Any] | tuple[Any, ...] = ()) -> RunResult:
    """Run a benchmark; see :class:`RunConfig` for the options."""
    if config.otel or config.agent_otel:  # the `otel` extra missing...: one line before any run folder
        from callbench.harness.otel import check_otel

        check_otel(config)
    if config.preflight:  # one line before any run folder exists when there is no endpoint to check
        from callbench.harness.doctor import check_preflight_applies

        check_preflight_applies(config)
    if config.backend == "ray":  # connect first: no Ray or a dead address is one line, before run.json
        from callbench.harness.backends.ray_backend import RayBackend

        with RayBackend.connect(config) as backend:
            return await _run_prepared(config, observers, backend)
    return await _run_prepared(config, observers, None)


async def _run_prepared(
    config: RunConfig, observers: list[Any] | tuple[Any, ...], remote: RayBackend | None
) -> RunResult:
    prepared = prepare_run(config)
    try:
        return await _run_locked(prepared, config, observers, remote)
    finally:
        if prepared.lock is not None:
            prepared.lock.release()  # after the summary is written, or when the run fails


async def _run_locked(
    prepared: Prepared, config: RunConfig, observers: list[Any] | tuple[Any, ...], remote: RayBackend | None
) -> RunResult:
    """The run proper, while this process holds the run folder's lock."""
    if config.preflight and prepared.model is not None:
        await _preflight(prepared, config, observers)
    remove_dead_workdirs()  # left by runs killed mid-case (e.g. the one this run resumes)
    # Suites, registries and schemas live for the whole run: freezing them keeps the cyclic garbage
    # collector from re-scanning them on every collection (that scanning cost more than a case).
    # A process that froze its heap already (an application embedding callbench, a test session)
    # keeps its freeze: the run neither collects that heap again nor unfreezes it at the end.
    owns_freeze = gc.get_freeze_count() == 0
    if owns_freeze:
        gc.collect()
        gc.freeze()
    if config.otel:  # --otel: a trace per case, from each record as it is written
        from callbench.harness.otel import otel_observers

        observers = [*observers, *otel_observers(config, prepared.run_dir)]
    fan = Observers(observers)
    # Counted in the same pass that tells each executor its share (a local run's executors only).
    total = count_jobs(prepared, config) if remote is not None else _plan_executors(prepared, config)
    fan.emit("on_run_start", prepared.header, total)
    sink = RecordSink(RecordWriter(prepared.run_dir), fan)
    jobs = _jobs(prepared, config)  # made one at a time as workers take them
    policy = ModePolicy(config.harness_mode)
    if remote is not None and any(case.phase for suite in prepared.suites for case in suite.cases):
        raise ConfigError(
            "a suite whose cases run in phases (set-up cases whose state later cases read) runs with "
            "--backend local"
        )
    try:
        if remote is not None:  # Ray workers play the cases; this process still writes every record
            ids = ((suite.name, case.key, trial) for suite, case, trial in _selected(prepared, config))
            await remote.run(ids, total, sink.add, getattr(prepared.model, "counters", None), play_case)
        elif prepared.agent is not None:
            from callbench.harness.agent_model import model_proxy
            from callbench.mcp.serve import CaseToolServer
            from callbench.telemetry.receiver import span_receiver

            async with (
                CaseToolServer() as server,
                model_proxy(prepared.agent_model) as proxy,
                span_receiver(config.agent_otel) as spans,
            ):
                player = AgentPlayer(prepared.agent, server, proxy, spans)
                await _run_jobs(jobs, total, player, policy, config, sink)
        else:
            assert prepared.model is not None
            await _run_jobs(jobs, total, prepared.model, policy, config, sink)
    finally:
        sink.writer.close()
        if prepared.model is not None:
            await prepared.model.aclose()
        if prepared.simulator is not None:
            await prepared.simulator.model.aclose()
        if prepared.agent is not None:
            await prepared.agent.aclose()
        for executor in prepared.executors_in_use():
            await executor.aclose()
        if prepared.cassette is not None:  # the cassette's index and hash, in it and in run.json
            prepared.cassette.finish(prepared.run_dir)
        if prepared.agent_model is not None:  # the agent's model recording: its index and hash
            prepared.agent_model.finish(prepared.run_dir)
        summary = finish_run(prepared)
        if owns_freeze:
            gc.unfreeze()
        fan.emit("on_run_end", summary)
    return RunResult(prepared.run_dir, summary)


async def _preflight(prepared: Prepared, config: RunConfig, observers: list[Any] | tuple[Any, ...]) -> None:
    """``--preflight``: ``callbench doctor`` against the run's model before its first case; the table
    goes in ``run.json`` and to the observers (``on_preflight``). A failed check does not stop the run."""
    from callbench.harness.doctor import run_preflight

    assert prepared.model is not None
    try:
        report = await run_preflight(prepared.run_dir, prepared.header, prepared.model, config)
    except BaseException:  # the endpoint refused the first request (a wrong key or model name)
        await prepared.model.aclose()
        raise
    Observers(observers).emit("on_preflight", report)


def finish_run(prepared: Prepared) -> dict[str, Any]:
    """Build and write the typed ``summary.json`` from ``records.jsonl`` (the last record of a (case,
    trial) wins) in streaming passes, so memory does not grow with the number of cases; returns its
    JSON object, the form :class:`RunResult` and observers carry."""
    scorers = {name: s for job_scorers in prepared.scorers.values() for name, s in job_scorers.items()}
    counters = getattr(prepared.model, "counters", None)
    summary = stream_summary(prepared.run_dir, prepared.header, scorers, requests=counters)
    write_summary(prepared.run_dir, summary)
    return summary.to_json_dict()


def _selected(prepared: Prepared, config: RunConfig) -> Iterator[tuple[Suite, Case, int]]:
    """Every (suite, case, trial) still to run, in order, made as it is asked for: a suite whose cases
    stream is never held whole. ``--shuffle SEED``: all of them, in an order drawn from the seed."""
    if config.shuffle is None:
        return _in_order(prepared, config)
    picked = list(_in_order(prepared, config))
    random.Random(config.shuffle).shuffle(picked)
    if any(case.phase for _, case, _ in picked):  # shuffled within each phase, phases in order
        picked.sort(key=lambda job: job[1].phase)
    return iter(picked)


def _in_order(prepared: Prepared, config: RunConfig) -> Iterator[tuple[Suite, Case, int]]:
    done = prepared.done()
    for suite in prepared.suites:
        cases = suite.select(config.case_ids)  # the one --case rule (Suite.matches)
        if any(case.phase for case in cases):  # earlier phases first, suite order within a phase
            cases.sort(key=lambda case: case.phase)
        for case in itertools.islice(cases, config.limit):
            for trial in range(1, config.trials + 1):
                if (case.key, trial) not in done:
                    yield suite, case, trial


def _plan_executors(prepared: Prepared, config: RunConfig) -> int:
    """Tell each executor how many of the run's jobs will open a session on it (one that starts a tool
    server per case starts them ahead, and no more than that); returns the number of jobs."""
    counts: dict[int, int] = {}
    for suite, case, _trial in _selected(prepared, config):
        executor = prepared.executor_for(suite, case, config.executor)
        counts[id(executor)] = counts.get(id(executor), 0) + 1
    for executor in prepared.executors_in_use():
        if id(executor) in counts:
            executor.plan_cases(counts[id(executor)], config.concurrency)
    return sum(counts.values())


def count_jobs(prepared: Prepared, config: RunConfig) -> int:
    """How many jobs :func:`_jobs` will make (for the progress total), counted without keeping them."""
    return sum(1 for _ in _selected(prepared, config))


def _jobs(prepared: Prepared, config: RunConfig) -> Iterator[Job]:
    for suite, case, trial in _selected(prepared, config):
        executor = prepared.executor_for(suite, case, config.executor)
        yield Job(
            suite,
            with_time_limit(case, suite.name, config),
            trial,
            prepared.scorers[suite.name],
            executor,
            prepared.simulator,
            prepared.run_dir,
        )


def with_time_limit(case: Case, suite: str, config: RunConfig) -> Case:
    """``case`` with the time limit ``--case-timeout`` gives it (the case itself when none applies)."""
    if not config.case_timeouts:
        return case
    limit = case_time_limit(config.case_timeouts, suite, case.timeout_s)
    return case if limit == case.timeout_s else case.model_copy(update={"timeout_s": limit})


@dataclass
class RecordSink:
    """Where every finished record goes, whichever backend played it: the run folder (this process is
    the single writer of ``records.jsonl``), the observers, then the summary's tally."""

    writer: RecordWriter
    fan: Observers
    written: int = 0
    """Records written by this run. Nothing else is kept per case: the summary is built from
    ``records.jsonl`` when the run ends (:func:`finish_run`)."""

    def add(self, record: CaseRecord) -> None:
        """Write ``record`` and show it, with every known secret blanked first: an agent's answer,
        a tool result or a tool server's message may hold a key, and the record feeds every output
        (``records.jsonl``, the summary, reports, ``view``, observers)."""
        data = model_json_bytes(record)
        cleaned = scrub_json_bytes(data) if has_secrets() else None
        if cleaned is not None:
            data, record = cleaned, load_model(CaseRecord, cleaned)
        self.writer.write_json(data)
        self.fan.emit("on_case_end", record)
        self.written += 1


async def _run_jobs(
    jobs: Iterator[Job], total: int, player: Player, policy: ModePolicy, config: RunConfig, sink: RecordSink
) -> None:
    """``concurrency`` workers pull jobs from one queue: memory stays flat however many cases there are.
    Jobs come in phase order (:func:`_in_order`); a job of another phase than the one running is
    taken only once every job taken before it has finished (:class:`PhaseGate`)."""
    pacing = Pacer(config.delay_s)
    pending = iter(jobs)
    gate = PhaseGate()

    async def worker() -> None:
        while (job := await gate.take(pending)) is not None:
            try:
                await pacing.wait()
                sink.add(await run_job(job, player, policy, config, sink.fan))
            finally:
                gate.done()
            # A case played in process (built-in agents, local tools) may never suspend: without this
            # one worker would hold the loop for the whole run, so no other worker, timer or signal
            # would run, and the loop would never purge the cancelled timers of finished cases' time
            # limits (memory growing with every case).
            await asyncio.sleep(0)

    # Stalls of the shared loop are charged to the case that caused them, never to the others'
    # clocks (harness/watchdog.py); the workers' tasks inherit the watchdog through their context.
    watchdog = LoopWatchdog()
    watchdog.start()
    token = current_watchdog.set(watchdog)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(config.concurrency, total))):
                group.create_task(worker())
    except* FatalProviderError as eg:
        raise eg.exceptions[0] from None
    finally:
        current_watchdog.reset(token)
        watchdog.stop()


class PhaseGate:
    """Hands out jobs in order; a job whose phase differs from the one running waits until every job
    handed out before it has finished (its record written), and holds back the jobs behind it meanwhile.
    Without phases (every case 0) it never waits."""

    def __init__(self) -> None:
        self.phase = 0
        self.running = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.taking = asyncio.Lock()

    async def take(self, jobs: Iterator[Job]) -> Job | None:
        """The next job (``None`` when there is none left), once its phase may start."""
        async with self.taking:  # one taker at a time: a later job never passes a waiting one
            job = next(jobs, None)
            if job is None:
                return None
            if job.case.phase != self.phase:
                await self.idle.wait()
                self.phase = job.case.phase
            self.running += 1
            self.idle.clear()
            return job

    def done(self) -> None:
        """A job handed out has finished."""
        self.running -= 1
        if self.running == 0:
            self.idle.set()


async def play_case(
    suite: Suite,
    case: Case,
    trial: int,
    scorers: dict[str, Any],
    executor: Executor,
    model: Model,
    config: RunConfig,
) -> CaseRecord:
    """One (case, trial) played by ``model`` and scored, without observers: what a remote worker runs."""
    simulator = worker_simulator(config) if case.user is not None else None
    job = Job(suite, with_time_limit(case, suite.name, config), trial, scorers, executor, simulator)
    return await run_job(job, model, ModePolicy(config.harness_mode), config, Observers())


async def run_job(
    job: Job, player: Player, policy: ModePolicy, config: RunConfig, fan: Observers
) -> CaseRecord:
    """Run, score and package one (case, trial). Infrastructure failures become error records."""
    case, suite = job.case, job.suite
    started, clock = time.time(), time.perf_counter()
    offered = suite.offered_tools(case, config.k)
    names = [t.name for t in offered]
    registry = suite.registry_for(case)
    expected = case.expected_tools()
    recall = retrieval_recall(
        expected, set(names), {n: registry.equivalents(n) for alts in expected for n in alts}
    )
    fan.emit("on_case_start", case, job.trial, names)
    # run.json keeps the mode's rule; a record carries the budget its case really ran with (cases
    # may set their own: DAG 2*n_core+2, ComplexFuncBench, BFCL), computed as the loop computes it.
    assistance = policy.case_assistance(len(expected), round_override(case))
    record = CaseRecord(
        key=case.key,
        suite=suite.name,
        case_id=case.id,
        category=case.category,
        trial=job.trial,
        instruction=case.prompt_text(),
        prompt_sha256=case.prompt_sha256(),
        offered_tools=names,
        expected_tools=expected,
        expected=[s.model_dump(mode="json") for s in case.expected],
        retrieval_recall=recall,
        harness_mode=recorded_mode(policy.mode, config.recover_text_calls),
        harness_assistance=assistance,
        template=case.template,
        started_at=started,
        scoring=case.scoring,
        rubric=case.rubric,
    )
    episode = Episode(
        case,
        offered,
        policy,
        suite.system_prompt,
        registry=registry,
        recover_text_calls=config.recover_text_calls,
        size_limits=config.size_limits,
    )
    error: ErrorInfo | None = None
    try:
        episode.user = user_for_case(case.user, job.simulator, job.trial)
    except SimulatorFault as exc:
        error = ErrorInfo(type=f"user_simulator:{exc.kind}", message=str(exc))
    if episode.user is not None:  # who played the user: recorded, and a stratum of its own
        record.simulator = episode.user.info
        record.harness_mode = f"{record.harness_mode}+user={episode.user.info.label}"
    watchdog = current_watchdog.get()
    if watchdog is not None:
        watchdog.enter((case.key, job.trial))
    try:
        if error is None:
            error = await _play(job, episode, player, config, fan)
    finally:
        stalled = watchdog.leave() if watchdog is not None else 0.0
    if stalled:
        episode.trace.loop_stall_s = round(stalled, 3)
    record.trace = episode.trace
    if error is None:
        record.verdicts, error = await score_case(job.scorers, case, episode.trace)
    if error is not None:
        record.status, record.error = "error", error
    record.duration_ms = (time.perf_counter() - clock) * 1000
    return record


@dataclass
class AgentPlayer:
    """An agent under test (``--agent``) and the MCP server its cases' tools are served from."""

    agent: AgentRunner
    server: CaseToolServer
    model_proxy: AgentModelProxy | None = None
    """The agent's model served through callbench (:mod:`callbench.harness.agent_model`), when on."""
    span_receiver: SpanReceiver | None = None
    """``--agent-otel``: where the agent's own spans are received (:mod:`callbench.telemetry.receiver`)."""


Player = Model | AgentPlayer
"""What plays a case: a model in callbench's own loop, or the user's agent in its own loop."""


async def _play(
    job: Job, episode: Episode, player: Player, config: RunConfig, fan: Observers
) -> ErrorInfo | None:
    """Play one case; infrastructure failures become the record's error, the model's are scored."""
    case = job.case
    # The per-case folder is only a path: executors that write files create it. Creating and
    # removing a folder for every case would cost more than the whole harness loop.
    workdir = Path(tempfile.gettempdir()) / f"{WORKDIR_PREFIX}{os.getpid()}-{next(_CASE_NUMBERS)}"
    # A cassette keys the session's tape by case and trial; phased cases keep state in the run folder.
    token = current_play.set(CasePlay(case.key, job.trial, job.run_dir))
    try:
        session = job.executor.start(case, workdir, job.suite)
    finally:
        current_play.reset(token)
    try:
        try:
            try:
                opened = await session.opening(list(episode.messages))
            except UserError as exc:  # the session could not set the case up
                episode.trace.stop_reason = "error"
                return ErrorInfo(type="case_setup", message=str(exc))
            if opened is not None:
                episode.messages = list(opened)
            if isinstance(player, AgentPlayer):
                from callbench.harness.agent_episode import run_agent_episode

                await run_agent_episode(
                    episode,
                    player.agent,
                    session,
                    player.server,
                    workdir,
                    fan,
                    model_proxy=player.model_proxy,
                    trial=job.trial,
                    span_receiver=player.span_receiver,
                )
                return None
            return await _play_model(job, episode, player, session, config, fan)
        except FatalProviderError:
            raise
        except ProviderError as exc:
            episode.trace.stop_reason = "error"
            return ErrorInfo(type=type(exc).__name__, message=str(exc))
        except ToolBug as exc:  # a bug in a tool implementation: never the model's fault
            episode.trace.stop_reason = "error"
            return ErrorInfo(type=f"{TOOL_BUG}:{exc.error_type}", message=str(exc), traceback=exc.traceback)
        except ToolServerFault as exc:  # a live tool server hung or went away: infrastructure
            episode.trace.stop_reason = "error"
            return ErrorInfo(type=exc.kind, message=str(exc))
        except SimulatorFault as exc:  # the simulated user failed: never the agent's fault
            episode.trace.stop_reason = "error"
            return ErrorInfo(type=f"user_simulator:{exc.kind}", message=str(exc))
        except Exception as exc:  # noqa: BLE001 - one broken case must not end the run
            episode.trace.stop_reason = "error"
            return ErrorInfo(type=f"internal:{type(exc).__name__}", message=str(exc))
        finally:
            episode.trace.final_state = _snapshot(session)
            await _end_session(session)
    finally:
        if workdir.exists():
            shutil.rmtree(workdir, ignore_errors=True)


async def _play_model(
    job: Job, episode: Episode, model: Model, session: ExecutorSession, config: RunConfig, fan: Observers
) -> ErrorInfo | None:
    """callbench's own round loop under the case's :class:`CaseClock`."""
    clock = CaseClock(job.case.timeout_s)
    watchdog = current_watchdog.get()
    if watchdog is not None:
        watchdog.attach_clock(clock)
    token = endpoint_waits.set(clock)
    try:
        bound = model.for_case(job.case)
        if job.trial > 1:  # repeated trials must not be answered from trial 1's cache entries
            bound = bound.with_salt(f"trial-{job.trial}")
        await clock.run(run_episode(episode, bound, session, config.settings, fan))
    except TimeoutError as exc:
        if not clock.expired():  # raised by a tool or a session, not by the case limit
            episode.trace.stop_reason = "error"
            return ErrorInfo(
                type=f"internal:{type(exc).__name__}", message=str(exc) or "timeout inside the case"
            )
        if clock.charged_to == "endpoint":
            episode.trace.stop_reason = "error"
            kind = "tool_server_timeout" if clock.waiting_for == TOOL_SERVER else CASE_TIMEOUT
            return ErrorInfo(type=kind, message=clock.message())
        episode.trace.stop_reason = "timeout"  # the model's own time ran out: a scored result
    except CaseTimeoutError as exc:
        episode.trace.stop_reason = "error"
        return ErrorInfo(type=CASE_TIMEOUT, message=str(exc))
    finally:
        endpoint_waits.reset(token)
    return None


async def _end_session(session: ExecutorSession) -> None:
    """End the case's session (its own tool server stopped, its files released), even when the case was
    cancelled: a second cancellation cannot cut the stop short."""
    try:
        await asyncio.shield(session.aclose())
    except Exception:  # noqa: BLE001 - the record is kept; a session that fails to close is not the model's
        pass


def _snapshot(session: Any) -> dict[str, Any] | None:
    try:
        return session.snapshot()
    except Exception:  # noqa: BLE001 - a diagnostic must not lose the record
        return None


async def score_case(
    scorers: dict[str, Any], case: Case, trace: Trace
) -> tuple[dict[str, Verdict], ErrorInfo | None]:
    """Apply every scorer; a crashing scorer makes an error record (a bug), never a model failure.

    A manual case is scored like any other (its verdicts are diagnostics for the reviewers) and every
    verdict is then marked not applicable, which takes it out of every automatic rate."""
    verdicts: dict[str, Verdict] = {}
    for name, scorer in scorers.items():
        try:
            verdict = await scorer.ascore(case, trace)
        except ProviderError as exc:
            return verdicts, ErrorInfo(type=f"scorer:{type(exc).__name__}", message=str(exc))
        except Exception as exc:  # noqa: BLE001
            return verdicts, ErrorInfo(type=f"scorer_error:{type(exc).__name__}", message=f"{name}: {exc}")
        verdicts[name] = _not_applicable_manual(verdict) if case.manual else verdict
    return verdicts, None


def _not_applicable_manual(verdict: Verdict) -> Verdict:
    """The automatic verdict of a manual case: what the scorer found is kept (reasons, and its pass flag
    and partial score under ``details["automatic"]``) for the reviewers; ``passed`` is False and
    ``applicable`` False, as for any verdict that is out of every rate, so no reader can count it."""
    automatic = {"passed": verdict.passed, "partial": verdict.partial, "rationale": verdict.rationale}
    return verdict.model_copy(
        update={
            "applicable": False,
            "passed": False,
            "partial": None,
            "rationale": MANUAL_RATIONALE,
            "details": {**verdict.details, "automatic": automatic},
        }
    )
