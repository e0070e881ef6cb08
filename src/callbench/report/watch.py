"""``callbench run --case ID --watch``: print each round of a case as it happens.

Shows the offered tools, every call with its arguments, the schema verdict, the execution result,
and finally each tier's verdict with its reasons. Every line starts with the case it belongs to
(``suite:id#trial``), since cases running concurrently interleave their rounds.

Model text is shown, never obeyed: it goes through ``rich.text.Text`` appends, so brackets are
never read as console markup, and through :func:`printable`, so terminal control sequences (ESC
colours, OSC 8 links, carriage returns, bidi overrides) appear escaped (``\\x1b``) instead of
driving the terminal; known API keys are blanked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from callbench.report.serving import round_notes
from callbench.report.terminal import AGENT_MODE, agent_failure, printable, run_subject

if TYPE_CHECKING:
    from callbench.types.records import CaseRecord, RunHeader
    from callbench.types.trace import RoundInfo, TraceCall


STDERR_LINES = 20
"""Lines of an agent's stderr tail ``--watch`` prints after a failure (the record keeps the whole tail)."""


def json_line(value: Any, limit: int = 400) -> str:
    """Compact JSON of ``value`` cut to ``limit`` characters (for watch output)."""
    text = printable(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit} chars)"


def error_line(error: Any) -> str:
    """``Type: message`` of an error record, on one line and safe for a terminal."""
    if error is None:
        return "error"
    message = " ".join(printable(str(error.message)).split())
    return f"{printable(str(error.type))}: {message[:400]}"


def error_summary(records: Iterable[CaseRecord]) -> list[str]:
    """Why cases errored: one line per error type with its count and the first message.

    Error records are infrastructure failures (a server that stopped answering, a tool bug),
    excluded from every rate; without these lines a table of errors says nothing about the cause.
    """
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for record in records:
        if record.status != "error":
            continue
        kind = record.error.type if record.error is not None else "error"
        counts[kind] = counts.get(kind, 0) + 1
        first.setdefault(kind, error_line(record.error))
    return [f"{counts[kind]} × {first[kind]}" for kind in sorted(counts, key=lambda k: -counts[k])]


def run_error_causes(run_dir: Path) -> list[str]:
    """:func:`error_summary` of a run folder's latest records."""
    from callbench.harness.runfolder import latest_records, read_records

    return error_summary(latest_records(read_records(run_dir)))


def all_errored(summary: Mapping[str, Any], run_dir: Path) -> str | None:
    """One line saying that no case of the run could be scored and why, or ``None``.

    A run whose every case is an error record (a model server that died) must not end with
    exit status 0 and an empty table.
    """
    errors, completed = int(summary.get("n_error") or 0), int(summary.get("n_completed") or 0)
    if not errors or completed:
        return None
    causes = run_error_causes(run_dir)
    first = f" ({causes[0]})" if causes else ""
    return (
        f"all {errors} case run(s) ended in infrastructure errors and none was scored{first}; "
        f"fix the cause, then re-run them with --resume {run_dir}"
    )


def _case_key(case: Any) -> str:
    suite = getattr(case, "suite", None) or ""
    cid = getattr(case, "id", None) or getattr(case, "case_id", "?")
    return f"{suite}:{cid}" if suite else str(cid)


def _last_user_message(case: Any) -> str:
    # Cases given as a conversation have no instruction: show the last user turn instead.
    users = [m for m in getattr(case, "messages", None) or [] if getattr(m, "role", "") == "user"]
    return str(users[-1].content) if users else ""


class WatchObserver:
    """Prints rounds, calls and verdicts of each case to a console as the engine reports them.

    Every line is labelled with its case (``suite:id#trial``): with ``--concurrency`` above 1
    the rounds of several cases interleave.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._trials: dict[str, list[int]] = {}
        """Trials in flight per case key (``on_round`` is not told the trial)."""
        self._first_call: dict[str, float] = {}
        """Arrival time of each case's first call over MCP (agent under test): calls show offsets."""

    def _label(self, key: str, trial: int | None = None) -> str:
        if trial is None:
            running = self._trials.get(key, [])
            trial = running[0] if len(running) == 1 else None
        return printable(key if trial is None else f"{key}#{trial}")

    def _print(self, label: str, text: Text) -> None:
        """Print ``text`` with ``label`` in front of each of its lines."""
        for line in text.split("\n", allow_blank=True):
            self.console.print(Text(f"{label} │ ", style="dim").append_text(line))

    def on_run_start(self, header: RunHeader, total: int) -> None:

        subject, mode = printable(run_subject(header)), header.harness_mode
        text = f"watching {total} case run(s) · {subject} · harness mode {mode}"
        if mode == AGENT_MODE:
            # The agent runs its own loop: callbench sets no round budget and only sees its calls.
            text += " · round budget n/a (rounds reconstructed from call timing)"
        self.console.print(Text(text, style="bold"))

    def on_case_start(self, case: Any, trial: int, offered: list[str]) -> None:
        key = _case_key(case)
        self._trials.setdefault(key, []).append(trial)
        label = self._label(key, trial)
        self.console.rule(Text(f"{label}  start"))
        instruction = getattr(case, "instruction", None) or _last_user_message(case)
        if instruction:
            text = Text(printable(str(instruction)), style="default")
            self._print(label, Text("instruction: ", style="bold").append_text(text))
        tools = Text("offered tools: ", style="bold")
        tools.append(printable(", ".join(offered)) if offered else "(none)", style="cyan")
        self._print(label, tools)

    def on_round(self, case: Any, round_info: RoundInfo, calls: list[TraceCall]) -> None:
        label = self._label(_case_key(case))
        head = Text(f"round {round_info.index}", style="bold")
        if round_info.latency_ms is not None:
            head.append(f"  {round_info.latency_ms:.0f} ms", style="dim")
        if round_info.cached:
            head.append("  (cached)", style="dim")
        if round_info.reconstructed:
            head.append("  (reconstructed from call timing)", style="dim")
        self._print(label, head)
        if round_info.reasoning:  # collapsed to one line: its size and how it begins
            reasoning = " ".join(round_info.reasoning.split())
            shown = reasoning[:160] + ("…" if len(reasoning) > 160 else "")
            self._print(
                label,
                Text(f"  reasoning ({len(round_info.reasoning):,} chars): ", style="dim").append(
                    printable(shown), style="dim italic"
                ),
            )
        if round_info.text:
            text = Text(printable(round_info.text[:2000]), style="italic")
            self._print(label, Text("  text: ").append_text(text))
        for note, style in round_notes(round_info):  # raw text, calls left in the text, limits
            self._print(label, Text("  " + printable(note), style=style))
        if not calls:
            self._print(label, Text("  no tool call", style="yellow"))
        for call in calls:
            self._print_call(label, call, self._offset(_case_key(case), call))
        if round_info.nudge:
            self._print(label, Text("  harness nudge: ", style="dim").append(printable(round_info.nudge)))

    def _offset(self, key: str, call: TraceCall) -> str:
        """``+68 ms`` from the case's first call, for calls that arrived over MCP; else empty."""
        if call.started_at is None:
            return ""
        first = self._first_call.setdefault(key, call.started_at)
        return f"+{1000 * (call.started_at - first):.0f} ms"

    def _print_call(self, label: str, call: TraceCall, offset: str = "") -> None:
        line = Text("  → ")
        if offset:
            line.append(offset + " ", style="dim")
        line.append(printable(call.tool), style="bold cyan")
        if call.parse_error:
            line.append(f"  arguments unparsable ({printable(call.parse_error)}): ", style="red")
            line.append(printable(call.arguments_raw[:400]))
        else:
            line.append(" " + json_line(call.arguments))
        self._print(label, line)
        schema = Text("    schema: ")
        if not call.known_tool:
            schema.append("unknown tool", style="red")
        elif call.schema_valid:
            schema.append("valid", style="green")
        else:
            schema.append("invalid " + printable("; ".join(call.schema_errors)[:600]), style="red")
        self._print(label, schema)
        status = call.execution
        style = {"ok": "green", "error": "red", "rejected": "red"}.get(status, "yellow")
        result = Text("    execution: ").append(status, style=style)
        if call.error:
            result.append("  " + printable(call.error[:600]), style="red")
        elif status == "ok":
            result.append("  result " + json_line(call.result))
        self._print(label, result)

    def on_case_end(self, record: CaseRecord) -> None:
        key = f"{record.suite}:{record.case_id}" if record.suite else record.case_id
        label = self._label(key, record.trial)
        running = self._trials.get(key, [])
        if record.trial in running:
            running.remove(record.trial)
        if not running:
            self._trials.pop(key, None)
            self._first_call.pop(key, None)
        if record.status == "error":
            self._print(label, Text(f"ERROR {error_line(record.error)}", style="bold red"))
            return
        trace = record.trace
        if trace.final_text:
            final = Text(printable(trace.final_text[:2000]))
            self._print(label, Text("final text: ", style="bold").append_text(final))
        for tier, verdict in record.verdicts.items():
            ok = verdict.passed
            line = Text(f"{tier}: ", style="bold")
            line.append("PASS" if ok else "FAIL", style="bold green" if ok else "bold red")
            if verdict.partial is not None:
                line.append(f"  partial {verdict.partial:.2f} (diagnostic)", style="dim")
            self._print(label, line)
            for reason in verdict.reasons:
                why = Text(f"    {reason.code}: ", style="red").append(printable(reason.message))
                self._print(label, why)
        self._print_agent(label, record)
        done = Text(f"{record.duration_ms:.0f} ms, stop: {trace.stop_reason}", style="dim")
        self._print(label, done)

    def _print_agent(self, label: str, record: CaseRecord) -> None:
        """An agent under test's failure and the tail of its stderr (its own words, escaped)."""

        failure = agent_failure(record)
        agent = record.trace.agent
        if failure is None or agent is None:
            return
        line = Text("agent: ", style="bold").append(failure, style="bold red")
        if agent.message:
            line.append("  " + printable(" ".join(agent.message.split())[:400]), style="red")
        self._print(label, line)
        tail = agent.stderr_tail.rstrip("\n").splitlines()[-STDERR_LINES:]
        if tail:
            self._print(label, Text("  stderr (tail):", style="dim"))
        for text in tail:
            self._print(label, Text("    " + printable(text[:400]), style="dim"))

    def on_run_end(self, summary: dict[str, Any]) -> None:
        self.console.rule(Text("run finished"))
