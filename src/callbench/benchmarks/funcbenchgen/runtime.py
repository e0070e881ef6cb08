"""Execution semantics of DAG tasks: knowledge per type, failure classes, silent wrong values.

The runtime is pure and deterministic: a fresh runtime fed the same calls gives the same results,
so a scorer can replay a trace offline and recover every failure class.

Checks per call, in order (the official order):

1. ``unknown_function``: the name is not a function of the task.
2. ``invalid_arguments``: the argument text is not a JSON object (official "Tool input was invalid").
3. ``wrong_arg_count``: a required parameter is missing or an unexpected one is given.
4. Per argument, in the order the model gave them: ``not_yet_known`` when its type has not been
   legitimately obtained, else ``incorrect_value`` when the value differs from the true one.

In ``silent`` mode (default, the paper's) a failing argument check still "succeeds" with a random
wrong value; in ``explicit`` mode it returns an error.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Literal

from callbench.benchmarks.funcbenchgen.tasks import DagTask, NodeKind
from callbench.plugin import sha256_of

FailureClass = Literal[
    "unknown_function", "invalid_arguments", "wrong_arg_count", "not_yet_known", "incorrect_value"
]
FAILURE_CLASSES: tuple[str, ...] = (
    "unknown_function",
    "invalid_arguments",
    "wrong_arg_count",
    "not_yet_known",
    "incorrect_value",
)
Mode = Literal["silent", "explicit"]
Cause = Literal["premature", "poisoned"]
REMINDER_HEAD = "\nAs a reminder, here are the variable values that are currently known."
GENERIC_ERROR = "Error occurred."


@dataclass(frozen=True)
class RuntimeConfig:
    """How calls are answered."""

    mode: Mode = "silent"
    restate: bool = False
    """Append the reminder of every variable value shown so far to each value result."""
    detailed_errors: bool = False
    """Say what went wrong instead of the official "Error occurred."."""
    json_results: bool = True
    """Send ``json.dumps`` of the result text, as the official loop does (quotes and ``\\n``)."""


@dataclass(frozen=True)
class CallResult:
    """What one call returned and how it is classed."""

    content: str
    """The tool message exactly as sent to the model."""
    text: str
    """The result text before JSON encoding."""
    kind: NodeKind | None
    """Node kind of the called function (None for an unknown function)."""
    failure: FailureClass | None = None
    cause: Cause | None = None
    """For ``not_yet_known``: ``poisoned`` when the argument reuses a wrong value shown earlier."""
    argument: str | None = None
    """The argument that failed the value checks."""
    value: int | None = None
    """The output value shown (true or wrong); None for an error."""

    @property
    def ok(self) -> bool:
        """True when the call returned the true value."""
        return self.failure is None

    def annotations(self) -> dict[str, Any]:
        """Per-call facts recorded on the trace."""
        return {
            "node_kind": self.kind,
            "failure": self.failure,
            "cause": self.cause,
            "argument": self.argument,
            "value": self.value,
        }


class DagRuntime:
    """One episode of a task: tracks known types and the variables shown to the agent."""

    def __init__(self, task: DagTask, config: RuntimeConfig | None = None, *, seed: int = 0) -> None:
        self.task = task
        self.config = config or RuntimeConfig()
        self.nodes = task.node_map()
        self.types = task.variable_types()
        self.known: set[str] = set(task.initial_known_types)
        self.revealed: dict[str, int] = dict(task.prompt_variables)
        self.fakes: dict[str, set[int]] = {}
        self.rng = random.Random(int(sha256_of({"task": task.id, "executor": seed})[:16], 16))

    def call(self, name: str, arguments: Any) -> CallResult:
        """Execute one call; ``arguments`` is the parsed object (anything else is invalid)."""
        node = self.nodes.get(name)
        if node is None:
            return self._error(None, "unknown_function", f"No function called {name} in graph.")
        if not isinstance(arguments, dict):
            return self._error(node.kind, "invalid_arguments", f"Arguments of {name} are not a JSON object.")
        missing = [p for p in node.inputs if p not in arguments]
        extra = [a for a in arguments if a not in node.inputs]
        if missing or extra:
            detail = f"missing {missing}" if missing else f"unexpected {extra}"
            return self._error(node.kind, "wrong_arg_count", f"Function {name}: {detail}.")
        for arg, value in arguments.items():
            failure = self._check(arg, value)
            if failure is not None:
                return self._wrong(name, arg, value, failure)
        return self._value(name, self.task.values[node.output_type], None, None, None)

    def _check(self, arg: str, value: Any) -> FailureClass | None:
        kind = self.types[arg]
        if kind not in self.known:
            return "not_yet_known"
        if isinstance(value, bool) or not isinstance(value, int | float) or value != self.task.values[kind]:
            return "incorrect_value"
        return None

    def _wrong(self, name: str, arg: str, value: Any, failure: FailureClass) -> CallResult:
        node = self.nodes[name]
        cause: Cause | None = None
        if failure == "not_yet_known":
            shown_fake = isinstance(value, int) and value in self.fakes.get(self.types[arg], set())
            cause = "poisoned" if shown_fake else "premature"
        if self.config.mode == "explicit":
            detail = "is not yet known" if failure == "not_yet_known" else "is incorrect"
            return self._error(node.kind, failure, f"The value of variable {arg} {detail}.", cause, arg)
        true_value = self.task.values[node.output_type]
        fake = self.rng.randrange(1000)
        while fake == true_value:
            fake = self.rng.randrange(1000)
        self.fakes.setdefault(node.output_type, set()).add(fake)
        return self._value(name, fake, failure, cause, arg)

    def _value(
        self, name: str, value: int, failure: FailureClass | None, cause: Cause | None, arg: str | None
    ) -> CallResult:
        node = self.nodes[name]
        text = f"Variable {node.output} = {value}."
        if self.config.restate:
            # The reminder lists what was shown *before* this result, as in the official loop.
            text += self.reminder()
        self.revealed[node.output] = value
        if failure is None:
            self.known.add(node.output_type)
        return CallResult(self._encode(text), text, node.kind, failure, cause, arg, value)

    def reminder(self) -> str:
        """The state-restatement suffix: every variable shown so far with its type and value."""
        lines = [f"\nVariable {var} ({self.types[var]}) = {value}" for var, value in self.revealed.items()]
        return REMINDER_HEAD + "".join(lines)

    def _error(
        self,
        kind: NodeKind | None,
        failure: FailureClass,
        detail: str,
        cause: Cause | None = None,
        arg: str | None = None,
    ) -> CallResult:
        text = f"Error: {detail}" if self.config.detailed_errors else GENERIC_ERROR
        return CallResult(self._encode(text), text, kind, failure, cause, arg, None)

    def _encode(self, text: str) -> str:
        return json.dumps(text, ensure_ascii=False) if self.config.json_results else text
