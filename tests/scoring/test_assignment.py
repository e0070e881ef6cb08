"""The pure-Python assignment solver chooses exactly the pairs scipy's ``linear_sum_assignment`` does.

The scorers' pairing of expected calls with observed calls used scipy until issue 26 (its import was
0.45 s of every run's start-up). A verdict must not change with the solver, so the property here is
equality of the chosen pairs, ties included, on matrices built the way the scorers build them
(few distinct gains, zero where a call cannot serve an instance) and on general random ones.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from callbench.scoring.assignment import max_gain_assignment


def scipy_pairs(gain: list[list[float]]) -> list[tuple[int, int]]:
    """scipy's maximum-gain pairs, as ``(row, column)`` sorted by row."""
    rows, columns = linear_sum_assignment(-np.array(gain, dtype=float).reshape(len(gain), -1))
    return sorted((int(r), int(c)) for r, c in zip(rows, columns, strict=True))


def scorer_gain(cells: list[list[int]]) -> list[list[float]]:
    """A gain matrix as ``best_assignment`` builds it: 0 (incompatible), or 100 plus 10 for matching
    arguments plus 1 for success, minus an order penalty of 1e-4 per position apart."""
    gain: list[list[float]] = []
    for i, row in enumerate(cells):
        out: list[float] = []
        for c, kind in enumerate(row):
            if kind == 0:
                out.append(0.0)
                continue
            value = 100.0 + (10.0 if kind >= 2 else 0.0) - abs(i - c) * 1e-4
            if kind == 3:
                value += 1.0
            out.append(value)
        gain.append(out)
    return gain


Cell = TypeVar("Cell", int, float)


def matrices(values: st.SearchStrategy[Cell]) -> st.SearchStrategy[list[list[Cell]]]:
    """Rectangular matrices of 1..9 rows and 1..9 columns."""
    return st.integers(1, 9).flatmap(
        lambda rows: st.integers(1, 9).flatmap(
            lambda columns: st.lists(
                st.lists(values, min_size=columns, max_size=columns), min_size=rows, max_size=rows
            )
        )
    )


@settings(max_examples=500, deadline=None)
@given(matrices(st.integers(0, 3)))
def test_scorer_shaped_matrices_pair_as_scipy(cells: list[list[int]]) -> None:
    gain = scorer_gain(cells)
    assert max_gain_assignment(gain) == scipy_pairs(gain)


@settings(max_examples=300, deadline=None)
@given(matrices(st.integers(0, 2)))
def test_constant_and_tied_matrices_pair_as_scipy(cells: list[list[int]]) -> None:
    # few distinct values and no order penalty: ties everywhere, where a different search order
    # would pick different pairs
    gain = [[float(value) for value in row] for row in cells]
    assert max_gain_assignment(gain) == scipy_pairs(gain)


@settings(max_examples=300, deadline=None)
@given(matrices(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)))
def test_general_float_matrices_pair_as_scipy(cells: list[list[float]]) -> None:
    assert max_gain_assignment(cells) == scipy_pairs(cells)


def test_known_answers() -> None:
    assert max_gain_assignment([]) == []
    assert max_gain_assignment([[5.0]]) == [(0, 0)]
    # the diagonal loses to the anti-diagonal when it gains less in total
    assert max_gain_assignment([[1.0, 3.0], [3.0, 1.0]]) == [(0, 1), (1, 0)]
    # more rows than columns: every column is paired, with its best row
    assert max_gain_assignment([[1.0], [4.0], [2.0]]) == [(1, 0)]
    # a constant matrix pairs along the diagonal (scipy's documented choice)
    assert max_gain_assignment([[0.0] * 3] * 3) == [(0, 0), (1, 1), (2, 2)]


def test_infinite_gain_is_refused() -> None:
    with pytest.raises(ValueError, match="infeasible"):
        max_gain_assignment([[-float("inf")], [-float("inf")]])
