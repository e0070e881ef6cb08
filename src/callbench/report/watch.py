"""``callbench run --case ID --watch``: print each round of a case as it happens.

Shows the offered tools, every call with its arguments, the schema verdict, the execution result,
and finally each tier's verdict with its reasons. All model text goes through ``rich.text.Text``
appends, so brackets in model output are never read as console markup.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from callbench.types.records import CaseRecord, RunHeader
    from callbench.types.trace import RoundInfo, TraceCall


def json_line(value: Any, limit: int = 400) -> str:
    """Compact JSON of ``value`` cut to ``limit`` characters (for watch output)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit} chars)"


def _case_key(case: Any) -> str:
    suite = getattr(case, "suite", None) or ""
    cid = getattr(case, "id", None) or getattr(case, "case_id", "?")
    return f"{suite}:{cid}" if suite else str(cid)


def _last_user_message(case: Any) -> str:
    # Cases given as a conversation have no instruction: show the last user turn instead.
    users = [m for m in getattr(case, "messages", None) or [] if getattr(m, "role", "") == "user"]
    return str(users[-1].content) if users else ""


class WatchObserver:
    """Prints rounds, calls and verdicts of each case to a console as the engine reports them."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def on_run_start(self, header: RunHeader, total: int) -> None:
        model, mode = header.model, header.harness_mode
        text = f"watching {total} case run(s) · model {model} · harness mode {mode}"
        self.console.print(Text(text, style="bold"))

    def on_case_start(self, case: Any, trial: int, offered: list[str]) -> None:
        self.console.rule(Text(f"{_case_key(case)}  trial {trial}"))
        instruction = getattr(case, "instruction", None) or _last_user_message(case)
        if instruction:
            text = Text(str(instruction), style="default")
            self.console.print(Text("instruction: ", style="bold").append(text))
        tools = Text("offered tools: ", style="bold")
        tools.append(", ".join(offered) if offered else "(none)", style="cyan")
        self.console.print(tools)

    def on_round(self, case: Any, round_info: RoundInfo, calls: list[TraceCall]) -> None:
        head = Text(f"round {round_info.index}", style="bold")
        if round_info.latency_ms is not None:
            head.append(f"  {round_info.latency_ms:.0f} ms", style="dim")
        if round_info.cached:
            head.append("  (cached)", style="dim")
        self.console.print(head)
        if round_info.text:
            self.console.print(Text("  text: ").append(Text(round_info.text[:2000], style="italic")))
        if not calls:
            self.console.print(Text("  no tool call", style="yellow"))
        for call in calls:
            self._print_call(call)
        if round_info.nudge:
            self.console.print(Text("  harness nudge: ", style="dim").append(round_info.nudge))

    def _print_call(self, call: TraceCall) -> None:
        line = Text("  → ")
        line.append(call.tool, style="bold cyan")
        if call.parse_error:
            line.append(f"  arguments unparsable ({call.parse_error}): ", style="red")
            line.append(call.arguments_raw[:400])
        else:
            line.append(" " + json_line(call.arguments))
        self.console.print(line)
        schema = Text("    schema: ")
        if not call.known_tool:
            schema.append("unknown tool", style="red")
        elif call.schema_valid:
            schema.append("valid", style="green")
        else:
            schema.append("invalid " + "; ".join(call.schema_errors)[:600], style="red")
        self.console.print(schema)
        status = call.execution
        style = {"ok": "green", "error": "red", "rejected": "red"}.get(status, "yellow")
        result = Text("    execution: ").append(status, style=style)
        if call.error:
            result.append("  " + call.error[:600], style="red")
        elif status == "ok":
            result.append("  result " + json_line(call.result))
        self.console.print(result)

    def on_case_end(self, record: CaseRecord) -> None:
        if record.status == "error":
            err = record.error
            text = f"ERROR {err.type}: {err.message}" if err is not None else "ERROR"
            self.console.print(Text(text, style="bold red"))
            return
        trace = record.trace
        if trace.final_text:
            self.console.print(Text("final text: ", style="bold").append(trace.final_text[:2000]))
        for tier, verdict in record.verdicts.items():
            ok = verdict.passed
            line = Text(f"{tier}: ", style="bold")
            line.append("PASS" if ok else "FAIL", style="bold green" if ok else "bold red")
            if verdict.partial is not None:
                line.append(f"  partial {verdict.partial:.2f} (diagnostic)", style="dim")
            self.console.print(line)
            for reason in verdict.reasons:
                self.console.print(Text(f"    {reason.code}: ", style="red").append(reason.message))
        self.console.print(Text(f"{record.duration_ms:.0f} ms, stop: {trace.stop_reason}", style="dim"))

    def on_run_end(self, summary: dict[str, Any]) -> None:
        self.console.rule(Text("run finished"))
