"""Every built-in tool, driven with schema-valid arguments generated from its contract, answers or
raises a ``ToolError`` the model hears — never another exception (issue 33, item 3).

Any other exception out of a tool is a ``ToolBug``: an error record excluded from accuracy and re-run
by ``--resume`` forever. For a call the model may make (its arguments match the schema), that would
turn the model's bad call into infrastructure. Two drivers per tool, each on a fresh session (so one
call's state never explains another's failure):

* hypothesis-jsonschema draws argument objects from the tool's parameter schema (derandomised, so CI
  sees the same calls every time);
* every top-level string parameter of the first call drawn is replaced, in turn, by the strings
  that broke tools before: ``.`` and ``..`` (folders where a file was meant), a 2,000-character name,
  a lone surrogate, a bare ``/``; each replacement is kept only when the schema still accepts it.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

from callbench.errors import ToolBug
from callbench.executors.base import Executor
from callbench.suites.resolve import load_suite
from callbench.suites.suite import Suite
from callbench.tools.schema import validator_for

SUITES = ("starter", "genomics")
EDGE_STRINGS = (".", "..", "x" * 2000, "a\ud800b", "/")
EXAMPLES_PER_TOOL = 30
_loaded: dict[str, Suite] = {}
_numbers = itertools.count()


def suite_named(name: str) -> Suite:
    if name not in _loaded:
        _loaded[name] = load_suite(name)
    return _loaded[name]


def tools() -> list[tuple[str, str]]:
    return [(name, contract.name) for name in SUITES for contract in suite_named(name).registry]


def call(suite: Suite, tool: str, arguments: dict[str, Any], root: Path) -> None:
    """One call on a fresh session of the suite's own executor; a ToolBug fails the test."""
    executor = suite.executor
    assert isinstance(executor, Executor)
    workdir = root / f"case-{next(_numbers)}"
    session = executor.start(suite.cases[0], workdir, suite)
    try:
        asyncio.run(session.call(tool, arguments))
    except ToolBug as bug:
        pytest.fail(f"{suite.name}:{tool}({_short(arguments)}) raised {bug.error_type}: {bug}")
    finally:
        session.close()


def _short(arguments: dict[str, Any]) -> str:
    text = repr(arguments)
    return text if len(text) < 300 else text[:300] + "…"


@pytest.mark.parametrize(("suite_name", "tool"), tools())
def test_every_call_the_schema_admits_answers_or_raises_a_tool_error(
    suite_name: str, tool: str, tmp_path: Path
) -> None:
    suite = suite_named(suite_name)
    schema = suite.registry.get(tool).parameters
    drawn: list[dict[str, Any]] = []

    @settings(
        max_examples=EXAMPLES_PER_TOOL,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(schema))
    def drive(arguments: dict[str, Any]) -> None:
        drawn.append(arguments)
        call(suite, tool, arguments, tmp_path)

    drive()
    # The strings that broke tools before, each in place of one string parameter of the first call drawn
    # (kept only where the schema still admits it: the harness rejects the rest before any tool runs).
    validator = validator_for(schema)
    properties = schema.get("properties") or {}
    strings = [
        key for key, spec in properties.items() if isinstance(spec, dict) and spec.get("type") == "string"
    ]
    for key, edge in itertools.product(strings, EDGE_STRINGS):
        arguments = {**drawn[0], key: edge}
        if validator.is_valid(arguments):
            call(suite, tool, arguments, tmp_path)
