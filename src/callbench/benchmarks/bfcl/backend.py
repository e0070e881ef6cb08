"""BFCL's multi-turn backend classes (file system, messaging, trading...) from bfcl-eval.

The classes ship as Python sources in the installed ``bfcl-eval`` package; importing them needs
no heavy dependency.  A :class:`World` holds one instance per involved class, loaded with the
entry's initial configuration, and executes calls with BFCL's conventions: results become
strings (dicts as JSON), failures become ``"Error during execution: ..."``.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
from typing import Any

from callbench.plugin import ToolOutcome, UserError

BACKEND_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
STATELESS = ("MathAPI",)
BLOCKED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
ERROR_PREFIX = "Error during execution: "


def call_outcome(text: str, turn: int) -> ToolOutcome:
    """What a backend's answer ``text`` to one call is for the loop: BFCL's error text is a failed
    call (the model reads it either way), tagged with the user turn it belongs to."""
    failed = text.startswith(ERROR_PREFIX)
    return ToolOutcome(
        ok=not failed,
        result=text,
        error=text if failed else None,
        content=text,
        annotations={"bfcl_turn": turn},
    )


def backend_class(class_name: str) -> type:
    """The backend class ``class_name`` from the installed bfcl-eval package."""
    if class_name not in CLASS_MODULES:
        raise UserError(f"bfcl: unknown backend class {class_name!r}")
    try:
        module = importlib.import_module(f"{BACKEND_PACKAGE}.{CLASS_MODULES[class_name]}")
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("bfcl_eval"):
            raise UserError(
                f"bfcl multi-turn backend {class_name} needs {exc.name!r}: pip install 'callbench[bfcl]'"
            ) from exc
        raise UserError(
            "bfcl multi-turn needs the bfcl-eval package: pip install --no-deps bfcl-eval"
        ) from exc
    return getattr(module, class_name)


class World:
    """Fresh backend instances for one entry, with BFCL's method lookup and result formatting."""

    def __init__(self, involved: list[str], initial_config: dict[str, Any], long_context: bool) -> None:
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for class_name in involved:
            instance = backend_class(class_name)()
            if class_name not in STATELESS:
                instance._load_scenario(
                    copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context
                )
            self.instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = method

    def call(self, name: str, args: tuple = (), kwargs: dict[str, Any] | None = None) -> str:
        """Execute one call; never raises (errors are returned as BFCL's error string)."""
        if name in BLOCKED:
            return f"{ERROR_PREFIX}Function call {name} is not allowed."
        method = self.methods.get(name)
        if method is None:
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        # Fresh copies, as BFCL's eval of a call string creates: backends keep references to
        # list arguments and mutate them later, which must not alter the recorded call.
        args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs or {})
        try:
            return format_result(method(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - a backend failure is a result the model sees
            return f"{ERROR_PREFIX}{exc}"

    def state(self) -> dict[str, dict[str, Any]]:
        """Public attributes of every stateful instance (what BFCL's state check compares)."""
        return {name: public_attributes(instance) for name, instance in self.instances.items()}


def public_attributes(instance: Any) -> dict[str, Any]:
    """An instance's attributes whose names do not start with ``_``."""
    return {key: value for key, value in vars(instance).items() if not key.startswith("_")}


def format_result(value: Any) -> str:
    """BFCL's formatting of a backend return value."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def parse_call(text: str) -> tuple[str, tuple, dict[str, Any]]:
    """Parse a ground-truth call string such as ``mv(source='a', destination='b')``."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise UserError(f"bfcl: cannot read ground-truth call {text!r}")
    args = tuple(ast.literal_eval(arg) for arg in node.args)
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    return node.func.id, args, kwargs
