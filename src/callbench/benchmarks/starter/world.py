"""The starter suite's small world: weather and contacts tables, a calendar, notes, files, an outbox.

Every function is a real implementation bound to a tool of the same name; state is fresh per case.
"""

from __future__ import annotations

import ast
import math
import operator
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from callbench.plugin import Case, ToolError

WEATHER = {
    "paris": (14.0, "light rain"),
    "tokyo": (22.5, "clear"),
    "oslo": (-3.0, "snow"),
    "rome": (18.0, "sunny"),
    "berlin": (9.5, "cloudy"),
    "lima": (19.0, "overcast"),
    "nairobi": (24.0, "clear"),
}
CONTACTS = {
    "alice martin": ("alice.martin@example.org", "+33 1 55 01 02 03"),
    "bob stone": ("bob@example.com", "+44 20 7946 0001"),
    "carol diaz": ("carol.diaz@example.net", "+34 91 123 45 67"),
}
LINEAR = {
    "km": ("length", 1000.0),
    "mi": ("length", 1609.344),
    "m": ("length", 1.0),
    "ft": ("length", 0.3048),
    "kg": ("mass", 1.0),
    "lb": ("mass", 0.45359237),
}
OPERATORS: dict[type[ast.operator | ast.unaryop], Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: lambda base, exponent: _power(base, exponent),
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Mod: operator.mod,
}


class StarterWorld:
    """Per-case state; ids are counters so results are the same on every run."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.events: dict[str, dict[str, Any]] = {}
        self.notes: dict[str, dict[str, str]] = {}
        self.outbox: list[dict[str, str]] = []
        self.synced = 0
        self._counter = 0

    def next_id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}_{self._counter}"

    def snapshot(self) -> dict[str, Any]:
        files = sorted(p.name for p in self.workdir.iterdir()) if self.workdir.exists() else []
        return {
            "events": self.events,
            "notes": self.notes,
            "outbox": self.outbox,
            "files": files,
            "synced": self.synced,
        }


def make_world(case: Case, workdir: Path) -> StarterWorld:
    return StarterWorld(workdir)


def get_weather(world: StarterWorld, city: str, unit: str = "celsius") -> dict[str, Any]:
    key = city.strip().lower()
    if key not in WEATHER:
        raise ToolError(f"no weather data for {city!r}")
    celsius, condition = WEATHER[key]
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 1)
    return {"city": city, "temperature": temperature, "unit": unit, "condition": condition}


def get_forecast(world: StarterWorld, city: str, days: int = 1) -> dict[str, Any]:
    today = get_weather(world, city)
    return {
        "city": city,
        "days": [
            {"day": d, "temperature": today["temperature"] + d * 0.5, "condition": today["condition"]}
            for d in range(1, days + 1)
        ],
    }


def convert_units(world: StarterWorld, value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    if abs(value) > sys.float_info.max:  # an integer of hundreds of digits: the schema's "number" admits it
        raise ToolError("the value is too large to convert")
    if {from_unit, to_unit} <= {"celsius", "fahrenheit"}:
        if from_unit == to_unit:
            return {"value": value, "unit": to_unit}
        out = value * 9 / 5 + 32 if from_unit == "celsius" else (value - 32) * 5 / 9
        return {"value": round(out, 4), "unit": to_unit}
    if from_unit not in LINEAR or to_unit not in LINEAR or LINEAR[from_unit][0] != LINEAR[to_unit][0]:
        raise ToolError(f"cannot convert {from_unit} to {to_unit}")
    return {"value": round(value * LINEAR[from_unit][1] / LINEAR[to_unit][1], 4), "unit": to_unit}


def calculate(world: StarterWorld, expression: str) -> dict[str, Any]:
    try:
        tree = ast.parse(expression, mode="eval")
        result = _eval(tree.body)
        if isinstance(result, float) and not math.isfinite(result):
            raise ValueError("the result is not a finite number")
        return {"expression": expression, "result": result}
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from None


MAX_RESULT_BITS = 4096
"""An integer power larger than this is refused: ``9**9**9`` would otherwise compute for hours."""


def _power(base: float, exponent: float) -> float:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1:
        if exponent * math.log2(abs(base)) > MAX_RESULT_BITS:
            raise ValueError(f"the result has more than {MAX_RESULT_BITS} bits")
    result = base**exponent
    if isinstance(result, complex):
        raise ValueError("the result is not a real number")
    return result


def _eval(node: ast.AST) -> float:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_eval(node.operand))
    raise ValueError("only numbers and + - * / ** % are allowed")


def get_contact(world: StarterWorld, name: str) -> dict[str, Any]:
    needle = name.strip().lower()
    hits = [k for k in CONTACTS if needle in k]
    if len(hits) != 1:
        raise ToolError(f"{'no' if not hits else 'several'} contacts match {name!r}")
    email, phone = CONTACTS[hits[0]]
    return {"name": hits[0].title(), "email": email, "phone": phone}


def send_email(world: StarterWorld, to: str, subject: str, body: str) -> dict[str, Any]:
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", to):
        raise ToolError(f"invalid recipient address {to!r}")
    message_id = world.next_id("msg")
    world.outbox.append({"id": message_id, "to": to, "subject": subject, "body": body})
    return {"message_id": message_id, "status": "sent"}


def create_event(
    world: StarterWorld,
    title: str,
    date: str | None = None,
    day: str | None = None,
    time: str | None = None,
    duration_minutes: int = 60,
) -> dict[str, Any]:
    event_id = world.next_id("evt")
    event = {
        "event_id": event_id,
        "title": title,
        "date": date or day,
        "time": time,
        "duration_minutes": duration_minutes,
    }
    world.events[event_id] = event
    return dict(event)


def list_events(world: StarterWorld, date: str | None = None) -> dict[str, Any]:
    return {"events": [e for e in world.events.values() if date is None or e["date"] == date]}


def delete_event(world: StarterWorld, event_id: str) -> dict[str, Any]:
    if event_id not in world.events:
        raise ToolError(f"no event with id {event_id!r}")
    del world.events[event_id]
    return {"deleted": event_id}


def sync_calendar(world: StarterWorld) -> dict[str, Any]:
    world.synced = len(world.events)
    return {"synced_events": world.synced}


def add_note(world: StarterWorld, title: str, body: str) -> dict[str, Any]:
    note_id = world.next_id("note")
    world.notes[note_id] = {"title": title, "body": body}
    return {"note_id": note_id}


def search_notes(world: StarterWorld, query: str) -> dict[str, Any]:
    words = query.lower().split()
    hits = [
        {"note_id": k, **v}
        for k, v in world.notes.items()
        if all(w in (v["title"] + " " + v["body"]).lower() for w in words)
    ]
    return {"notes": hits}


def write_file(world: StarterWorld, filename: str, content: str) -> dict[str, Any]:
    world.workdir.mkdir(parents=True, exist_ok=True)
    path = world.workdir / filename
    if filename in (".", "..") or os.path.isdir(path):  # the name pattern admits them: the model's mistake
        raise ToolError(f"{filename!r} names a folder, not a file")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"the content is not valid Unicode text (position {exc.start})") from None
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise ToolError(f"cannot write {filename!r}: {exc.strerror or exc}") from None
    return {"filename": filename, "bytes": len(data)}


def read_file(world: StarterWorld, filename: str) -> dict[str, Any]:
    path = world.workdir / filename
    if not path.is_file():
        raise ToolError(f"no file named {filename!r}")
    return {"filename": filename, "content": path.read_text(encoding="utf-8")}


BINDINGS = {
    f.__name__: f
    for f in (
        get_weather,
        get_forecast,
        convert_units,
        calculate,
        get_contact,
        send_email,
        create_event,
        list_events,
        delete_event,
        sync_calendar,
        add_note,
        search_notes,
        write_file,
        read_file,
    )
}

INLINE_TOOLS = frozenset(BINDINGS) - {"calculate", "send_email", "write_file", "read_file"}
"""Dictionary lookups over the in-memory world: they run on the event loop. The others stay in a
worker thread: file IO, and work whose cost grows with what the model sends (an arithmetic
expression, an address matched by a regular expression)."""
