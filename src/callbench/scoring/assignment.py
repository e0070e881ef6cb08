"""Maximum-gain assignment of rows to columns, in pure Python.

The scorers pair expected call instances with observed calls by solving a small rectangular
assignment problem. This module solves it with the shortest augmenting path method of

    D. F. Crouse, "On implementing 2D rectangular assignment algorithms", IEEE Transactions on
    Aerospace and Electronic Systems 52(4):1679-1696, 2016 (pages 1685-1686),

the method behind ``scipy.optimize.linear_sum_assignment``, with the same order of work: costs are
the negated gains as they are (no shift to non-negative values), rows are augmented in order, the
column scan runs over the unvisited columns last-to-first with removal by swapping in the last, ties
between equally short paths go to a free column, and a matrix with more rows than columns is solved
transposed. Every arithmetic step is the same double-precision operation in the same order, so the
pairs chosen, ties included, are those scipy chooses (``tests/scoring/test_assignment.py`` checks it
against scipy on tie-heavy random matrices).

Why not scipy itself: importing ``scipy.optimize`` costs about 0.45 s of CPU, which every run paid at
start-up for matrices that are almost always a few cells (issue 26); in Python they cost microseconds.
"""

from __future__ import annotations

import math


def max_gain_assignment(gain: list[list[float]]) -> list[tuple[int, int]]:
    """Pairs ``(row, column)`` of an assignment with the largest total gain.

    ``gain`` is a rectangular matrix (a list of equal-length rows of finite floats). Every row is
    paired when there are no more rows than columns, otherwise every column; pairs come sorted by row.
    """
    rows = len(gain)
    columns = len(gain[0]) if rows else 0
    if rows == 0 or columns == 0:
        return []
    if rows <= columns:
        cost = [[-value for value in row] for row in gain]
        return list(enumerate(_min_cost_columns(cost)))
    # more rows than columns: solve the transpose (columns as rows), then sort the pairs by row
    cost = [[-gain[r][c] for r in range(rows)] for c in range(columns)]
    row_of_column = _min_cost_columns(cost)
    return sorted((row, column) for column, row in enumerate(row_of_column))


def _min_cost_columns(cost: list[list[float]]) -> list[int]:
    """For each row of ``cost`` (no more rows than columns), the column a minimum-cost assignment
    gives it."""
    rows, columns = len(cost), len(cost[0])
    if any(value != value or value == -math.inf for row in cost for value in row):
        raise ValueError("assignment matrix holds NaN or an infinite gain")
    u = [0.0] * rows  # dual variable of each row
    v = [0.0] * columns  # dual variable of each column
    column_of_row = [-1] * rows
    row_of_column = [-1] * columns
    for current in range(rows):
        path, sink, min_value, visited_rows, visited_columns, path_costs = _shortest_augmenting_path(
            cost, u, v, row_of_column, current
        )
        u[current] += min_value
        for row in range(rows):
            if visited_rows[row] and row != current:
                u[row] += min_value - path_costs[column_of_row[row]]
        for column in range(columns):
            if visited_columns[column]:
                v[column] -= min_value - path_costs[column]
        # Flip the path: every column on it takes the row that reached it.
        column = sink
        while True:
            row = path[column]
            row_of_column[column] = row
            column_of_row[row], column = column, column_of_row[row]
            if row == current:
                break
    return column_of_row


def _shortest_augmenting_path(
    cost: list[list[float]], u: list[float], v: list[float], row_of_column: list[int], start: int
) -> tuple[list[int], int, float, list[bool], list[bool], list[float]]:
    """Dijkstra-like search from row ``start`` to the nearest free column, in reduced costs.

    Returns the predecessor row of each column, the free column reached (the sink), the path's
    length, which rows and columns the search visited, and each column's shortest reduced cost.
    """
    rows, columns = len(cost), len(cost[0])
    path = [-1] * columns
    path_costs = [math.inf] * columns
    visited_rows = [False] * rows
    visited_columns = [False] * columns
    remaining = list(range(columns - 1, -1, -1))  # scanned last column first, as Crouse's code does
    min_value = 0.0
    row = start
    while True:
        visited_rows[row] = True
        best_position, lowest = -1, math.inf
        row_costs, row_dual = cost[row], u[row]
        for position, column in enumerate(remaining):
            reduced = min_value + row_costs[column] - row_dual - v[column]
            if reduced < path_costs[column]:
                path[column] = row
                path_costs[column] = reduced
            candidate = path_costs[column]
            # Among equal costs prefer a free column: the path ends there.
            if candidate < lowest or (candidate == lowest and row_of_column[column] == -1):
                lowest, best_position = candidate, position
        if best_position < 0 or math.isinf(lowest):
            raise ValueError("assignment matrix is infeasible (infinite costs)")
        min_value = lowest
        column = remaining[best_position]
        visited_columns[column] = True
        remaining[best_position] = remaining[-1]
        remaining.pop()
        if row_of_column[column] == -1:
            return path, column, min_value, visited_rows, visited_columns, path_costs
        row = row_of_column[column]
