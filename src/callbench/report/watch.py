"""``callbench run --case ID --watch``: print each round of a case as it happens.

Shows the offered tools, every call with its arguments, the schema verdict, the execution result,
and finally each tier's verdict with its reasons. All model text goes through ``rich.text.Text``
appends, so brackets in model output are never read as console markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from callbench.report.progress import _dump, json_line


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

    def on_run_start(self, header: Any, total: int) -> None:
        model = getattr(header, "model", None) or (header.get("model") if isinstance(header, Mapping) else "")
        mode = getattr(header, "harness_mode", None) or ""
        self.console.print(Text(f"watching {total} case run(s) · model {model} · harness mode {mode}", style="bold"))

    def on_case_start(self, case: Any, trial: int, offered: list[str]) -> None:
        self.console.rule(Text(f"{_case_key(case)}  trial {trial}"))
        instruction = getattr(case, "instruction", None) or _last_user_message(case)
        if instruction:
            self.console.print(Text("instruction: ", style="bold").append(Text(str(instruction), style="default")))
        tools = Text("offered tools: ", style="bold")
        tools.append(", ".join(offered) if offered else "(none)", style="cyan")
        self.console.print(tools)

    def on_round(self, case: Any, round_info: Any, calls: list[Any]) -> None:
        info = _dump(round_info)
        head = Text(f"round {info.get('index')}", style="bold")
        if info.get("latency_ms") is not None:
            head.append(f"  {info['latency_ms']:.0f} ms", style="dim")
        if info.get("cached"):
            head.append("  (cached)", style="dim")
        self.console.print(head)
        if info.get("text"):
            self.console.print(Text("  text: ").append(Text(str(info["text"])[:2000], style="italic")))
        if not calls:
            self.console.print(Text("  no tool call", style="yellow"))
        for call in calls:
            self._print_call(_dump(call))
        if info.get("nudge"):
            self.console.print(Text("  harness nudge: ", style="dim").append(str(info["nudge"])))

    def _print_call(self, call: dict[str, Any]) -> None:
        line = Text("  → ")
        line.append(str(call.get("tool")), style="bold cyan")
        if call.get("parse_error"):
            line.append(f"  arguments unparsable ({call['parse_error']}): ", style="red")
            line.append(str(call.get("arguments_raw", ""))[:400])
        else:
            line.append(" " + json_line(call.get("arguments")))
        self.console.print(line)
        schema = Text("    schema: ")
        if call.get("known_tool") is False:
            schema.append("unknown tool", style="red")
        elif call.get("schema_valid"):
            schema.append("valid", style="green")
        else:
            schema.append("invalid " + "; ".join(map(str, call.get("schema_errors") or []))[:600], style="red")
        self.console.print(schema)
        status = str(call.get("execution"))
        style = {"ok": "green", "error": "red", "rejected": "red"}.get(status, "yellow")
        result = Text("    execution: ").append(status, style=style)
        if call.get("error"):
            result.append("  " + str(call["error"])[:600], style="red")
        elif status == "ok":
            result.append("  result " + json_line(call.get("result")))
        self.console.print(result)

    def on_case_end(self, record: Any) -> None:
        rec = _dump(record)
        if rec.get("status") == "error":
            err = rec.get("error") or {}
            self.console.print(Text(f"ERROR {err.get('type', '')}: {err.get('message', '')}", style="bold red"))
            return
        trace = rec.get("trace") or {}
        if trace.get("final_text"):
            self.console.print(Text("final text: ", style="bold").append(str(trace["final_text"])[:2000]))
        for tier, verdict in (rec.get("verdicts") or {}).items():
            ok = verdict.get("passed")
            line = Text(f"{tier}: ", style="bold").append("PASS" if ok else "FAIL", style="bold green" if ok else "bold red")
            if verdict.get("partial") is not None:
                line.append(f"  partial {verdict['partial']:.2f} (diagnostic)", style="dim")
            self.console.print(line)
            for reason in verdict.get("reasons") or []:
                self.console.print(Text(f"    {reason.get('code')}: ", style="red").append(str(reason.get("message", ""))))
        self.console.print(Text(f"{rec.get('duration_ms', 0):.0f} ms, stop: {trace.get('stop_reason', '?')}", style="dim"))

    def on_run_end(self, summary: dict[str, Any]) -> None:
        self.console.rule(Text("run finished"))
