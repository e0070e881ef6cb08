"""Run observers: a rich progress bar, a plain log for CI, and the ``--watch`` round printer.

The engine calls observers through :class:`callbench.harness.observer.Observers`; the CLI builds
them with :func:`make_observers`. Model output is printed as plain text (never as console markup).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from callbench.errors import ConfigError
from callbench.report.terminal import AGENT_MODE, agent_failure, percent, printable, run_subject

if TYPE_CHECKING:
    from callbench.types.records import CaseRecord, RunHeader
    from callbench.types.trace import RoundInfo, TraceCall
    from callbench.types.verdict import Verdict

ProgressMode = Literal["auto", "rich", "plain", "quiet"]


@dataclass(frozen=True)
class ProgressConfig:
    """How a run reports progress.

    Attributes:
        progress: ``rich`` bar (falls back to ``plain`` when the output is not a terminal),
            ``plain`` log lines, ``quiet``, or ``auto`` (rich on a terminal, else plain).
        watch: Print every round of every case as it happens (``--watch``).
        run_dir: When set, ``live.json`` in it is kept current for ``callbench view``.
        runs_root: Without ``run_dir``, the run folder is ``runs_root/<run_id>`` (known at run start).
        stream: Output stream (stderr by default, so stdout stays machine-readable).
    """

    progress: ProgressMode = "rich"
    watch: bool = False
    run_dir: Path | None = None
    runs_root: Path | None = None
    stream: IO[str] | None = None


@dataclass
class RunTally:
    """Running figures of a run: cases done, strict passes per tier, errors, request rate."""

    total: int = 0
    done: int = 0
    errors: int = 0
    requests: int = 0
    passes: dict[str, int] = field(default_factory=dict)
    scored: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    text_calls: int = 0
    """Cases with an answer whose text holds a call the server did not return as one."""
    agent: bool = False
    """An agent under test: it sends its own model requests, so no request rate is shown
    (its rounds are reconstructed from call timing, not requests)."""

    def add_record(self, record: CaseRecord) -> None:
        self.done += 1
        if record.status == "error":
            self.errors += 1
            return
        self.text_calls += any(r.text_call_format and not r.recovered_calls for r in record.trace.rounds)
        for tier, verdict in record.verdicts.items():
            if not verdict.applicable:
                continue
            self.scored[tier] = self.scored.get(tier, 0) + 1
            self.passes[tier] = self.passes.get(tier, 0) + verdict.passed

    def pass_rates(self) -> str:
        """``tier 71.4%`` per tier seen so far (strict pass flag, completed cases only)."""
        parts = [f"{_short(t)} {percent(self.passes[t] / n)}" for t, n in self.scored.items() if n]
        return "  ".join(parts) or "no verdicts yet"

    def requests_per_s(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.requests / elapsed if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        if not self.done or self.total <= self.done:
            return None if not self.done else 0.0
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)

    def line(self) -> str:
        eta = self.eta_s()
        eta_text = "?" if eta is None else _duration(eta)
        head = f"[{self.done}/{self.total}] pass {self.pass_rates()} | errors {self.errors}"
        if self.text_calls:  # a server whose tool-call parser fails shows here, not only as misses
            head += f" | {self.text_calls} unparsed text call(s)"
        return f"{head} | {self.rate()}ETA {eta_text}"

    def rate(self) -> str:
        """``12.04 req/s | `` (empty for an agent under test)."""
        return "" if self.agent else f"{self.requests_per_s():.2f} req/s | "


SHORT_TIERS = {
    "native-function-contract": "contract",
    "real-tool-execution": "execution",
    "task-completion-execution": "completion",
}


def _short(tier: str) -> str:
    # Short names keep the bar on one line; other scorers keep their own (already short) names.
    return SHORT_TIERS.get(tier, tier)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class _StatusProgress(Progress):
    """A progress bar with a second line for the running figures (fits 80 columns)."""

    status: Text = Text("")

    def get_renderables(self) -> Any:
        yield self.make_tasks_table(self.tasks)
        yield self.status


class RichProgress:
    """A rich progress bar: cases done/total, pass rate per tier, errors, requests/s, ETA."""

    def __init__(self, console: Console) -> None:
        self.tally = RunTally()
        self.progress = _StatusProgress(
            TextColumn("[bold]cases"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            console=console,
            transient=False,
        )
        self.task: Any = None

    def on_run_start(self, header: RunHeader, total: int) -> None:
        self.tally = RunTally(total=total, agent=getattr(header, "harness_mode", None) == AGENT_MODE)
        self.progress.start()
        self.progress.status = self._status()
        self.task = self.progress.add_task("run", total=total, eta="?")

    def on_round(self, case: Any, round_info: RoundInfo, calls: list[TraceCall]) -> None:
        self.tally.requests += 1

    def on_case_end(self, record: CaseRecord) -> None:
        self.tally.add_record(record)
        self.progress.status = self._status()
        if self.task is not None:
            eta = self.tally.eta_s()
            eta_text = "?" if eta is None else _duration(eta)
            self.progress.update(self.task, completed=self.tally.done, eta=eta_text)

    def on_run_end(self, summary: dict[str, Any]) -> None:
        self.progress.status = self._status()
        self.progress.refresh()
        self.progress.stop()

    def _status(self) -> Text:
        rate = self.tally.rate().removesuffix(" | ")
        return Text(
            f"pass {self.tally.pass_rates()} | errors {self.tally.errors}" + (f" | {rate}" if rate else "")
        )


class PlainProgress:
    """One log line per finished case with the running figures (CI logs, non-TTY output)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.tally = RunTally()

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def on_run_start(self, header: RunHeader, total: int) -> None:
        self.tally = RunTally(total=total, agent=getattr(header, "harness_mode", None) == AGENT_MODE)
        line = f"run {header.run_id}: {total} case runs"
        if getattr(header, "harness_mode", None) == AGENT_MODE:
            line += f" · {printable(run_subject(header))} · harness mode {AGENT_MODE}"
        self._print(line)

    def on_round(self, case: Any, round_info: RoundInfo, calls: list[TraceCall]) -> None:
        self.tally.requests += 1

    def on_case_end(self, record: CaseRecord) -> None:
        self.tally.add_record(record)
        self._print(f"{case_outcome(record)} {self.tally.line()}")

    def on_run_end(self, summary: dict[str, Any]) -> None:
        self._print(f"done {self.tally.line()}")


def verdict_word(verdict: Verdict) -> str:
    """``PASS``, ``FAIL`` or ``n/a`` (a verdict that judged nothing, e.g. a manual case's)."""
    if not verdict.applicable:
        return "n/a"
    return "PASS" if verdict.passed else "FAIL"


def case_outcome(record: CaseRecord) -> str:
    """``key#trial PASS|FAIL per tier`` (or ``ERROR type``) for one record, then an agent under
    test's failure (``agent_crashed (exit 3)``) when it had one."""
    head = f"{record.key}#{record.trial}"
    if record.status == "error":
        return f"{head} ERROR {record.error.type if record.error is not None else 'error'}"
    flags = " ".join(f"{_short(t)}={verdict_word(v)}" for t, v in record.verdicts.items())
    failure = agent_failure(record)
    return f"{head} {flags}" + (f" {failure}" if failure else "")


def make_observers(config: Any) -> list[Any]:
    """Observers for a run, from a :class:`ProgressConfig` or any object/mapping with the same fields.

    Raises:
        ConfigError: for an unknown progress mode.
    """
    cfg = _coerce(config)
    stream = cfg.stream or sys.stderr
    observers: list[Any] = []
    mode = cfg.progress
    if mode not in ("auto", "rich", "plain", "quiet"):
        raise ConfigError(f"--progress: unknown mode {mode!r} (choose auto, rich, plain or quiet)")
    if cfg.watch:
        from callbench.report.watch import WatchObserver

        observers.append(WatchObserver(Console(file=stream, highlight=False, soft_wrap=True)))
    elif mode in ("rich", "auto") and stream.isatty():
        observers.append(RichProgress(Console(file=stream)))
    elif mode in ("rich", "auto", "plain"):
        observers.append(PlainProgress(stream))
    if cfg.run_dir is not None or cfg.runs_root is not None:
        from callbench.report.live_state import LiveStateWriter

        observers.append(LiveStateWriter(cfg.run_dir, runs_root=cfg.runs_root))
    return observers


def _coerce(config: Any) -> ProgressConfig:
    if isinstance(config, ProgressConfig):
        return config
    get = config.get if isinstance(config, Mapping) else (lambda k, d=None: getattr(config, k, d))
    run_dir = get("run_dir", None) or get("out_dir", None)
    runs_root = get("runs_root", None)
    return ProgressConfig(
        progress=get("progress", "auto") or "auto",
        watch=bool(get("watch", False)),
        run_dir=Path(run_dir) if run_dir else None,
        runs_root=Path(runs_root) if runs_root else None,
        stream=get("stream", None),
    )
