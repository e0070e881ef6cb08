"""τ² results files in: reading what ``tau2 run`` saves and turning each simulation into a callbench
record of the matching ``tau2:DOMAIN`` case.

Both storage forms are read: one JSON file (``info``, ``tasks``, ``simulations``), and a results
folder (``results.json`` with ``info`` and ``tasks``, one ``simulations/<id>.json`` per simulation).
A simulation's messages map back onto a trace: each agent message is a round (its text and its calls,
each call's tool message its result or error), the user's messages and its calls on its own tools are
the trace's user turns, placed after the round they answer, and the termination reason is the stop
reason. The messages the case itself starts from (the task's message history, or τ²'s greeting) are
not rounds and are left out. No end state is recorded: ``tau2-reward`` replays the calls.

Every problem with the input is one :class:`~callbench.plugin.UserError` naming the file and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from callbench.benchmarks.tau2 import trajectory as tj
from callbench.benchmarks.tau2.data import DOMAINS
from callbench.plugin import Case, CaseRecord, Trace, UserError

RESULTS_FILE = "results.json"
SIMULATIONS_DIR = "simulations"
HARNESS_MODE = "tau2-results"
"""Harness mode of imported records: the conversations ran in τ²'s orchestrator (or were exported by
callbench), never pooled with conversations callbench's loop played."""

STOP_REASONS = {
    "user_stop": "user_stop",
    "agent_stop": "agent_stop",
    "max_steps": "max_rounds",
    "context_window_exceeded": "context_overflow",
}
"""τ² termination reasons with a callbench stop reason of their own; any other is ``error``
(``too_many_errors``, ``agent_error``, ``user_error``, ``judge_stop``): a premature end."""
INFRASTRUCTURE = ("infrastructure_error",)
"""Termination reasons of a simulation that never finished for want of a service: error records,
as τ² itself leaves them out of its figures (so are simulations marked ``skipped``)."""


@dataclass
class Simulation:
    """One simulation as read, with where it came from (for error messages)."""

    file: Path
    index: int | None
    """Its place in the file's ``simulations`` (``None``: a file of its own, in a results folder)."""
    data: dict[str, Any]

    @property
    def task_id(self) -> str:
        return str(self.data["task_id"])

    @property
    def where(self) -> str:
        """The simulation, for messages: ``FILE: simulations[i]`` or its own file."""
        return f"{self.file}: simulations[{self.index}]" if self.index is not None else str(self.file)

    def at(self, name: str) -> str:
        """One of its fields, for messages: ``FILE: simulations[i].NAME`` or ``FILE: NAME``."""
        return f"{self.where}.{name}" if self.index is not None else f"{self.file}: {name}"


@dataclass
class ResultsFile:
    """A τ² results file or folder: its ``info``, its domain and its simulations."""

    path: Path
    info: dict[str, Any]
    domain: str
    simulations: list[Simulation] = field(default_factory=list)


def read_results(path: Path) -> ResultsFile:
    """Read a τ² results file (``results.json``) or results folder (with ``simulations/``)."""
    meta_path, folder = _locate(path)
    meta = _load_json(meta_path)
    if not isinstance(meta, dict):
        raise UserError(f"{meta_path}: not τ² results (a JSON {type(meta).__name__}, not an object)")
    if "simulations" in meta:
        simulations = _inline_simulations(meta_path, meta["simulations"])
    elif folder is not None:
        simulations = _folder_simulations(folder)
        _check_index(meta_path, meta.get("simulation_index"), simulations)
    else:
        raise UserError(
            f"{meta_path}: not τ² results: no `simulations` (τ² saves info, tasks and simulations, "
            f"or a {RESULTS_FILE} beside a {SIMULATIONS_DIR}/ folder)"
        )
    domain = _domain(meta_path, meta.get("info"))
    for simulation in simulations:
        check_simulation(simulation)
    return ResultsFile(meta_path, meta["info"], domain, simulations)


def _locate(path: Path) -> tuple[Path, Path | None]:
    """The file holding ``info`` and the ``simulations/`` folder beside it (``None``: none)."""
    if path.is_dir():
        meta = path / RESULTS_FILE
        if not meta.is_file():
            raise UserError(
                f"{path}: no {RESULTS_FILE} in this folder (a τ² results folder holds "
                f"{RESULTS_FILE} and {SIMULATIONS_DIR}/)"
            )
        path = meta
    elif not path.is_file():
        raise UserError(f"{path}: no such file or folder (give a τ² {RESULTS_FILE} or its results folder)")
    folder = path.parent / SIMULATIONS_DIR
    return path, folder if folder.is_dir() else None


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not JSON ({exc.msg}); τ² results are JSON") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not JSON (not UTF-8 text); τ² results are JSON") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror})") from None


def _inline_simulations(path: Path, raw: Any) -> list[Simulation]:
    if not isinstance(raw, list):
        raise UserError(f"{path}: simulations: a {type(raw).__name__}, not a list of simulations")
    return [Simulation(path, i, _object(item, f"{path}: simulations[{i}]")) for i, item in enumerate(raw)]


def _folder_simulations(folder: Path) -> list[Simulation]:
    return [
        Simulation(file, None, _object(_load_json(file), str(file))) for file in sorted(folder.glob("*.json"))
    ]


def _check_index(path: Path, index: Any, simulations: list[Simulation]) -> None:
    """A results folder's ``simulation_index`` must list exactly its simulation files (as τ² checks)."""
    if not isinstance(index, list):
        return
    listed = {str(e.get("id")) for e in index if isinstance(e, dict)}
    present = {s.file.stem for s in simulations}
    if listed - present:
        raise UserError(
            f"{path}: simulation_index: lists {few_names(listed - present)} "
            f"with no file in {SIMULATIONS_DIR}/"
        )
    if present - listed:
        raise UserError(
            f"{path}: simulation_index: does not list {SIMULATIONS_DIR}/ {few_names(present - listed)}"
        )


def few_names(names: Iterable[str], limit: int = 5) -> str:
    """Sorted names, the first ``limit`` of them and how many more."""
    shown = sorted(names)
    return ", ".join(shown[:limit]) + (f" and {len(shown) - limit} more" if len(shown) > limit else "")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UserError(f"{where}: a {type(value).__name__}, not a simulation (an object)")
    return value


def _domain(path: Path, info: Any) -> str:
    field_name = "info.environment_info.domain_name"
    environment = info.get("environment_info") if isinstance(info, dict) else None
    domain = environment.get("domain_name") if isinstance(environment, dict) else None
    if not isinstance(domain, str) or not domain:
        raise UserError(f"{path}: {field_name}: missing (τ² results name their domain there)")
    if domain not in DOMAINS:
        raise UserError(
            f"{path}: {field_name}: unknown τ² domain {domain!r} (callbench reads {', '.join(DOMAINS)})"
        )
    return domain


def check_simulation(simulation: Simulation) -> None:
    """Refuse a simulation without the fields the import reads (one line naming the field)."""
    data = simulation.data
    for name, kinds in (("task_id", (str, int)), ("termination_reason", (str,)), ("messages", (list,))):
        if name not in data:
            raise UserError(f"{simulation.at(name)}: missing")
        if not isinstance(data[name], kinds) or isinstance(data[name], bool):
            raise UserError(
                f"{simulation.at(name)}: a {type(data[name]).__name__}, not a {kinds[0].__name__}"
            )


def stop_reason(termination: str) -> str:
    """callbench's stop reason for a τ² termination reason."""
    return STOP_REASONS.get(termination, "error")


def is_infrastructure_failure(simulation: Simulation) -> bool:
    """True for a simulation τ² marks as never finished for want of a service (an error record)."""
    data = simulation.data
    return bool(data.get("skipped")) or data["termination_reason"] in INFRASTRUCTURE


def imported_trace(case: Case, simulation: Simulation, model: str | None = None) -> Trace:
    """The trace of one simulation of ``case``'s task (``model``: the agent's, for the rounds)."""
    data = simulation.data
    messages = _without_start(case, simulation)
    builder = _TraceBuilder(case, simulation, _time(data.get("start_time")), model)
    for index, message in messages:
        builder.add(index, message)
    return builder.trace(stop_reason(data["termination_reason"]))


def _without_start(case: Case, simulation: Simulation) -> list[tuple[int, dict[str, Any]]]:
    """The messages after the case's own start (its history or greeting), with their indexes."""
    messages = simulation.data["messages"]
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise UserError(f"{simulation.at(f'messages[{index}]')}: not a message (an object with a role)")
    start = tj.messages(case, Trace())
    if len(messages) >= len(start) and all(
        _same_message(a, b) for a, b in zip(messages, start, strict=False)
    ):
        return list(enumerate(messages))[len(start) :]
    if case.messages:
        raise UserError(
            f"{simulation.at('messages')}: do not open with the message history of task {case.id!r} "
            "(another version of the task?)"
        )
    return list(enumerate(messages))


def _same_message(ours: dict[str, Any], start: dict[str, Any]) -> bool:
    if ours.get("role") != start["role"] or (ours.get("content") or None) != (start.get("content") or None):
        return False
    raw = ours.get("tool_calls")
    calls = (
        [(c.get("name"), c.get("arguments")) for c in raw if isinstance(c, dict)]
        if isinstance(raw, list)
        else []
    )
    return calls == [(c["name"], c["arguments"]) for c in start.get("tool_calls") or []]


def _time(value: Any) -> float:
    """A τ² ISO timestamp as Unix time (0 when absent or unreadable)."""
    if not isinstance(value, str):
        return 0.0
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return 0.0


class _TraceBuilder:
    """Walks one simulation's messages into a trace's rounds, calls and user turns."""

    def __init__(self, case: Case, simulation: Simulation, started: float, model: str | None) -> None:
        self.case, self.simulation, self.started, self.model = case, simulation, started, model
        self.rounds: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.turns: list[dict[str, Any]] = []
        self.turn: dict[str, Any] | None = None
        self.waiting: dict[tuple[str, str], dict[str, Any]] = {}
        """Calls without their tool message yet, by (requestor, call id)."""

    def add(self, index: int, message: dict[str, Any]) -> None:
        where = self.simulation.at(f"messages[{index}]")
        role = message["role"]
        if role == "assistant":
            self._assistant(where, message)
        elif role == "user":
            self._user(where, message)
        elif role == "tool":
            for offset, part in enumerate(message.get("tool_messages") or [message]):
                self._tool(f"{where}.tool_messages[{offset}]" if "tool_messages" in message else where, part)
        elif role != "system":
            raise UserError(f"{where}.role: {role!r} is not a τ² role (assistant, user, tool, system)")

    def _assistant(self, where: str, message: dict[str, Any]) -> None:
        self._end_turn()
        index = len(self.rounds) + 1
        round_info: dict[str, Any] = {
            "index": index,
            "started_at": self.started,
            "text": _text(where, message),
            "call_ids": [],
            "model": self.model,
        }
        usage = _usage(message.get("usage"))
        if usage is not None:
            round_info["usage"] = usage
        for offset, call in enumerate(_calls(where, message)):
            call_id = call["id"] or f"call_{len(self.calls) + 1}"
            self._expect(f"{where}.tool_calls[{offset}]", "assistant", call_id)
            record = {
                "index": len(self.calls),
                "call_id": call_id,
                "round": index,
                "tool": call["name"],
                "arguments_raw": json.dumps(call["arguments"], ensure_ascii=False),
                "arguments": call["arguments"],
                "execution": "not_executed",
            }
            self.calls.append(record)
            self.waiting[("assistant", call_id)] = record
            round_info["call_ids"].append(call_id)
        self.rounds.append(round_info)

    def _user(self, where: str, message: dict[str, Any]) -> None:
        if self.turn is None:
            self.turn = {"after_round": len(self.rounds), "text": "", "calls": []}
        calls = _calls(where, message)
        for offset, call in enumerate(calls):
            call_id = call["id"] or f"user_call_{len(self.turn['calls']) + 1}"
            self._expect(f"{where}.tool_calls[{offset}]", "user", call_id)
            record = {"call_id": call_id, "tool": call["name"], "arguments": call["arguments"], "ok": False}
            self.turn["calls"].append(record)
            self.waiting[("user", call_id)] = record
        text = _text(where, message)
        if text or not calls:
            self.turn["text"] = text
        if not calls:
            self._end_turn()

    def _tool(self, where: str, message: Any) -> None:
        if not isinstance(message, dict):
            raise UserError(f"{where}: not a tool message (an object)")
        requestor = message.get("requestor") or "assistant"
        call_id = message.get("id")
        if not isinstance(call_id, str) or (requestor, call_id) not in self.waiting:
            raise UserError(f"{where}.id: {call_id!r} answers no earlier {requestor} call")
        content = message.get("content")
        text = content if isinstance(content, str) else "" if content is None else json.dumps(content)
        call = self.waiting.pop((requestor, call_id))
        failed = bool(message.get("error"))
        if requestor == "user":
            call.update(ok=not failed, result=None if failed else text)
            if failed:
                call["error"] = text.removeprefix("Error: ")
        else:
            call.update(execution="error" if failed else "ok", result=None if failed else text)
            if failed:
                call["error"] = text.removeprefix("Error: ")

    def _expect(self, where: str, requestor: str, call_id: str) -> None:
        if (requestor, call_id) in self.waiting:
            raise UserError(f"{where}.id: {call_id!r} is already the id of an unanswered call")

    def _end_turn(self) -> None:
        if self.turn is None:
            return
        user = self.case.user
        self.turn["stop"] = bool(user is not None and user.is_stop(self.turn["text"]))
        self.turns.append(self.turn)
        self.turn = None

    def trace(self, stop: str) -> Trace:
        self._end_turn()
        usage = [r["usage"] for r in self.rounds if "usage" in r]
        return Trace.model_validate(
            {
                "rounds": self.rounds,
                "calls": self.calls,
                "final_text": self.rounds[-1]["text"] if self.rounds else "",
                "stop_reason": stop,
                "usage": {k: sum(u[k] for u in usage) for k in ("input_tokens", "output_tokens")},
                "user_turns": self.turns,
            }
        )


def _text(where: str, message: dict[str, Any]) -> str:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    raise UserError(f"{where}.content: a {type(content).__name__}, not text")


def _calls(where: str, message: dict[str, Any]) -> list[dict[str, Any]]:
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise UserError(f"{where}.tool_calls: a {type(raw).__name__}, not a list of calls")
    out = []
    for offset, call in enumerate(raw):
        at = f"{where}.tool_calls[{offset}]"
        if not isinstance(call, dict):
            raise UserError(f"{at}: not a call (an object with a name and arguments)")
        name, arguments, call_id = call.get("name"), call.get("arguments"), call.get("id") or ""
        if not isinstance(name, str) or not name:
            raise UserError(f"{at}.name: missing")
        if not isinstance(arguments, dict):
            raise UserError(f"{at}.arguments: a {type(arguments).__name__}, not an object")
        if not isinstance(call_id, str):
            raise UserError(f"{at}.id: a {type(call_id).__name__}, not text")
        out.append({"id": call_id, "name": name, "arguments": arguments})
    return out


def _usage(raw: Any) -> dict[str, int] | None:
    """A message's token usage (τ² keeps the provider's ``prompt_tokens``/``completion_tokens``)."""
    if not isinstance(raw, dict):
        return None
    tokens = {"input_tokens": raw.get("prompt_tokens"), "output_tokens": raw.get("completion_tokens")}
    if not any(type(v) is int for v in tokens.values()):
        return None
    return {k: v if type(v) is int else 0 for k, v in tokens.items()}


def imported_record(
    case: Case,
    simulation: Simulation,
    trial: int,
    harness_mode: str,
    simulator: dict[str, Any] | None = None,
    model: str | None = None,
) -> CaseRecord:
    """One simulation as a callbench record of ``case`` (unscored; an error record when τ² says it
    never finished for want of a service). ``model``: the agent's, named on its rounds."""
    data = simulation.data
    record: dict[str, Any] = {
        "key": case.key,
        "suite": case.suite,
        "case_id": case.id,
        "category": case.category,
        "trial": trial,
        "instruction": case.prompt_text(),
        "prompt_sha256": case.prompt_sha256(),
        "expected_tools": case.expected_tools(),
        "expected": [s.model_dump(mode="json") for s in case.expected],
        "harness_mode": harness_mode,
        "started_at": _time(data.get("start_time")),
        "duration_ms": float(data["duration"]) * 1000 if _number(data.get("duration")) else 0.0,
        "metadata": _metadata(simulation),
        "simulator": simulator,
    }
    if is_infrastructure_failure(simulation):
        reason = "skipped" if data.get("skipped") else data["termination_reason"]
        record.update(status="error", error={"type": f"tau2:{reason}", "message": f"τ² reports {reason}"})
    else:
        record["trace"] = imported_trace(case, simulation, model)
    return CaseRecord.model_validate(record)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _metadata(simulation: Simulation) -> dict[str, Any]:
    """What the record keeps of the simulation: its id, and the reward the file recorded."""
    data = simulation.data
    reward_info = data.get("reward_info")
    recorded = reward_info.get("reward") if isinstance(reward_info, dict) else None
    out: dict[str, Any] = {"tau2_simulation_id": str(data.get("id", "")), "tau2_source": simulation.where}
    if isinstance(recorded, int | float) and not isinstance(recorded, bool):
        out["tau2_recorded_reward"] = float(recorded)
    return out
