"""The starter world's tools against what a careless or hostile model sends."""

from __future__ import annotations

from pathlib import Path

import pytest

from callbench.benchmarks.starter.world import BINDINGS, INLINE_TOOLS, StarterWorld, calculate
from callbench.errors import ToolError


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("9**9**9", "more than 4096 bits"),  # would compute for hours in a worker thread
        ("2**4097", "more than 4096 bits"),
        ("(-8)**0.5", "not a real number"),  # a complex result would not serialise
        ("1e308*10", "not a finite number"),
        ("0**-1", "cannot be raised"),
        ("__import__('os')", "only numbers"),
        ("1 +", "cannot evaluate"),
    ],
)
def test_calculate_refuses_what_it_cannot_answer_with_a_tool_error(
    tmp_path: Path, expression: str, why: str
) -> None:
    with pytest.raises(ToolError, match=why):
        calculate(StarterWorld(tmp_path), expression)


def test_calculate_still_answers_ordinary_arithmetic(tmp_path: Path) -> None:
    world = StarterWorld(tmp_path)
    assert calculate(world, "2**10")["result"] == 1024
    assert calculate(world, "(-2)**3 + 7 % 4")["result"] == -5
    assert calculate(world, "2**-1")["result"] == 0.5


def test_only_in_memory_lookups_are_declared_inline() -> None:
    # File IO and work that grows with the model's input must stay in a worker thread.
    assert INLINE_TOOLS < set(BINDINGS)
    assert not {"calculate", "send_email", "write_file", "read_file"} & INLINE_TOOLS
